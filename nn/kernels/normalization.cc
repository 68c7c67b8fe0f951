// Batch normalisation over a block of channels (nn/layers/batch_norm.cc
// shares the blocks among threads). Each channel's sums run down the rows
// in order, in double, one channel a vector lane: a channel's bits depend
// on its block only, never on which thread has it.
#include <algorithm>

#include "nn/kernels/level.h"

namespace DISTLAB_KERNELS {

void batch_norm_statistics(ConstBlock x, float* mean, float* variance) {
  const Eigen::Index width = x.cols(), stride = x.outerStride();
  // One pass: the sums of x and x^2 in double. var = E[x^2] - E[x]^2 loses
  // about log2(mean^2 / var) of double's 53 bits to cancellation, which
  // leaves more than float's 24 unless |mean| exceeds 2^14 standard
  // deviations.
  double sum[kNormBlockChannels] = {}, squares[kNormBlockChannels] = {};
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const float* row = x.data() + r * stride;
#pragma omp simd
    for (Eigen::Index c = 0; c < width; ++c) {
      const double v = row[c];
      sum[c] += v;
      squares[c] += v * v;
    }
  }
  const double n = static_cast<double>(x.rows());
  for (Eigen::Index c = 0; c < width; ++c) {
    const double m = sum[c] / n;
    mean[c] = static_cast<float>(m);
    variance[c] = static_cast<float>(std::max(0.0, squares[c] / n - m * m));
  }
}

void batch_norm_normalize(ConstBlock x, const float* mean, const float* inv_std, const float* gamma,
                          const float* beta, Block x_hat, Block y) {
  const Eigen::Index width = x.cols();
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const float* row = x.data() + r * x.outerStride();
    float* normalized = x_hat.data() + r * x_hat.outerStride();
    float* out = y.data() + r * y.outerStride();
#pragma omp simd
    for (Eigen::Index c = 0; c < width; ++c) {
      normalized[c] = (row[c] - mean[c]) * inv_std[c];
      out[c] = normalized[c] * gamma[c] + beta[c];
    }
  }
}

void batch_norm_gradient_sums(ConstBlock dy, ConstBlock x_hat, double* sum_dy,
                              double* sum_dy_x_hat) {
  const Eigen::Index width = dy.cols();
  for (Eigen::Index c = 0; c < width; ++c) sum_dy[c] = sum_dy_x_hat[c] = 0;
  for (Eigen::Index r = 0; r < dy.rows(); ++r) {
    const float* g = dy.data() + r * dy.outerStride();
    const float* normalized = x_hat.data() + r * x_hat.outerStride();
#pragma omp simd
    for (Eigen::Index c = 0; c < width; ++c) {
      sum_dy[c] += g[c];
      sum_dy_x_hat[c] += double{g[c]} * normalized[c];
    }
  }
}

void batch_norm_input_gradient(ConstBlock dy, ConstBlock x_hat, const float* mean_dy,
                               const float* mean_dy_x_hat, const float* scale, Block dx) {
  const Eigen::Index width = dy.cols();
  for (Eigen::Index r = 0; r < dy.rows(); ++r) {
    const float* g = dy.data() + r * dy.outerStride();
    const float* normalized = x_hat.data() + r * x_hat.outerStride();
    float* out = dx.data() + r * dx.outerStride();
#pragma omp simd
    for (Eigen::Index c = 0; c < width; ++c) {
      out[c] = (g[c] - mean_dy[c] - normalized[c] * mean_dy_x_hat[c]) * scale[c];
    }
  }
}

}  // namespace DISTLAB_KERNELS
