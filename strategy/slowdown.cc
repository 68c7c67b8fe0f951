#include "strategy/slowdown.h"

#include <cmath>
#include <numbers>
#include <utility>

namespace distlab::strategy {
namespace {

// SplitMix64's finaliser: a counter-based draw, so that a factor depends on
// (seed, step, part) alone and not on how many were drawn before it.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// A uniform in (0, 1).
double uniform(uint64_t bits) {
  return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53;
}

// A standard normal (Box-Muller) from two counter-based uniforms.
double standard_normal(uint64_t seed, int64_t step, std::size_t part) {
  const uint64_t key = mix(seed ^ mix(static_cast<uint64_t>(step) ^ mix(part)));
  const double u1 = uniform(mix(key));
  const double u2 = uniform(mix(key + 1));
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
}

}  // namespace

Slowdown::Slowdown(std::vector<SlowdownPart> parts, uint64_t seed)
    : parts_(std::move(parts)), seed_(seed) {}

double Slowdown::factor(int64_t step, double now) const {
  double factor = 1;
  for (std::size_t i = 0; i < parts_.size(); ++i) {
    const SlowdownPart& part = parts_[i];
    if (now < part.from_seconds || now >= part.to_seconds) continue;
    factor *= part.factor;
    if (step < 0) continue;
    if (part.lognormal_sigma > 0) {
      factor *= std::exp(part.lognormal_sigma * std::abs(standard_normal(seed_, step, i)));
    }
    if (part.step_factors && !part.step_factors->empty()) {
      const uint64_t draw = mix(seed_ ^ mix(static_cast<uint64_t>(step) ^ mix(i + 0x51ED)));
      factor *= (*part.step_factors)[draw % part.step_factors->size()];
    }
  }
  return factor;
}

}  // namespace distlab::strategy
