// The training side of a task that trains (the chief or a worker): its model
// replica, optimizer and batches, behind the few operations a strategy
// composes. In timing fidelity the replica holds no model; its buffers have
// sizes but no values, and every computation is timed but not run.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "checkpoint/training_state.h"
#include "nn/data/sharding.h"
#include "nn/model.h"
#include "nn/optimizer.h"
#include "strategy/float_range.h"
#include "strategy/runtime.h"
#include "strategy/training_setup.h"

namespace distlab::strategy {

// What a task reports when it ends.
struct TaskOutcome {
  int64_t updates = 0;    // a PS: gradients applied; a worker: gradients pushed
  int64_t dropped = 0;    // a sync PS with backup workers: gradients that came too late
  double final_loss = 0;  // chief only, full fidelity; NaN otherwise
  double final_accuracy = 0;
  // SHA-256 of the replica's parameters and state at the end (full
  // fidelity): equal on every replica of a synchronous run.
  std::string weights_sha256;
};

// How a replica scales its loss: by its own batch (asynchronous updates) or
// by the global batch of all replicas (synchronous: the sum of the
// replicas' gradients is then the gradient of the global mean loss).
enum class LossScale { kLocalBatch, kGlobalBatch };

class Replica {
 public:
  Replica(Runtime& runtime, const TrainingSetup& setup);

  int rank() const { return rank_; }
  const TrainingSetup& setup() const { return setup_; }
  int replicas() const { return replicas_; }
  // Replica 0: the chief, or worker 0 in a cluster without one (as in
  // TensorFlow). It evaluates and fingerprints the final weights.
  bool is_chief() const { return rank_ == 0; }
  int64_t total_steps() const { return total_steps_; }
  int64_t steps_per_epoch() const { return sampler_.steps_per_epoch(); }

  FloatRange parameters();
  FloatRange gradients();

  // Forward and backward on this replica's batch of `step`; returns the
  // batch's mean loss (NaN in timing fidelity).
  double compute_gradients(int64_t step, LossScale scale);
  // The same, with `communicate` running beside the backward pass
  // (Runtime::start_background) until it returns: it may send each part
  // of the gradient once `await_final_from(its first float)` has returned.
  // Then the backward pass is joined.
  using AwaitFinalFrom = std::function<void(int64_t from)>;
  double compute_gradients(int64_t step, LossScale scale,
                           const std::function<void(const AwaitFinalFrom&)>& communicate);
  // The optimizer's update of the whole model from the gradient buffer.
  void apply_gradients();

  // The chief evaluates every eval_every steps (after `step`, 0-based) and
  // reports progress; other replicas do nothing. With a plateau schedule
  // it also evaluates at the end of every epoch, and its schedule observes
  // the test loss and sets the rate of the next epoch, as Keras'
  // ReduceLROnPlateau does at an epoch's end.
  void after_step(int64_t step, double train_loss);

  // Whether `step` ends an epoch of a model with a plateau schedule: the
  // moment the strategy hands the chief's rate to whoever applies updates
  // (every replica of a synchronous run; a parameter server's shards).
  bool ends_scheduled_epoch(int64_t step) const;
  float learning_rate() const { return learning_rate_; }
  void set_learning_rate(float rate);
  // The replica's whole state after `step` steps (full fidelity; in timing
  // fidelity only the step), and its restoration from a checkpoint's.
  checkpoint::TrainingState training_state(int64_t step);
  void restore(const checkpoint::TrainingState& state);

  // The weights' fingerprint, and the chief's final evaluation.
  TaskOutcome finish();

 private:
  void backward_beside(const StepPasses& passes,
                       const std::function<void(const AwaitFinalFrom&)>& communicate,
                       const Runtime::BackgroundFn& backward_fn);
  // The chief's final weights to the plan's model file, if it names one.
  void save_model() const;

  Runtime& runtime_;
  const TrainingSetup& setup_;
  int rank_;
  int replicas_;
  int64_t total_steps_;
  nn::BatchSampler sampler_;
  std::unique_ptr<nn::Model> model_;  // full fidelity only
  std::unique_ptr<nn::Optimizer> optimizer_;
  // The schedule; only the chief's observes. learning_rate_ is the rate in
  // force, kept apart from the optimizer so that timing fidelity has it.
  std::optional<nn::ReduceLrOnPlateau> plateau_;
  float learning_rate_ = 0;
  nn::Matrix x_;
  std::vector<int32_t> y_;
};

}  // namespace distlab::strategy
