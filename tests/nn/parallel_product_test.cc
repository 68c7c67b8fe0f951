// The parallel product's plan: blocks that follow the product's size, a
// result that is the product's, and bits that no thread count changes.
#include "nn/parallel_product.h"

#include <array>
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "nn/random.h"
#include "nn/threads.h"
#include "random_matrix.h"

using namespace distlab::nn;

namespace {

using distlab::testing::random_matrix;

bool power_of_two(int64_t n) {
  return n > 0 && (n & (n - 1)) == 0;
}

struct Case {
  Eigen::Index rows, cols, depth;
  Transpose ta, tb;
};

// Operands stored so that op(a) is (rows, depth) and op(b) is (depth, cols).
Matrix operand(Eigen::Index op_rows, Eigen::Index op_cols, Transpose t, uint64_t seed) {
  return t == Transpose::kNo ? random_matrix(op_rows, op_cols, seed)
                             : random_matrix(op_cols, op_rows, seed);
}

Matrix op(const Matrix& m, Transpose t) {
  return t == Transpose::kNo ? m : Matrix(m.transpose());
}

}  // namespace

TEST_CASE("A product's plan follows its size, not the threads", "[parallel_product]") {
  // The lab MLP's widest layer at batch 128: forward, weight gradient.
  const ProductPlan forward = plan_product(128, 300, 3072);
  const ProductPlan weights = plan_product(3072, 300, 128);
  CHECK(forward.blocks() >= 16);  // enough for 16 threads, where 4 was the cap
  CHECK(weights.blocks() >= 16);
  // A deep, narrow product is cut along its depth; a shallow, wide one not.
  CHECK(forward.depth_blocks > 1);
  CHECK(weights.depth_blocks == 1);
  CHECK(weights.row_blocks > weights.col_blocks);

  for (const auto& [rows, cols, depth] : std::vector<std::array<int64_t, 3>>{{128, 300, 3072},
                                                                             {3072, 300, 128},
                                                                             {128, 700, 500},
                                                                             {128, 64, 576},
                                                                             {1, 1, 1},
                                                                             {16, 10, 30},
                                                                             {4096, 4096, 4096},
                                                                             {100000, 40, 40}}) {
    CAPTURE(rows, cols, depth);
    const ProductPlan p = plan_product(rows, cols, depth);
    CHECK(power_of_two(p.blocks()));  // equal shares for 1, 2, 4, 8 and 16 threads
    CHECK(p.blocks() <= 64);
    // No block is thinner than 32 rows or columns unless the side had no
    // cut at all, nor shallower than 128 unless the depth had none.
    CHECK((p.row_blocks == 1 || rows / p.row_blocks >= 32));
    CHECK((p.col_blocks == 1 || cols / p.col_blocks >= 32));
    CHECK((p.depth_blocks == 1 || depth / p.depth_blocks >= 128));
    CHECK(p.regions() == (p.blocks() > 1) + (p.depth_blocks > 1));
  }
  // Small products get up to 4 blocks, large ones 64.
  CHECK(plan_product(128, 64, 576).blocks() == 4);
  CHECK(plan_product(16, 10, 30).blocks() == 1);
  CHECK(plan_product(4096, 4096, 4096).blocks() == 64);
}

TEST_CASE("The parallel product computes op(a) * op(b), accumulating when asked",
          "[parallel_product]") {
  const std::vector<Case> cases = {
      {128, 300, 3072, Transpose::kNo, Transpose::kNo},   // depth and column blocks
      {3072, 300, 128, Transpose::kYes, Transpose::kNo},  // row blocks, a weight gradient
      {128, 500, 700, Transpose::kNo, Transpose::kYes},   // an input gradient
      {200, 130, 1000, Transpose::kYes, Transpose::kYes},
      {7, 5, 3, Transpose::kNo, Transpose::kNo},  // one block
  };
  for (const Case& k : cases) {
    CAPTURE(k.rows, k.cols, k.depth, int(k.ta), int(k.tb));
    const Matrix a = operand(k.rows, k.depth, k.ta, 1);
    const Matrix b = operand(k.depth, k.cols, k.tb, 2);
    const Matrix expected = op(a, k.ta) * op(b, k.tb);
    const double scale = expected.cwiseAbs().maxCoeff();

    Matrix c(k.rows, k.cols);
    c.setConstant(1e9f);  // every value is written
    parallel_product(as_map(c), as_map(a), k.ta, as_map(b), k.tb);
    CHECK((c - expected).cwiseAbs().maxCoeff() <= 1e-5 * scale);

    const Matrix before = random_matrix(k.rows, k.cols, 3);
    c = before;
    parallel_product(as_map(c), as_map(a), k.ta, as_map(b), k.tb, /*accumulate=*/true);
    CHECK((c - (before + expected)).cwiseAbs().maxCoeff() <= 1e-5 * scale);
  }
}

TEST_CASE("The parallel product's bits are the same for any thread count", "[parallel_product]") {
  // One plan of each kind: depth slices summed afterwards, and row blocks.
  for (const Case& k : {Case{128, 300, 3072, Transpose::kNo, Transpose::kNo},
                        Case{3072, 300, 128, Transpose::kYes, Transpose::kNo}}) {
    CAPTURE(k.rows, k.cols, k.depth);
    REQUIRE(plan_product(k.rows, k.cols, k.depth).blocks() > 1);
    const Matrix a = operand(k.rows, k.depth, k.ta, 4);
    const Matrix b = operand(k.depth, k.cols, k.tb, 5);
    std::vector<Matrix> results;
    for (int threads : {1, 2, 3, 5, 16}) {
      set_compute_threads(threads);
      Matrix c = random_matrix(k.rows, k.cols, 6);
      parallel_product(as_map(c), as_map(a), k.ta, as_map(b), k.tb, /*accumulate=*/true);
      results.push_back(c);
    }
    set_compute_threads(2);
    for (size_t i = 1; i < results.size(); ++i) {
      CAPTURE(i);
      CHECK(std::memcmp(results[i].data(), results[0].data(), results[0].size() * sizeof(float)) ==
            0);
    }
  }
}
