#include "nn/optimizer.h"

#include <cmath>

#include "common/error.h"
#include "nn/kernels/kernels.h"

namespace distlab::nn {
namespace {

void check_sizes(const char* who, std::size_t expected, std::size_t params, std::size_t grads) {
  if (params != expected || grads != expected) {
    throw Error(std::string(who) + ": expected " + std::to_string(expected) +
                " parameters and gradients, got " + std::to_string(params) + " and " +
                std::to_string(grads));
  }
}

}  // namespace

Sgd::Sgd(int64_t size, const SgdOptions& options)
    : Optimizer(options.learning_rate), opt_(options), velocity_(size, 0.0f) {}

void Sgd::step(std::span<float> params, std::span<const float> grads) {
  check_sizes("sgd", velocity_.size(), params.size(), grads.size());
  const kernels::SgdStep step{
      .learning_rate = learning_rate_, .momentum = opt_.momentum, .nesterov = opt_.nesterov};
  kernels::kernels().sgd(step, params.data(), grads.data(), velocity_.data(),
                         static_cast<int64_t>(params.size()));
  ++steps_;
}

Adam::Adam(int64_t size, const AdamOptions& options)
    : Optimizer(options.learning_rate), opt_(options), m_(size, 0.0f), v_(size, 0.0f) {}

void Adam::step(std::span<float> params, std::span<const float> grads) {
  check_sizes("adam", m_.size(), params.size(), grads.size());
  ++steps_;
  const float b1 = opt_.beta1, b2 = opt_.beta2;
  // Bias corrections in double: beta^t underflows float precision early.
  const auto c1 = static_cast<float>(1.0 - std::pow(double{b1}, double(steps_)));
  const auto c2 = static_cast<float>(1.0 - std::pow(double{b2}, double(steps_)));
  // lr * m_hat / (sqrt(v_hat) + eps) with the corrections folded into two
  // scalars: one square root and one division per value.
  const kernels::AdamStep step{.beta1 = b1,
                               .beta2 = b2,
                               .epsilon = opt_.epsilon,
                               .step_size = learning_rate_ / c1,
                               .inv_sqrt_c2 = 1.0f / std::sqrt(c2)};
  kernels::kernels().adam(step, params.data(), grads.data(), m_.data(), v_.data(),
                          static_cast<int64_t>(params.size()));
}

Adagrad::Adagrad(int64_t size, const AdagradOptions& options)
    : Optimizer(options.learning_rate),
      opt_(options),
      accumulator_(size, options.initial_accumulator_value) {}

void Adagrad::step(std::span<float> params, std::span<const float> grads) {
  check_sizes("adagrad", accumulator_.size(), params.size(), grads.size());
  kernels::kernels().adagrad({.learning_rate = learning_rate_, .epsilon = opt_.epsilon},
                             params.data(), grads.data(), accumulator_.data(),
                             static_cast<int64_t>(params.size()));
  ++steps_;
}

Ftrl::Ftrl(int64_t size, const FtrlOptions& options)
    : Optimizer(options.learning_rate),
      opt_(options),
      accumulator_(size, options.initial_accumulator_value),
      linear_(size, 0.0f) {}

void Ftrl::step(std::span<float> params, std::span<const float> grads) {
  check_sizes("ftrl", accumulator_.size(), params.size(), grads.size());
  kernels::kernels().ftrl({.learning_rate = learning_rate_,
                           .learning_rate_power = opt_.learning_rate_power,
                           .l1 = opt_.l1,
                           .l2 = opt_.l2},
                          params.data(), grads.data(), accumulator_.data(), linear_.data(),
                          static_cast<int64_t>(params.size()));
  ++steps_;
}

}  // namespace distlab::nn
