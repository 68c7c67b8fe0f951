#include "strategy/checkpointing.h"

#include <algorithm>

#include "checkpoint/checkpoint_store.h"
#include "common/error.h"
#include "strategy/strategies.h"

namespace distlab::strategy {

Checkpointing::Checkpointing(Runtime& runtime, const TrainingSetup& setup, Replica& replica)
    : runtime_(runtime),
      setup_(setup),
      replica_(replica),
      hooks_(describe(setup.strategy().kind).checkpoint) {}

int64_t Checkpointing::start() {
  last_written_at_ = runtime_.now();
  if (runtime_.rejoining()) {
    if (!hooks_.rejoin) {
      throw Error(task_name(runtime_.self()) + ": strategy " +
                  describe(setup_.strategy().kind).name + " cannot take a task back alone");
    }
    return hooks_.rejoin(runtime_, replica_);
  }
  const CheckpointPlan& plan = setup_.checkpoints();
  if (!plan.resuming) return 0;
  if (!replica_.is_chief()) {
    last_written_ = hooks_.receive(runtime_, replica_);
    return last_written_;
  }
  if (!plan.resume) {
    throw Error(task_name(runtime_.self()) + ": the run resumes, but the chief has no checkpoint");
  }
  const checkpoint::LoadedCheckpoint& loaded = *plan.resume;
  // Reading the file back takes disk time, like writing it; the bytes were
  // read (and checked) before the run began.
  const uint64_t bytes =
      checkpoint::checkpoint_file_size(setup_.checkpoint_layout(), loaded.info,
                                       static_cast<int>(loaded.state.optimizer_steps.size()));
  runtime_.checkpoint("restore " + loaded.path, bytes, {});
  replica_.restore(loaded.state);
  hooks_.scatter(runtime_, replica_, loaded.state);
  last_written_ = loaded.state.step;
  last_written_at_ = runtime_.now();
  return loaded.state.step;
}

void Checkpointing::after_step(int64_t steps_done) {
  if (!replica_.is_chief()) return;
  const CheckpointConfig& config = setup_.checkpoints().config;
  const bool by_steps = config.every_steps > 0 && steps_done % config.every_steps == 0;
  const bool by_time =
      config.every_seconds > 0 && runtime_.now() - last_written_at_ >= config.every_seconds;
  if ((by_steps || by_time) && steps_done != last_written_)
    runtime_.between_steps(steps_done, [&] { write(steps_done); });
}

void Checkpointing::finish(int64_t steps_done) {
  if (!replica_.is_chief() || !setup_.checkpoints().config.enabled()) return;
  // A run resumed from a checkpoint beyond its end trains nothing and
  // writes nothing.
  if (steps_done > last_written_) write(steps_done);
}

void Checkpointing::write(int64_t steps_done) {
  const CheckpointPlan& plan = setup_.checkpoints();
  const checkpoint::TrainingState state = hooks_.gather(runtime_, replica_, steps_done);
  const checkpoint::CheckpointInfo info{
      .step = steps_done,
      .epoch = steps_done / replica_.steps_per_epoch(),
      .batch_in_epoch = steps_done % replica_.steps_per_epoch(),
      .facts = plan.facts,
      .model_fingerprint = setup_.checkpoint_layout().fingerprint()};
  const std::string label = "checkpoint step " + std::to_string(steps_done);
  if (runtime_.full_fidelity()) {
    const std::vector<std::byte> file =
        checkpoint::encode_checkpoint(setup_.checkpoint_layout(), state, info);
    runtime_.checkpoint(label, file.size(), [&] {
      if (!plan.folder.empty())
        checkpoint::save_checkpoint(plan.folder, steps_done, file, plan.config.keep);
    });
  } else {
    // No values to write: the file's size alone, for its disk time.
    const int optimizers = std::max(1, runtime_.cluster().ps);
    runtime_.checkpoint(
        label, checkpoint::checkpoint_file_size(setup_.checkpoint_layout(), info, optimizers), {});
  }
  last_written_ = steps_done;
  last_written_at_ = runtime_.now();
  if (setup_.on_checkpoint) setup_.on_checkpoint(steps_done, state.optimizer_steps);
}

}  // namespace distlab::strategy
