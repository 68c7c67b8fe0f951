#include "nn/gemm.h"

#include <catch2/catch.hpp>

#include "gradient_check.h"
#include "nn/threads.h"

using namespace distlab::nn;
using distlab::nn::testing::random_batch;

TEST_CASE("The chunked transposed product equals Eigen's, for any thread count") {
  const int k = GENERATE(1, 100, 2048, 2049, 9000);
  CAPTURE(k);
  const Matrix a = random_batch(k, Shape::flat(7), 1);
  const Matrix b = random_batch(k, Shape::flat(5), 2);
  const Matrix start = random_batch(7, Shape::flat(5), 3);
  const Matrix expected = start + a.transpose() * b;

  std::vector<Matrix> results;
  for (int threads : {1, 2, 3}) {
    set_compute_threads(threads);
    Matrix c = start;
    add_transposed_product(MatrixMap(c.data(), 7, 5), ConstMatrixMap(a.data(), k, 7),
                           ConstMatrixMap(b.data(), k, 5));
    CHECK((c - expected).cwiseAbs().maxCoeff() <
          1e-3f * std::max(1.0f, expected.cwiseAbs().maxCoeff()));
    results.push_back(c);
  }
  set_compute_threads(2);
  CHECK(results[0] == results[1]);  // bit for bit
  CHECK(results[0] == results[2]);
}
