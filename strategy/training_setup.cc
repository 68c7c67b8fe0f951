#include "strategy/training_setup.h"

#include <cmath>
#include <string>

#include "common/error.h"
#include "nn/data/sharding.h"
#include "nn/optimizer.h"

namespace distlab::strategy {
namespace {

// A step's work in mixed precision: every operation in the policy's format
// (the device decides what that is worth: sim::GpuType). Updates are not
// step work: the weights and the optimizer stay float32, as in Keras.
void at_precision(Work& work, Precision precision) {
  for (WorkItem& item : work.items) item.precision = precision;
}

}  // namespace

TrainingSetup::TrainingSetup(nn::ModelSpec spec, const nn::Dataset& train, const nn::Dataset& test,
                             StrategyConfig strategy, TrainingConfig training, uint64_t seed,
                             Fidelity fidelity)
    : spec_(std::move(spec)),
      train_(&train),
      evaluation_(training.eval_examples > 0 ? test.head(training.eval_examples) : test),
      strategy_(strategy),
      training_(training),
      seed_(seed),
      fidelity_(fidelity),
      batch_size_(training.batch_size > 0 ? training.batch_size : spec_.batch_size),
      reference_(spec_, seed),
      parameter_floats_(static_cast<int64_t>(reference_.parameters().size())),
      checkpoint_layout_(reference_) {
  if (train.size() == 0) throw InputError("the training set " + train.name + " is empty");
  const auto eval_layers = reference_.layer_costs(kEvaluationBatch);
  evaluation_work_ = strategy::evaluation_work(
      eval_layers, static_cast<double>(evaluation_.size()) / kEvaluationBatch);
  evaluation_work_.label = "evaluation";
  at_precision(evaluation_work_, training.precision);
}

int64_t TrainingSetup::steps_per_replica(int replicas) const {
  if (training_.steps > 0) return training_.steps;
  // Every replica takes as many steps as the largest shard needs.
  const nn::BatchSampler sampler(train_->size(), batch_size_, seed_, 0, replicas);
  return sampler.steps_per_epoch() * training_.epochs;
}

const Work& TrainingSetup::training_step_work(int64_t batch) const {
  auto found = step_work_.find(batch);
  if (found != step_work_.end()) return found->second;
  Work work = strategy::model_step_work(reference_, static_cast<int>(batch));
  work.label = "forward+backward";
  at_precision(work, training_.precision);
  return step_work_.emplace(batch, std::move(work)).first->second;
}

Work TrainingSetup::update_work(int64_t floats) const {
  return strategy::update_work(spec_.optimizer.kind, floats);
}

}  // namespace distlab::strategy
