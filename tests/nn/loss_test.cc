#include "nn/loss.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "common/error.h"

using namespace distlab::nn;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("Uniform logits cost log(classes) and guess the first class") {
  const Matrix logits = Matrix::Zero(2, 4);
  const std::vector<int32_t> labels{0, 3};
  Matrix grad;
  const auto r = softmax_cross_entropy(logits, labels, grad);
  CHECK_THAT(r.loss, WithinRel(std::log(4.0), 1e-6));
  CHECK(r.correct == 1);
  // (softmax - onehot) / N: 0.25 / 2 off the label, (0.25 - 1) / 2 on it.
  CHECK_THAT(grad(0, 0), WithinAbs(-0.375, 1e-6));
  CHECK_THAT(grad(0, 1), WithinAbs(0.125, 1e-6));
  CHECK_THAT(grad(1, 3), WithinAbs(-0.375, 1e-6));
}

TEST_CASE("The loss gradient matches finite differences") {
  Matrix logits{{0.3f, -1.2f, 2.0f}, {1.5f, 0.1f, -0.4f}};
  const std::vector<int32_t> labels{2, 1};
  Matrix grad;
  softmax_cross_entropy(logits, labels, grad);
  const float eps = 1e-3f;
  for (Eigen::Index i = 0; i < logits.size(); ++i) {
    const float saved = logits.data()[i];
    logits.data()[i] = saved + eps;
    const double plus = softmax_cross_entropy(logits, labels).loss;
    logits.data()[i] = saved - eps;
    const double minus = softmax_cross_entropy(logits, labels).loss;
    logits.data()[i] = saved;
    CAPTURE(i);
    CHECK_THAT(grad.data()[i], WithinAbs((plus - minus) / (2 * eps), 1e-4));
  }
}

TEST_CASE("Huge logits give a finite loss") {
  const Matrix logits{{1e4f, -1e4f, 0.0f}};
  const std::vector<int32_t> labels{1};
  Matrix grad;
  const auto r = softmax_cross_entropy(logits, labels, grad);
  CHECK(std::isfinite(r.loss));
  CHECK_THAT(r.loss, WithinRel(2e4, 1e-6));
  CHECK(grad.allFinite());
}

TEST_CASE("A label outside the classes is refused with its example") {
  const Matrix logits = Matrix::Zero(2, 3);
  const std::vector<int32_t> labels{0, 3};
  CHECK_THROWS_WITH(softmax_cross_entropy(logits, labels),
                    "label 3 of example 1 is outside the model's 3 classes");
}
