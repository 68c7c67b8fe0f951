// Single-process training of a model on a data set, epoch by epoch: the
// loop behind ./train, the learning tests and the throughput figures, and the
// baseline that distributed strategies are compared with.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "nn/data/sharding.h"
#include "nn/lr_schedule.h"
#include "nn/model.h"

namespace distlab::nn {

struct EpochResult {
  int64_t epoch = 0;      // 0-based
  int64_t steps = 0;      // taken in this call
  bool complete = false;  // the epoch's last batch was among them
  int64_t examples = 0;
  double train_loss = 0;  // mean over the epoch's batches, penalties included
  double train_accuracy = 0;
  double seconds = 0;  // wall time of the training steps
  float learning_rate = 0;
};

class Trainer {
 public:
  // Batches of the spec's size, shuffled with `seed` each epoch.
  Trainer(Model& model, const Dataset& train, uint64_t seed);

  // Trains on the rest of the current epoch, or up to global step
  // `until_step` (counted from 0 over the whole run) when that comes first
  // (0: no limit). on_step gets the step within this call and its length.
  using StepCallback = std::function<void(int64_t step, int64_t steps, double loss)>;
  EpochResult train_epoch(const StepCallback& on_step = {}, int64_t until_step = 0);

  // Feeds a monitored value (a validation loss) to the spec's
  // reduce_lr_on_plateau schedule, if it has one; returns the new rate.
  float end_epoch(double monitored);

  // Where training stands, for checkpoints: epochs and steps done (and
  // batches into the current epoch, after a step limit), the learning rate
  // and the plateau schedule's counters. Batches and dropout masks follow
  // from (seed, epoch, batch, step): restoring this resumes the same run
  // (the model's and the optimizer's buffers are restored by the caller).
  struct Position {
    int64_t epoch = 0;
    int64_t batch = 0;  // of the current epoch
    int64_t step = 0;
    float learning_rate = 0;
    ReduceLrOnPlateau::State plateau;
  };
  Position position() const;
  // Throws InputError when the position does not fit this data set
  // (a batch beyond its epoch).
  void restore(const Position& position);

  Optimizer& optimizer() { return *optimizer_; }
  int64_t steps_per_epoch() const { return sampler_.steps_per_epoch(); }
  int64_t epochs_done() const { return epoch_; }
  int64_t global_step() const { return step_; }

 private:
  Model& model_;
  const Dataset& train_;
  std::unique_ptr<Optimizer> optimizer_;
  std::optional<ReduceLrOnPlateau> plateau_;
  BatchSampler sampler_;
  int64_t epoch_ = 0;
  int64_t batch_ = 0;  // next batch of epoch_
  int64_t step_ = 0;
  Matrix x_;
  std::vector<int32_t> y_;
};

}  // namespace distlab::nn
