// Checkpoints as a training loop sees them: where a run starts (step 0, or
// a checkpoint's step once every task has its part of it), and after every
// step whether the chief writes one. The chief is the only writer, as in
// TensorFlow; what it gathers and how a restore reaches the other tasks
// are each strategy's hooks (strategy/strategies.h).
//
// The chief writes when `every_steps` divides the steps done, when
// `every_seconds` have passed on the run's clock since the last write, and
// once more at the end of training (as TensorFlow's CheckpointSaverHook
// does), so that a finished run can always be resumed further.
#pragma once

#include <cstdint>

#include "checkpoint/training_state.h"
#include "strategy/replica.h"
#include "strategy/runtime.h"
#include "strategy/training_setup.h"

namespace distlab::strategy {

struct CheckpointHooks {
  // On the chief at a step boundary: the run's state, gathered from
  // wherever it lives (the chief's replica, the parameter servers).
  checkpoint::TrainingState (*gather)(Runtime& runtime, Replica& chief, int64_t steps_done);
  // On the chief of a resumed run, its own replica restored: sends every
  // other task its part of `state`.
  void (*scatter)(Runtime& runtime, Replica& chief, const checkpoint::TrainingState& state);
  // On a replica other than the chief of a resumed run: receives and
  // restores its part; returns the step the run goes on from. (Parameter
  // servers receive theirs in their own entry point.)
  int64_t (*receive)(Runtime& runtime, Replica& replica);
  // On a replica restarted alone into a run that went on without it (see
  // StrategyDescription::rejoins): finds where it left off; returns the
  // step it goes on from. Null where a failure rolls every task back.
  int64_t (*rejoin)(Runtime& runtime, Replica& replica) = nullptr;
};

class Checkpointing {
 public:
  Checkpointing(Runtime& runtime, const TrainingSetup& setup, Replica& replica);

  // The first step to take: 0, or on a resumed run the checkpoint's step,
  // once this task holds its part of the checkpoint, or for a task that
  // rejoins a run, the step it had reached.
  int64_t start();
  // After every step of every replica, once the step has ended; the chief
  // writes when it is due, as work of the next step (Runtime::between_steps):
  // a task killed while writing has kept the record of every step the
  // checkpoint holds.
  void after_step(int64_t steps_done);
  // After the last step: the chief's final checkpoint, when checkpoints are
  // on and the last step has none yet.
  void finish(int64_t steps_done);

 private:
  void write(int64_t steps_done);

  Runtime& runtime_;
  const TrainingSetup& setup_;
  Replica& replica_;
  const CheckpointHooks& hooks_;
  int64_t last_written_ = -1;
  double last_written_at_ = 0;
};

}  // namespace distlab::strategy
