// What every task of a run shares, built once per process from a scenario:
// the model spec, the data, the options, and the sizes and costs of the
// model (read off one reference model, so that tasks in timing fidelity
// need no model of their own).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>

#include "checkpoint/checkpoint_file.h"
#include "nn/data/dataset.h"
#include "nn/data/sharding.h"
#include "nn/model.h"
#include "strategy/config.h"
#include "strategy/work.h"

namespace distlab::strategy {

// What a run does about checkpoints, decided by the command that runs it.
struct CheckpointPlan {
  CheckpointConfig config;
  std::string folder;  // where the chief writes them; "" writes none (tests)
  // Where the chief writes the final weights it evaluated (a model file,
  // strategy/checkpoint_file.h), with the spec's YAML; "" writes none.
  std::string model_file;
  std::string model_spec_yaml;
  checkpoint::RunFacts facts;  // recorded in every file
  // Every task of a resumed run knows it is one (it waits for its part of
  // the checkpoint); only the chief's process holds the checkpoint.
  bool resuming = false;
  std::shared_ptr<const checkpoint::LoadedCheckpoint> resume;
};

class TrainingSetup {
 public:
  // `train` and `test` must outlive the setup. Throws InputError when the
  // options do not fit the data (a batch larger than a worker's shard...).
  TrainingSetup(nn::ModelSpec spec, const nn::Dataset& train, const nn::Dataset& test,
                StrategyConfig strategy, TrainingConfig training, uint64_t seed, Fidelity fidelity);

  const nn::ModelSpec& spec() const { return spec_; }
  const nn::Dataset& train() const { return *train_; }
  const nn::Dataset& evaluation_set() const { return evaluation_; }
  const StrategyConfig& strategy() const { return strategy_; }
  const TrainingConfig& training() const { return training_; }
  uint64_t seed() const { return seed_; }
  Fidelity fidelity() const { return fidelity_; }

  // The batch size as the scenario gives it (training.batch_size, else the
  // spec's), with Keras' rule: a synchronous strategy's batch is global,
  // split among its replicas; each parameter-server worker takes batches
  // of that size from its own shard.
  int64_t batch_size() const { return batch_size_; }
  nn::BatchScope batch_scope() const;
  // Floats in a model's parameter (and gradient) buffer: what goes on the
  // wire, padding between layers included.
  int64_t parameter_floats() const { return parameter_floats_; }
  int64_t parameter_count() const { return reference_.parameter_count(); }
  // Training steps each replica takes, when `replicas` share the data.
  int64_t steps_per_replica(int replicas) const;

  // Costs, for the simulator: one training step at a batch size, in its
  // forward and backward computations (cached), one evaluation pass over
  // the evaluation set, one optimizer update of
  // `floats` parameters (a replica's update of every parameter tensor, or a
  // PS's of its shard, on its CPU).
  const StepPasses& training_passes(int64_t batch) const;
  const Work& evaluation_work() const { return evaluation_work_; }
  Work update_work(int64_t first, int64_t floats) const;
  Work replica_update_work() const;

  void set_checkpoints(CheckpointPlan plan) { checkpoints_ = std::move(plan); }
  const CheckpointPlan& checkpoints() const { return checkpoints_; }
  const checkpoint::CheckpointLayout& checkpoint_layout() const { return checkpoint_layout_; }

  // Called by the chief after each of its steps: (steps done, steps in all).
  std::function<void(int64_t, int64_t)> on_chief_step;
  // Called by the chief after each checkpoint it wrote: (its step, the
  // updates each optimizer had applied), so that a backend can roll back
  // to it after a failure.
  std::function<void(int64_t, const std::vector<int64_t>&)> on_checkpoint;

 private:
  nn::ModelSpec spec_;
  const nn::Dataset* train_;
  nn::Dataset evaluation_;
  StrategyConfig strategy_;
  TrainingConfig training_;
  uint64_t seed_;
  Fidelity fidelity_;
  int64_t batch_size_;
  nn::Model reference_;
  int64_t parameter_floats_;
  Work evaluation_work_;
  checkpoint::CheckpointLayout checkpoint_layout_;
  CheckpointPlan checkpoints_;
  mutable std::map<int64_t, StepPasses> step_work_;
};

// The evaluation batch size: large, as frameworks use for inference.
inline constexpr int kEvaluationBatch = 1000;

}  // namespace distlab::strategy
