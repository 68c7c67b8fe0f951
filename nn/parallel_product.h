// Matrix products run in parallel by a fixed plan. The product is cut into
// blocks of result rows, result columns and depth (the inner dimension),
// as many as its size calls for and never as many as the threads: the plan
// depends on the shapes only. Each block is one single-threaded product
// (the kernels' product, Eigen's GEMM at the CPU's ISA level); the blocks
// are shared among the threads, and the depth blocks' partial results are
// added in a fixed order. So the result is bit-identical for any thread
// count, which Eigen's own threading does not give: it chooses its blocking
// of the inner dimension from the number of threads.
#pragma once

#include <cstdint>

#include "nn/kernels/kernels.h"
#include "nn/tensor.h"

namespace distlab::nn {

// How a (rows, cols) result with inner dimension `depth` is cut: the
// result's rows and columns into row_blocks x col_blocks tiles, and the
// depth into depth_blocks slices whose partial products are summed.
struct ProductPlan {
  int64_t row_blocks = 1, col_blocks = 1, depth_blocks = 1;

  int64_t blocks() const { return row_blocks * col_blocks * depth_blocks; }
  // The OpenMP parallel regions it runs: the blocks, then the sum of the
  // depth slices (for the layers' cost functions).
  int regions() const { return (blocks() > 1) + (depth_blocks > 1); }
};

ProductPlan plan_product(int64_t rows, int64_t cols, int64_t depth);

// c = op(a) * op(b), or c += op(a) * op(b) when `accumulate`.
void parallel_product(MatrixMap c, ConstMatrixMap a, Transpose ta, ConstMatrixMap b, Transpose tb,
                      bool accumulate = false);

}  // namespace distlab::nn
