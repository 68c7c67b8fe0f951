#include "nn/parallel_product.h"

namespace distlab::nn {
namespace {

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

// Cuts the longer side of c: a block of rows needs all of b packed, a block
// of columns all of a, so the cut that repacks the smaller operand wins.
template <typename A, typename B>
void run_plan(MatrixMap c, const A& a, const B& b, bool accumulate) {
  const bool by_rows = c.rows() > c.cols();
  const Eigen::Index extent = by_rows ? c.rows() : c.cols();
  const Eigen::Index blocks = block_count(extent);
#pragma omp parallel for schedule(static) if (blocks > 1)
  for (Eigen::Index i = 0; i < blocks; ++i) {
    const Eigen::Index first = extent * i / blocks;
    const Eigen::Index width = extent * (i + 1) / blocks - first;
    if (by_rows) {
      auto out = c.middleRows(first, width);
      if (accumulate)
        out.noalias() += a.middleRows(first, width) * b;
      else
        out.noalias() = a.middleRows(first, width) * b;
    } else {
      auto out = c.middleCols(first, width);
      if (accumulate)
        out.noalias() += a * b.middleCols(first, width);
      else
        out.noalias() = a * b.middleCols(first, width);
    }
  }
}

template <typename A>
void with_rhs(MatrixMap c, const A& a, ConstMatrixMap b, Transpose tb, bool accumulate) {
  if (tb == Transpose::kYes) {
    run_plan(c, a, b.transpose(), accumulate);
  } else {
    run_plan(c, a, b, accumulate);
  }
}

}  // namespace

void parallel_product(MatrixMap c, ConstMatrixMap a, Transpose ta, ConstMatrixMap b, Transpose tb,
                      bool accumulate) {
  if (ta == Transpose::kYes) {
    with_rhs(c, a.transpose(), b, tb, accumulate);
  } else {
    with_rhs(c, a, b, tb, accumulate);
  }
}

}  // namespace distlab::nn
