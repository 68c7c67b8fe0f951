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

}  // namespace DISTLAB_KERNELS
