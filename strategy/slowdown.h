// A task slower than its machine: a straggler (a fixed factor), a noisy
// neighbour (a factor for a while on the run's clock), or step-time noise
// (a seeded factor drawn anew for every step). The scenario says which
// tasks (run/scenario.h, `slowdowns`); both backends hand each task its
// own, and Runtime::compute applies it to every computation the same way:
// the work takes `factor` times its time, the simulator charging the extra
// time, ./realnet holding a core for it. The draws depend on the seed, the
// task and the step alone, so the same scenario slows the same steps of
// the same tasks on both backends.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace distlab::strategy {

// One slowdown of a task. It applies to the computations that start in
// [from_seconds, to_seconds) of the run's clock.
struct SlowdownPart {
  double factor = 1;  // >= 1
  // Step-time noise: each step's work takes exp(sigma * |z|) times as long,
  // z a standard normal drawn for the step (never faster than the machine).
  double lognormal_sigma = 0;
  // Step-time noise measured in a real run: each step's work takes one of
  // these factors (each 1 or more), drawn for the step. Empty: none.
  std::shared_ptr<const std::vector<double>> step_factors;
  double from_seconds = 0;
  double to_seconds = std::numeric_limits<double>::infinity();
};

class Slowdown {
 public:
  Slowdown() = default;
  // `seed`: the scenario's seed and the task's ordinal, mixed by the caller.
  Slowdown(std::vector<SlowdownPart> parts, uint64_t seed);

  bool any() const { return !parts_.empty(); }
  // The factor for a computation that starts at `now` (the run's clock)
  // during `step` (-1 outside a step, where no noise is drawn): the
  // product of the parts that apply.
  double factor(int64_t step, double now) const;

 private:
  std::vector<SlowdownPart> parts_;
  uint64_t seed_ = 0;
};

}  // namespace distlab::strategy
