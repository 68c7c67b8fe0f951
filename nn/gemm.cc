#include "nn/gemm.h"

#include <vector>

namespace distlab::nn {
namespace {

// Rows of A and B per chunk: long enough that each chunk's product runs at
// full speed, short enough that the chunks of a batch keep two cores busy.
constexpr Eigen::Index kChunkRows = 2048;

}  // namespace

void add_transposed_product(MatrixMap c, ConstMatrixMap a, ConstMatrixMap b) {
  const Eigen::Index k = a.rows();
  const Eigen::Index chunks = (k + kChunkRows - 1) / kChunkRows;
  if (chunks <= 1) {
    c.noalias() += a.transpose() * b;
    return;
  }
  std::vector<Matrix> partial(chunks);  // (M, N) each: small beside A and B
#pragma omp parallel for schedule(dynamic)
  for (Eigen::Index i = 0; i < chunks; ++i) {
    const Eigen::Index begin = i * kChunkRows, rows = std::min(kChunkRows, k - begin);
    partial[i].resize(c.rows(), c.cols());
    partial[i].noalias() = a.middleRows(begin, rows).transpose() * b.middleRows(begin, rows);
  }
  for (const Matrix& p : partial) c += p;
}

}  // namespace distlab::nn
