// Optimizer updates over the whole parameter buffer.
#include <cmath>

#include "nn/kernels/level.h"

namespace DISTLAB_KERNELS {

void sgd(const SgdStep& s, float* __restrict w, const float* __restrict g, float* __restrict v,
         int64_t n) {
  const float lr = s.learning_rate, momentum = s.momentum;
  if (s.nesterov) {
#pragma omp parallel for simd schedule(static) if (n > kOptimizerParallelValues)
    for (int64_t i = 0; i < n; ++i) {
      v[i] = momentum * v[i] - lr * g[i];
      w[i] += momentum * v[i] - lr * g[i];
    }
  } else {
#pragma omp parallel for simd schedule(static) if (n > kOptimizerParallelValues)
    for (int64_t i = 0; i < n; ++i) {
      v[i] = momentum * v[i] - lr * g[i];
      w[i] += v[i];
    }
  }
}

void adam(const AdamStep& s, float* __restrict w, const float* __restrict g, float* __restrict m,
          float* __restrict v, int64_t n) {
  const float b1 = s.beta1, b2 = s.beta2, eps = s.epsilon;
  const float step_size = s.step_size, inv_sqrt_c2 = s.inv_sqrt_c2;
#pragma omp parallel for simd schedule(static) if (n > kOptimizerParallelValues)
  for (int64_t i = 0; i < n; ++i) {
    m[i] = b1 * m[i] + (1 - b1) * g[i];
    v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
    w[i] -= step_size * m[i] / (std::sqrt(v[i]) * inv_sqrt_c2 + eps);
  }
}

void adagrad(const AdagradStep& s, float* __restrict w, const float* __restrict g,
             float* __restrict accumulator, int64_t n) {
  const float lr = s.learning_rate, eps = s.epsilon;
#pragma omp parallel for simd schedule(static) if (n > kOptimizerParallelValues)
  for (int64_t i = 0; i < n; ++i) {
    accumulator[i] += g[i] * g[i];
    w[i] -= lr * g[i] / (std::sqrt(accumulator[i]) + eps);
  }
}

// n^(-power) for the accumulator n: a square root for the usual -0.5.
template <bool kSquareRoot>
void ftrl_loop(const FtrlStep& s, float* __restrict w, const float* __restrict g,
               float* __restrict accumulator, float* __restrict linear, int64_t n) {
  const float lr = s.learning_rate, power = -s.learning_rate_power, l1 = s.l1;
  const float two_l2 = 2 * s.l2;
  auto root = [power](float x) { return kSquareRoot ? std::sqrt(x) : std::pow(x, power); };
#pragma omp parallel for simd schedule(static) if (n > kOptimizerParallelValues)
  for (int64_t i = 0; i < n; ++i) {
    const float old_root = root(accumulator[i]);
    accumulator[i] += g[i] * g[i];
    const float new_root = root(accumulator[i]);
    linear[i] += g[i] - (new_root - old_root) / lr * w[i];
    const float quadratic = new_root / lr + two_l2;
    const float z = linear[i];
    w[i] = std::abs(z) > l1 ? (std::copysign(l1, z) - z) / quadratic : 0.0f;
  }
}

void ftrl(const FtrlStep& s, float* w, const float* g, float* accumulator, float* linear,
          int64_t n) {
  if (s.learning_rate_power == -0.5f) {
    ftrl_loop<true>(s, w, g, accumulator, linear, n);
  } else {
    ftrl_loop<false>(s, w, g, accumulator, linear, n);
  }
}

}  // namespace DISTLAB_KERNELS
