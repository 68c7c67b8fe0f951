// Matrix products run in parallel by a fixed plan. The result's longer side
// is cut into a power-of-two number of blocks that depends on the shapes
// only; each block is one single-threaded product (the kernels' product,
// Eigen's GEMM at the CPU's ISA level), and the blocks are shared among the
// threads. So the result is bit-identical for any thread count, which
// Eigen's own threading does not give: it chooses its blocking of the inner
// dimension from the number of threads.
#pragma once

#include "nn/kernels/kernels.h"
#include "nn/tensor.h"

namespace distlab::nn {

// c = op(a) * op(b), or c += op(a) * op(b) when `accumulate`.
void parallel_product(MatrixMap c, ConstMatrixMap a, Transpose ta, ConstMatrixMap b, Transpose tb,
                      bool accumulate = false);

// Whether the product into a (rows, cols) result runs as a parallel region
// (more than one block), for the layers' cost functions.
bool product_in_parallel(int64_t rows, int64_t cols);

}  // namespace distlab::nn
