#include "strategy/training_setup.h"

#include <cmath>
#include <string>

#include "common/error.h"
#include "nn/data/sharding.h"
#include "nn/optimizer.h"

namespace distlab::strategy {
namespace {

// A step's work in mixed precision: every operation in the policy's format
// (the device decides what that is worth: sim::GpuType), and the kernels
// Keras adds for it. Each variable of a product, convolution or embedding
// is read through an AutoCastVariable, a Cast kernel a pass (a dense or
// convolution layer has a kernel and a bias), whose gradient is a Cast back
// in the backward pass. Updates are not step work: the weights and the
// optimizer stay float32, as in Keras.
void at_precision(Work& work, Precision precision) {
  if (precision == Precision::kFloat32) return;
  for (WorkItem& item : work.items) {
    item.precision = precision;
    if (item.kernels == 0) continue;
    if (item.kind == OpKind::kDense || item.kind == OpKind::kConvolution) item.kernels += 2;
    if (item.kind == OpKind::kEmbedding) item.kernels += 1;
  }
}

// mixed_float16's loss scaling (Keras' LossScaleOptimizer): the loss scaled
// up, each gradient tensor scaled back down, a check that all are finite
// and the scale's update: a kernel a tensor and three more, one pass over
// the gradient.
WorkItem loss_scaling(int64_t floats, int tensors) {
  const auto n = static_cast<double>(floats);
  return {.flops = 2 * n,
          .bytes = 2 * n * nn::kFloatBytes,
          .kernels = tensors + 3,
          .kind = OpKind::kElementwise,
          .ops = 1,
          .regions = 0,
          .precision = Precision::kFloat16};
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

nn::BatchScope TrainingSetup::batch_scope() const {
  return strategy_.kind == StrategyKind::kParameterServer ? nn::BatchScope::kPerWorker
                                                          : nn::BatchScope::kGlobal;
}

int64_t TrainingSetup::steps_per_replica(int replicas) const {
  if (training_.steps > 0) return training_.steps;
  // Every replica takes as many steps as the largest shard needs.
  const nn::BatchSampler sampler(train_->size(), batch_size_, seed_, 0, replicas, batch_scope());
  return sampler.steps_per_epoch() * training_.epochs;
}

const StepPasses& TrainingSetup::training_passes(int64_t batch) const {
  auto found = step_work_.find(batch);
  if (found != step_work_.end()) return found->second;
  StepPasses passes = strategy::model_step_passes(reference_, static_cast<int>(batch));
  at_precision(passes.forward, training_.precision);
  at_precision(passes.backward, training_.precision);
  if (training_.precision == Precision::kFloat16) {
    passes.backward.items.push_back(loss_scaling(
        parameter_floats_, static_cast<int>(reference_.trainable_layout().blocks().size())));
  }
  return step_work_.emplace(batch, std::move(passes)).first->second;
}

Work TrainingSetup::update_work(int64_t first, int64_t floats) const {
  if (spec_.optimizer.kind == "per_layer") {
    return per_layer_update_work(spec_.optimizer, reference_.trainable_layout(), first, floats);
  }
  return strategy::update_work(spec_.optimizer.kind, floats);
}

Work TrainingSetup::replica_update_work() const {
  if (spec_.optimizer.kind == "per_layer") {
    return per_layer_update_work(spec_.optimizer, reference_.trainable_layout(), 0,
                                 parameter_floats_);
  }
  return strategy::update_work(spec_.optimizer.kind, parameter_floats_,
                               static_cast<int>(reference_.trainable_layout().blocks().size()));
}

}  // namespace distlab::strategy
