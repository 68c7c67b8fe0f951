#include "nn/parallel_product.h"

#include <algorithm>
#include <vector>

namespace distlab::nn {
namespace {

using kernels::Block;
using kernels::ConstBlock;

// The plan's limits. Enough blocks for 16 threads to share evenly with
// room to balance (a power of two, so that 1, 2, 4, 8 and 16 threads get
// equal shares). Up to kSmallProductBlocks blocks of at least
// kMinSmallBlockFlops (on 2 threads, 4 blocks beat 2 even for a 9 MFLOP
// product); beyond that, none smaller than kMinBlockFlops, below which a
// block's call and packing cost more than the thread it employs saves.
// (Measured on 2 threads with bench/layers_benchmark's dense layers.)
constexpr int64_t kMaxBlocks = 64;
constexpr int64_t kSmallProductBlocks = 4;
constexpr double kMinSmallBlockFlops = 1e6;
constexpr double kMinBlockFlops = 8e6;
constexpr int64_t kMinBlockWidth = 32;   // result rows or columns
constexpr int64_t kMinBlockDepth = 128;  // each slice adds a partial result to write and sum
constexpr int64_t kMaxDepthBlocks = 8;   // each but the first holds a partial result

// Rows [r0, r0 + r) and columns [d0, d0 + d) of op(m), as a view of m.
ConstBlock op_block(ConstMatrixMap m, Transpose t, int64_t r0, int64_t r, int64_t d0, int64_t d) {
  const ConstBlock all = kernels::in(m);
  return t == Transpose::kNo ? kernels::middle_cols(kernels::middle_rows(all, r0, r), d0, d)
                             : kernels::middle_cols(kernels::middle_rows(all, d0, d), r0, r);
}

// Where block i of n starts along an extent (block i ends where i + 1 starts).
int64_t cut(int64_t extent, int64_t i, int64_t n) {
  return extent * i / n;
}

// Partial results of the depth slices after the first, per calling thread,
// kept between calls: a layer's products come back every step.
std::vector<float>& partials(size_t values) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < values) buffer.resize(values);
  return buffer;
}

// Result values per task of the sum of the depth slices. Any split gives
// the same bits: each value is summed on its own, in slice order.
constexpr int64_t kSumChunkValues = int64_t{1} << 14;

}  // namespace

// Halves a side of the block until the blocks are as many as the product's
// size calls for. A block of r rows, c columns and depth d packs d * (r + c)
// operand values and, as a depth slice, writes r * c partial sums, for
// r * c * d multiply-adds: an overhead of about 1/r + 1/c + 1/d per
// multiply-add, which grows least when the block's largest side is halved.
// So a wide, shallow product (a weight gradient) is cut along its rows, and
// a narrow, deep one (a layer's forward product at a small batch) along its
// depth, where no operand is packed twice.
ProductPlan plan_product(int64_t rows, int64_t cols, int64_t depth) {
  ProductPlan p;
  const double flops = 2.0 * double(rows) * double(cols) * double(depth);
  const auto worth_doubling = [&](int64_t blocks) {
    const double min_flops =
        blocks * 2 <= kSmallProductBlocks ? kMinSmallBlockFlops : kMinBlockFlops;
    return blocks * 2 <= kMaxBlocks && flops / double(blocks * 2) >= min_flops;
  };
  while (worth_doubling(p.blocks())) {
    const int64_t r = rows / p.row_blocks, c = cols / p.col_blocks, d = depth / p.depth_blocks;
    const bool can_r = r / 2 >= kMinBlockWidth, can_c = c / 2 >= kMinBlockWidth;
    const bool can_d = d / 2 >= kMinBlockDepth && p.depth_blocks < kMaxDepthBlocks;
    if (can_d && (!can_r || d >= r) && (!can_c || d >= c)) {
      p.depth_blocks *= 2;
    } else if (can_r && (!can_c || r >= c)) {
      p.row_blocks *= 2;
    } else if (can_c) {
      p.col_blocks *= 2;
    } else {
      break;
    }
  }
  return p;
}

// Depth slice 0 goes straight into c (accumulating when asked); slice s > 0
// into its own partial result, added to c afterwards in slice order.
void parallel_product(MatrixMap c, ConstMatrixMap a, Transpose ta, ConstMatrixMap b, Transpose tb,
                      bool accumulate) {
  const auto& k = kernels::kernels();
  const int64_t rows = c.rows(), cols = c.cols();
  const int64_t depth = ta == Transpose::kNo ? a.cols() : a.rows();
  const ProductPlan plan = plan_product(rows, cols, depth);
  const int64_t values = rows * cols;
  float* const partial =
      plan.depth_blocks > 1 ? partials(size_t(values * (plan.depth_blocks - 1))).data() : nullptr;
  const int64_t blocks = plan.blocks();
#pragma omp parallel for schedule(static) if (blocks > 1)
  for (int64_t i = 0; i < blocks; ++i) {
    const int64_t rb = i % plan.row_blocks, cb = i / plan.row_blocks % plan.col_blocks;
    const int64_t db = i / (plan.row_blocks * plan.col_blocks);
    const int64_t r0 = cut(rows, rb, plan.row_blocks), nr = cut(rows, rb + 1, plan.row_blocks) - r0;
    const int64_t c0 = cut(cols, cb, plan.col_blocks), nc = cut(cols, cb + 1, plan.col_blocks) - c0;
    const int64_t d0 = cut(depth, db, plan.depth_blocks);
    const int64_t nd = cut(depth, db + 1, plan.depth_blocks) - d0;
    const Block into = db == 0 ? kernels::out(c)
                               : kernels::out(MatrixMap(partial + (db - 1) * values, rows, cols));
    // op(b)'s depth rows and result columns are op(b)^T's result rows and depth columns.
    const Transpose tb_flipped = tb == Transpose::kNo ? Transpose::kYes : Transpose::kNo;
    k.product(kernels::middle_cols(kernels::middle_rows(into, r0, nr), c0, nc),
              op_block(a, ta, r0, nr, d0, nd), ta, op_block(b, tb_flipped, c0, nc, d0, nd), tb,
              db == 0 && accumulate);
  }
  if (plan.depth_blocks == 1) return;
  const int64_t chunks = (values + kSumChunkValues - 1) / kSumChunkValues;
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (int64_t i = 0; i < chunks; ++i) {
    const int64_t first = i * kSumChunkValues, n = std::min(kSumChunkValues, values - first);
    for (int64_t s = 1; s < plan.depth_blocks; ++s)
      k.add(c.data() + first, partial + (s - 1) * values + first, n);
  }
}

}  // namespace distlab::nn
