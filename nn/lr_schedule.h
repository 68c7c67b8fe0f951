// Keras' ReduceLROnPlateau: when the monitored value (a loss) has not
// improved by more than `min_delta` for `patience` observations, multiply the
// learning rate by `factor`, not below `min_lr`, then wait `cooldown`
// observations before counting again.
#pragma once

#include <limits>

namespace distlab::nn {

struct PlateauOptions {
  float factor = 0.1f;
  int patience = 10;
  float min_delta = 1e-4f;
  int cooldown = 0;
  float min_lr = 0.0f;
};

class ReduceLrOnPlateau {
 public:
  explicit ReduceLrOnPlateau(const PlateauOptions& options) : opt_(options) {}

  // Records one observation (lower is better) and returns the learning rate
  // to use from now on.
  float observe(double value, float learning_rate);

  // Its counters, for checkpoints: restoring them resumes the same schedule.
  struct State {
    double best = 0;
    int waited = 0;
    int cooldown_left = 0;
  };
  State state() const { return {best_, waited_, cooldown_left_}; }
  void restore(const State& state) {
    best_ = state.best;
    waited_ = state.waited;
    cooldown_left_ = state.cooldown_left;
  }

 private:
  PlateauOptions opt_;
  double best_ = std::numeric_limits<double>::infinity();
  int waited_ = 0;
  int cooldown_left_ = 0;
};

}  // namespace distlab::nn
