#include "strategy/replica.h"

#include <cmath>
#include <limits>

#include "checkpoint/checkpoint_store.h"
#include "common/error.h"
#include "common/sha256.h"

namespace distlab::strategy {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Copying the step's examples out of the data set into the batch: measured
// by the real backend, and free in the simulator's model for now (a copy of
// a few hundred kilobytes).
const Work kGatherBatch{.label = "gather batch", .phase = Phase::kInput};

}  // namespace

Replica::Replica(Runtime& runtime, const TrainingSetup& setup)
    : runtime_(runtime),
      setup_(setup),
      rank_(runtime.cluster().replica_rank(runtime.self())),
      replicas_(runtime.cluster().replicas()),
      total_steps_(setup.steps_per_replica(replicas_)),
      sampler_(setup.train().size(), setup.batch_size(), setup.seed(), rank_, replicas_,
               setup.batch_scope()) {
  if (rank_ < 0) throw Error(task_name(runtime.self()) + " does not train");
  if (runtime.full_fidelity()) {
    // Every replica starts from the same weights (the run's seed) and draws
    // its own dropout masks (its rank).
    model_ = std::make_unique<nn::Model>(setup.spec(), setup.seed());
    model_->seed_randomness(static_cast<uint64_t>(rank_));
    optimizer_ = nn::make_optimizer(setup.spec().optimizer, model_->trainable_layout());
  }
  if (setup.spec().reduce_lr_on_plateau) {
    plateau_.emplace(*setup.spec().reduce_lr_on_plateau);
    learning_rate_ = nn::initial_learning_rate(setup.spec().optimizer);
  }
}

FloatRange Replica::parameters() {
  if (!model_) return FloatRange::sized(setup_.parameter_floats());
  return FloatRange(model_->parameters());
}

FloatRange Replica::gradients() {
  if (!model_) return FloatRange::sized(setup_.parameter_floats());
  return FloatRange(model_->gradients());
}

double Replica::compute_gradients(int64_t step, LossScale scale) {
  return compute_gradients(step, scale, nullptr);
}

double Replica::compute_gradients(int64_t step, LossScale scale,
                                  const std::function<void(const AwaitFinalFrom&)>& communicate) {
  const int64_t steps_per_epoch = sampler_.steps_per_epoch();
  const int64_t epoch = step / steps_per_epoch;
  const int64_t in_epoch = step % steps_per_epoch;
  // Only the size matters in timing fidelity: no shuffling of the examples.
  const int64_t batch_size = sampler_.local_batch_size(in_epoch);
  const int64_t divisor =
      scale == LossScale::kGlobalBatch ? sampler_.global_batch_size(in_epoch) : batch_size;
  runtime_.count_examples(batch_size);
  double loss = kNaN;
  // The input pipeline hands over this step's batch (decoded, resized,
  // augmented on the host's CPU while the previous step ran).
  runtime_.take_batch(batch_size, setup_.training().input);
  // On several GPUs the batch is split into towers that run side by side:
  // the step takes the time of the largest.
  const int64_t devices = runtime_.devices();
  const int64_t tower = (batch_size + devices - 1) / devices;
  runtime_.compute(kGatherBatch, [&] {
    nn::gather_batch(setup_.train(), sampler_.batch(epoch, in_epoch), x_, y_);
  });
  const StepPasses& passes = setup_.training_passes(tower);
  nn::LossResult result;
  runtime_.compute(passes.forward, [&] {
    result =
        model_->forward_loss(x_, y_, static_cast<uint64_t>(step), std::max<int64_t>(divisor, 1));
  });
  // The batch's own mean, whatever the divisor of the gradient.
  auto batch_loss = [&] {
    return batch_size == 0 ? 0.0
                           : result.loss * static_cast<double>(std::max<int64_t>(divisor, 1)) /
                                 static_cast<double>(batch_size);
  };
  if (!communicate) {
    runtime_.compute(passes.backward, [&] {
      model_->backward_gradients(x_, result);
      loss = batch_loss();
    });
  } else {
    backward_beside(passes, communicate, [&](const Runtime::PieceDone& piece_done) {
      std::size_t piece = 0;
      model_->backward_gradients(x_, result, [&](int64_t) { piece_done(piece++); });
      loss = batch_loss();
    });
  }
  if (model_ && !std::isfinite(loss)) {
    throw Error(task_name(runtime_.self()) + ": the training loss became " + std::to_string(loss) +
                " at step " + std::to_string(step) + "; a lower learning rate may help");
  }
  return loss;
}

// The backward pass layer by layer in the background, the gradient's
// communication beside it.
void Replica::backward_beside(const StepPasses& passes,
                              const std::function<void(const AwaitFinalFrom&)>& communicate,
                              const Runtime::BackgroundFn& backward_fn) {
  std::vector<Work> pieces;
  for (std::size_t k = 0; k < passes.backward_pieces.size(); ++k) {
    pieces.push_back(passes.backward_piece(k));
  }
  runtime_.start_background(std::move(pieces), backward_fn);
  try {
    communicate([&](int64_t from) {
      std::size_t k = 0;
      while (passes.backward_pieces[k].gradients_from > from) ++k;  // the last's is 0
      runtime_.await_piece(k);
    });
  } catch (const std::exception&) {
    // The computation uses this frame's buffers: it ends before they do.
    runtime_.abandon_background();
    throw;
  }
  runtime_.join_background();
}

