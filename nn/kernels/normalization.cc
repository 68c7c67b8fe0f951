// Batch normalisation over a tile of rows and channels (nn/layers/
// batch_norm.cc shares the tiles among threads and adds up their sums).
// Each channel's sums run down the tile's rows in order, in double, one
// channel a vector lane: a tile's bits never depend on which thread has it.
#include "nn/kernels/level.h"

namespace DISTLAB_KERNELS {

void batch_norm_sums(ConstBlock x, double* sums) {
  const Eigen::Index width = x.cols();
  double sum[kNormBlockChannels] = {}, squares[kNormBlockChannels] = {};
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const float* row = x.data() + r * x.outerStride();
#pragma omp simd
    for (Eigen::Index c = 0; c < width; ++c) {
      const double v = row[c];
      sum[c] += v;
      squares[c] += v * v;
    }
  }
  for (Eigen::Index c = 0; c < width; ++c) {
    sums[2 * c] = sum[c];
    sums[2 * c + 1] = squares[c];
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

void batch_norm_gradient_sums(ConstBlock dy, ConstBlock x_hat, double* sums) {
  const Eigen::Index width = dy.cols();
  double sum_dy[kNormBlockChannels] = {}, sum_dy_x_hat[kNormBlockChannels] = {};
  for (Eigen::Index r = 0; r < dy.rows(); ++r) {
    const float* g = dy.data() + r * dy.outerStride();
    const float* normalized = x_hat.data() + r * x_hat.outerStride();
#pragma omp simd
    for (Eigen::Index c = 0; c < width; ++c) {
      sum_dy[c] += g[c];
      sum_dy_x_hat[c] += double{g[c]} * normalized[c];
    }
  }
  for (Eigen::Index c = 0; c < width; ++c) {
    sums[2 * c] = sum_dy[c];
    sums[2 * c + 1] = sum_dy_x_hat[c];
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
