// A task's slowdown: the factors that apply at a moment multiply, a window
// of the run's clock bounds its part, and step-time noise is drawn from
// the seed and the step alone, never below 1, with the spread asked for.
#include "strategy/slowdown.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <numbers>
#include <vector>

using distlab::strategy::Slowdown;
using distlab::strategy::SlowdownPart;

TEST_CASE("slowdown: none slows nothing") {
  const Slowdown none;
  CHECK_FALSE(none.any());
  CHECK(none.factor(3, 1.0) == 1);
}

TEST_CASE("slowdown: fixed factors multiply, each within its window of the run's clock") {
  const Slowdown slow({{.factor = 1.5}, {.factor = 2, .from_seconds = 10, .to_seconds = 20}}, 7);
  CHECK(slow.any());
  CHECK(slow.factor(0, 0) == 1.5);
  CHECK(slow.factor(0, 9.99) == 1.5);
  CHECK(slow.factor(0, 10) == 3);    // from_seconds is in the window
  CHECK(slow.factor(-1, 15) == 3);   // outside a step too
  CHECK(slow.factor(0, 20) == 1.5);  // to_seconds is not
}

TEST_CASE("slowdown: step-time noise depends on the seed and the step alone") {
  const Slowdown noisy({{.lognormal_sigma = 0.3}}, 42);
  const Slowdown same({{.lognormal_sigma = 0.3}}, 42);
  const Slowdown other({{.lognormal_sigma = 0.3}}, 43);
  // In any order, as often as asked: the same factor for the same step.
  const double step_5 = noisy.factor(5, 0);
  CHECK(noisy.factor(6, 1) != step_5);
  CHECK(noisy.factor(5, 2) == step_5);
  CHECK(same.factor(5, 0) == step_5);
  CHECK(other.factor(5, 0) != step_5);
  // No noise outside a step (an evaluation between steps).
  CHECK(noisy.factor(-1, 0) == 1);
}

TEST_CASE("slowdown: the noise's logarithm is the absolute value of a normal of the sigma") {
  const double sigma = 0.3;
  const Slowdown noisy({{.lognormal_sigma = sigma}}, 1);
  const int steps = 20000;
  double sum = 0, square = 0, least = INFINITY;
  for (int step = 0; step < steps; ++step) {
    const double f = noisy.factor(step, 0);
    least = std::min(least, f);
    sum += std::log(f);
    square += std::log(f) * std::log(f);
  }
  CHECK(least >= 1);
  // E|z| = sqrt(2/pi), E z^2 = 1.
  CHECK(sum / steps == Approx(sigma * std::sqrt(2 / std::numbers::pi)).epsilon(0.02));
  CHECK(square / steps == Approx(sigma * sigma).epsilon(0.03));
}

TEST_CASE("slowdown: measured step-time noise draws each step's factor from the measured ones") {
  const auto measured =
      std::make_shared<const std::vector<double>>(std::vector<double>{1, 1.25, 3});
  const Slowdown slow({{.step_factors = measured}}, 9);
  int threes = 0;
  for (int step = 0; step < 3000; ++step) {
    const double f = slow.factor(step, 0);
    CHECK((f == 1 || f == 1.25 || f == 3));
    threes += f == 3;
    CHECK(slow.factor(step, 5) == f);  // the step's own draw
  }
  CHECK(threes == Approx(1000).margin(120));
  CHECK(slow.factor(-1, 0) == 1);
}
