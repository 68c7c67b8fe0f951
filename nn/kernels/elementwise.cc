// Element-wise kernels: fused bias and activation, their gradient, column
// sums (bias gradients) and the strategies' vector sums.
#include "nn/kernels/level.h"

namespace DISTLAB_KERNELS {

void bias_activation(Activation a, MatrixMap z, const float* bias) {
  if (bias) {
    const ConstRowVectorMap b(bias, z.cols());
    if (a == Activation::kRelu) {
      z = (z.rowwise() + b).cwiseMax(0.0f);
    } else {
      z.rowwise() += b;
    }
  } else if (a == Activation::kRelu) {
    z = z.cwiseMax(0.0f);
  }
}

void activation_gradient(Activation a, ConstMatrixMap y, ConstMatrixMap dy, MatrixMap dz) {
  if (a == Activation::kNone) {
    dz = dy;
  } else {  // ReLU: the gradient passes where the output is positive.
    dz.array() = (y.array() > 0.0f).select(dy.array(), 0.0f);
  }
}

void add_column_sums(ConstMatrixMap m, float* sums) {
  RowVectorMap(sums, m.cols()) += m.colwise().sum();
}

void add(float* __restrict sum, const float* __restrict values, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) sum[i] += values[i];
}

}  // namespace DISTLAB_KERNELS
