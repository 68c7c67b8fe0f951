// Everything a run needs to go on exactly as if it had never stopped, as the
// chief gathers it for a checkpoint: the step, the weights, the optimizer's
// state and the model's non-trainable state. Batches and dropout masks are
// functions of (seed, step), so the step is the data position and the
// random streams' state at once.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "nn/lr_schedule.h"

namespace distlab::checkpoint {

// Where a model's reduce-LR-on-plateau schedule stands: the rate it has set
// and its counters. In a distributed run the chief's schedule decides for
// every replica and server (strategy/learning_rate.h).
struct ScheduleState {
  float learning_rate = 0;
  nn::ReduceLrOnPlateau::State plateau;
};

struct TrainingState {
  int64_t step = 0;               // steps every replica has taken
  std::vector<float> parameters;  // the model's parameter buffer, padding included
  // BatchNorm moving statistics: the chief's (replicas keep their own, and
  // the chief's are the ones evaluation uses).
  std::vector<float> model_state;
  // The optimizer's per-parameter state (momentum; Adam's two moments), each
  // in the parameter buffer's layout.
  std::vector<std::vector<float>> optimizer_slots;
  // Updates applied by each optimizer: one for a synchronous run, one per
  // shard for parameter servers (each shard has its own optimizer).
  std::vector<int64_t> optimizer_steps;
  // With a schedule (./train always records its rate): where it stands.
  std::optional<ScheduleState> schedule;
};

}  // namespace distlab::checkpoint
