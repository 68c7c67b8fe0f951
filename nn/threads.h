// How many threads the NN core's kernels (Eigen's GEMM, im2col, pooling)
// may use. One setting for both, so that timings and results are stable.
#pragma once

namespace distlab::nn {

void set_compute_threads(int threads);
int compute_threads();

}  // namespace distlab::nn
