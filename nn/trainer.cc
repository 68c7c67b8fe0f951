#include "nn/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/error.h"

namespace distlab::nn {

Trainer::Trainer(Model& model, const Dataset& train, uint64_t seed)
    : model_(model),
      train_(train),
      optimizer_(make_optimizer(model.spec().optimizer, model.trainable_layout())),
      sampler_(train.size(), model.spec().batch_size, seed, 0, 1) {
  if (train.size() == 0) throw Error("the training set " + train.name + " is empty");
  if (model.spec().reduce_lr_on_plateau) plateau_.emplace(*model.spec().reduce_lr_on_plateau);
}

EpochResult Trainer::train_epoch(const StepCallback& on_step, int64_t until_step) {
  EpochResult r{.epoch = epoch_, .learning_rate = optimizer_->learning_rate()};
  double loss_sum = 0;
  int64_t correct = 0;
  const auto start = std::chrono::steady_clock::now();
  int64_t steps = sampler_.steps_per_epoch() - batch_;
  if (until_step > 0) steps = std::clamp<int64_t>(until_step - step_, 0, steps);
  for (int64_t s = 0; s < steps; ++s) {
    gather_batch(train_, sampler_.batch(epoch_, batch_++), x_, y_);
    const LossResult loss = model_.compute_gradients(x_, y_, step_++);
    if (!std::isfinite(loss.loss)) {
      throw Error("the training loss became " + std::to_string(loss.loss) + " at step " +
                  std::to_string(step_) + " of epoch " + std::to_string(epoch_ + 1) +
                  "; a lower learning rate may help");
    }
    optimizer_->step(model_.parameters(), model_.gradients());
    loss_sum += loss.loss;
    correct += loss.correct;
    r.examples += x_.rows();
    if (on_step) on_step(s + 1, steps, loss.loss);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.steps = steps;
  if (steps > 0) {
    r.train_loss = loss_sum / static_cast<double>(steps);
    r.train_accuracy = static_cast<double>(correct) / static_cast<double>(r.examples);
  }
  if (batch_ == sampler_.steps_per_epoch()) {
    r.complete = true;
    ++epoch_;
    batch_ = 0;
  }
  return r;
}

Trainer::Position Trainer::position() const {
  return {.epoch = epoch_,
          .batch = batch_,
          .step = step_,
          .learning_rate = optimizer_->learning_rate(),
          .plateau = plateau_ ? plateau_->state() : ReduceLrOnPlateau::State{}};
}

void Trainer::restore(const Position& position) {
  if (position.batch < 0 || position.batch >= sampler_.steps_per_epoch()) {
    throw InputError("the checkpoint stopped at batch " + std::to_string(position.batch) +
                     " of an epoch; this data set has " +
                     std::to_string(sampler_.steps_per_epoch()) + " batches an epoch");
  }
  epoch_ = position.epoch;
  batch_ = position.batch;
  step_ = position.step;
  optimizer_->set_learning_rate(position.learning_rate);
  if (plateau_) plateau_->restore(position.plateau);
}

float Trainer::end_epoch(double monitored) {
  if (plateau_) {
    optimizer_->set_learning_rate(plateau_->observe(monitored, optimizer_->learning_rate()));
  }
  return optimizer_->learning_rate();
}

}  // namespace distlab::nn
