// Matrix products whose shapes Eigen's own threading handles poorly.
//
// A weight gradient W^T-style product, C += A^T B with A (K, M) and B (K, N),
// has a small output (the kernel) and a long reduction over K (every position
// of every example). Eigen splits a product's output among threads, so here
// it would use one. This splits K into fixed chunks instead, multiplies the
// chunks in parallel and adds the partial products in chunk order: the plan
// depends on the shapes only, so the result is the same for any number of
// threads.
#pragma once

#include "nn/tensor.h"

namespace distlab::nn {

// C += A^T * B. A: (K, M), B: (K, N), C: (M, N). Row-major views.
void add_transposed_product(MatrixMap c, ConstMatrixMap a, ConstMatrixMap b);

}  // namespace distlab::nn