void Replica::apply_gradients() {
  runtime_.compute(setup_.replica_update_work(),
                   [&] { optimizer_->step(model_->parameters(), model_->gradients()); });
}

checkpoint::TrainingState Replica::training_state(int64_t step) {
  checkpoint::TrainingState state;
  state.step = step;
  if (plateau_) state.schedule = checkpoint::ScheduleState{learning_rate_, plateau_->state()};
  if (!model_) return state;
  const auto params = model_->parameters();
  const auto model_state = model_->state();
  state.parameters.assign(params.begin(), params.end());
  state.model_state.assign(model_state.begin(), model_state.end());
  for (const auto slot : optimizer_->state())
    state.optimizer_slots.emplace_back(slot.begin(), slot.end());
  state.optimizer_steps = {optimizer_->steps()};
  return state;
}

void Replica::restore(const checkpoint::TrainingState& state) {
  // A checkpoint written without a schedule (another spec's optimizer
  // options, or an older file) leaves it at its start.
  if (plateau_ && state.schedule) {
    plateau_->restore(state.schedule->plateau);
    set_learning_rate(state.schedule->learning_rate);
  }
  if (!model_) return;
  auto fill = [&](std::span<float> to, const std::vector<float>& from, const char* what) {
    if (from.size() != to.size()) {
      throw Error(task_name(runtime_.self()) + ": the checkpoint's " + what + " hold " +
                  std::to_string(from.size()) + " floats, the model " + std::to_string(to.size()));
    }
    std::copy(from.begin(), from.end(), to.begin());
  };
  fill(model_->parameters(), state.parameters, "parameters");
  fill(model_->state(), state.model_state, "moving statistics");
  const auto slots = optimizer_->state();
  if (slots.size() != state.optimizer_slots.size()) {
    throw Error(task_name(runtime_.self()) + ": the checkpoint's optimizer has " +
                std::to_string(state.optimizer_slots.size()) + " state tensors, this one " +
                std::to_string(slots.size()));
  }
  for (std::size_t s = 0; s < slots.size(); ++s)
    fill(slots[s], state.optimizer_slots[s], "optimizer state");
  optimizer_->set_steps(state.optimizer_steps.empty() ? 0 : state.optimizer_steps.front());
}

bool Replica::ends_scheduled_epoch(int64_t step) const {
  return plateau_ && (step + 1) % steps_per_epoch() == 0;
}

void Replica::set_learning_rate(float rate) {
  learning_rate_ = rate;
  if (optimizer_) optimizer_->set_learning_rate(rate);
}

void Replica::after_step(int64_t step, double train_loss) {
  if (!is_chief()) return;
  const int64_t every = setup_.training().eval_every;
  const bool curve_point = every > 0 && (step + 1) % every == 0 && step + 1 < total_steps_;
  const bool epoch_end = ends_scheduled_epoch(step);
  if (curve_point || epoch_end) {
    nn::Evaluation evaluation{.loss = kNaN, .accuracy = kNaN};
    runtime_.compute(setup_.evaluation_work(), [&] {
      evaluation = model_->evaluate(setup_.evaluation_set(), kEvaluationBatch);
    });
    if (curve_point) {
      runtime_.add_curve_point({.seconds = runtime_.now(),
                                .step = step + 1,
                                .train_loss = train_loss,
                                .test_loss = evaluation.loss,
                                .test_accuracy = evaluation.accuracy});
    }
    // Timing fidelity has no loss to observe: the rate stays, and only the
    // evaluation's time counts.
    if (epoch_end && model_) {
      set_learning_rate(plateau_->observe(evaluation.loss, learning_rate_));
    }
  }
  if (setup_.on_chief_step) setup_.on_chief_step(step + 1, total_steps_);
}

// Outside the simulated time, as the run's summary is: the model file is
// the run's output, not a step of its training.
void Replica::save_model() const {
  const CheckpointPlan& plan = setup_.checkpoints();
  if (!model_ || plan.model_file.empty()) return;
  checkpoint::save_model_file(plan.model_file, *model_,
                              {.step = total_steps_,
                               .epoch = total_steps_ / steps_per_epoch(),
                               .batch_in_epoch = total_steps_ % steps_per_epoch(),
                               .facts = plan.facts},
                              plan.model_spec_yaml);
}

TaskOutcome Replica::finish() {
  TaskOutcome outcome{.final_loss = kNaN, .final_accuracy = kNaN};
  if (model_) {
    Sha256 hash;
    hash.update(std::as_bytes(std::span<const float>(model_->parameters())));
    hash.update(std::as_bytes(std::span<const float>(model_->state())));
    outcome.weights_sha256 = hash.hex_digest();
  }
  if (!is_chief()) return outcome;
  nn::Evaluation evaluation{.loss = kNaN, .accuracy = kNaN};
  runtime_.compute(setup_.evaluation_work(), [&] {
    evaluation = model_->evaluate(setup_.evaluation_set(), kEvaluationBatch);
  });
  outcome.final_loss = evaluation.loss;
  outcome.final_accuracy = evaluation.accuracy;
  save_model();
  const double last_loss = runtime_.log().steps.empty() ? kNaN : runtime_.log().steps.back().loss;
  runtime_.add_curve_point({.seconds = runtime_.now(),
                            .step = total_steps_,
                            .train_loss = last_loss,
                            .test_loss = evaluation.loss,
                            .test_accuracy = evaluation.accuracy});
  return outcome;
}

}  // namespace distlab::strategy
