#include "nn/parallel_product.h"

#include <algorithm>

namespace distlab::nn {
namespace {

using kernels::Block;
using kernels::ConstBlock;

// At most this many blocks (a power of two, so that 1, 2 and 4 threads get
// equal shares), each at least kMinBlockWidth rows or columns wide: below
// that, packing the other operand again for every block outweighs the
// parallelism. (Measured on the lab MLP: 4 blocks beat 2 and 8.)
constexpr Eigen::Index kMaxBlocks = 4;
constexpr Eigen::Index kMinBlockWidth = 32;

Eigen::Index block_count(Eigen::Index extent) {
  Eigen::Index blocks = 1;
  while (blocks * 2 <= kMaxBlocks && extent / (blocks * 2) >= kMinBlockWidth) blocks *= 2;
  return blocks;
}

// Rows [first, first + width) of op(m): rows of m, or columns when m is
// transposed.
ConstBlock rows_of_op(ConstMatrixMap m, Transpose t, Eigen::Index first, Eigen::Index width) {
  const ConstBlock all = kernels::in(m);
  return t == Transpose::kNo ? kernels::middle_rows(all, first, width)
                             : kernels::middle_cols(all, first, width);
}

// Columns [first, first + width) of op(m).
ConstBlock cols_of_op(ConstMatrixMap m, Transpose t, Eigen::Index first, Eigen::Index width) {
  return rows_of_op(m, t == Transpose::kNo ? Transpose::kYes : Transpose::kNo, first, width);
}

}  // namespace

bool product_in_parallel(int64_t rows, int64_t cols) {
  return block_count(std::max<Eigen::Index>(rows, cols)) > 1;
}

// Cuts the longer side of c: a block of rows needs all of op(b) packed, a
// block of columns all of op(a), so the cut that repacks the smaller
// operand wins.
void parallel_product(MatrixMap c, ConstMatrixMap a, Transpose ta, ConstMatrixMap b, Transpose tb,
                      bool accumulate) {
  const auto& k = kernels::kernels();
  const bool by_rows = c.rows() > c.cols();
  const Eigen::Index extent = by_rows ? c.rows() : c.cols();
  const Eigen::Index blocks = block_count(extent);
  const Block all = kernels::out(c);
#pragma omp parallel for schedule(static) if (blocks > 1)
  for (Eigen::Index i = 0; i < blocks; ++i) {
    const Eigen::Index first = extent * i / blocks;
    const Eigen::Index width = extent * (i + 1) / blocks - first;
    if (by_rows) {
      k.product(kernels::middle_rows(all, first, width), rows_of_op(a, ta, first, width), ta,
                kernels::in(b), tb, accumulate);
    } else {
      k.product(kernels::middle_cols(all, first, width), kernels::in(a), ta,
                cols_of_op(b, tb, first, width), tb, accumulate);
    }
  }
}

}  // namespace distlab::nn
