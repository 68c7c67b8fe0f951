#include "nn/optimizer.h"

#include <cmath>

#include "common/error.h"

namespace distlab::nn {
namespace {

// Below this many values a parallel loop costs more than it saves.
constexpr int64_t kParallelThreshold = 1 << 15;

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
  const float lr = learning_rate_, momentum = opt_.momentum;
  float* __restrict w = params.data();
  const float* __restrict g = grads.data();
  float* __restrict v = velocity_.data();
  const auto n = static_cast<int64_t>(params.size());
  // Each value is updated on its own, so threads cannot change the result.
  if (opt_.nesterov) {
#pragma omp parallel for simd schedule(static) if (n > kParallelThreshold)
    for (int64_t i = 0; i < n; ++i) {
      v[i] = momentum * v[i] - lr * g[i];
      w[i] += momentum * v[i] - lr * g[i];
    }
  } else {
#pragma omp parallel for simd schedule(static) if (n > kParallelThreshold)
    for (int64_t i = 0; i < n; ++i) {
      v[i] = momentum * v[i] - lr * g[i];
      w[i] += v[i];
    }
  }
  ++steps_;
}

Adam::Adam(int64_t size, const AdamOptions& options)
    : Optimizer(options.learning_rate), opt_(options), m_(size, 0.0f), v_(size, 0.0f) {}

void Adam::step(std::span<float> params, std::span<const float> grads) {
  check_sizes("adam", m_.size(), params.size(), grads.size());
  ++steps_;
  const float b1 = opt_.beta1, b2 = opt_.beta2, eps = opt_.epsilon;
  // Bias corrections in double: beta^t underflows float precision early.
  const auto c1 = static_cast<float>(1.0 - std::pow(double{b1}, double(steps_)));
  const auto c2 = static_cast<float>(1.0 - std::pow(double{b2}, double(steps_)));
  // lr * m_hat / (sqrt(v_hat) + eps) with the corrections folded into two
  // scalars: one square root and one division per value.
  const float step_size = learning_rate_ / c1;
  const float inv_sqrt_c2 = 1.0f / std::sqrt(c2);
  float* __restrict w = params.data();
  const float* __restrict g = grads.data();
  float* __restrict m = m_.data();
  float* __restrict v = v_.data();
  const auto n = static_cast<int64_t>(params.size());
#pragma omp parallel for simd schedule(static) if (n > kParallelThreshold)
  for (int64_t i = 0; i < n; ++i) {
    m[i] = b1 * m[i] + (1 - b1) * g[i];
    v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
    w[i] -= step_size * m[i] / (std::sqrt(v[i]) * inv_sqrt_c2 + eps);
  }
}

}  // namespace distlab::nn
