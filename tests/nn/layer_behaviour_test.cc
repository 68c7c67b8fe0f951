// What layers do beyond their gradients: BatchNorm's two modes and moving
// statistics, dropout's scaling and seeding, regularizer penalties, and the
// errors that guard a layer's input.
#include <catch2/catch.hpp>
#include <numeric>

#include "gradient_check.h"
#include "nn/layers/batch_norm.h"
#include "nn/layers/dropout.h"
#include "nn/layers/embedding.h"
#include "nn/regularizer.h"
#include "nn/threads.h"

using namespace distlab::nn;
using namespace distlab::nn::testing;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("BatchNorm normalises with batch statistics in training") {
  BatchNorm bn("bn", Shape::flat(2), {.momentum = 0.9f, .epsilon = 1e-5f});
  BoundLayer bound(bn);
  // Views of the blocks: gamma and beta (trainable), moving mean and
  // variance (state).
  auto block = [](std::vector<float>& buffer, const ParamBlock& b) {
    return std::span(buffer).subspan(b.offset, b.size());
  };
  const auto gamma = block(bound.params, bound.trainable.block(0));
  const auto beta = block(bound.params, bound.trainable.block(1));
  const auto mean = block(bound.state, bound.state_layout.block(0));
  const auto variance = block(bound.state, bound.state_layout.block(1));
  std::fill(gamma.begin(), gamma.end(), 1.0f);
  std::fill(beta.begin(), beta.end(), 0.0f);
  std::fill(mean.begin(), mean.end(), 0.0f);
  std::fill(variance.begin(), variance.end(), 1.0f);
  const Matrix x{{1, 10}, {3, 10}, {5, 40}, {7, 40}};
  Matrix y;
  bn.forward(x, y, {Phase::kTrain, 0});

  SECTION("each feature has mean 0 and variance 1") {
    for (int c = 0; c < 2; ++c) {
      CHECK_THAT(y.col(c).mean(), WithinAbs(0.0, 1e-6));
      CHECK_THAT((y.col(c).array().square()).mean(), WithinAbs(1.0, 1e-4));
    }
  }
  SECTION("the moving statistics move toward the batch's") {
    // batch means 4 and 25, biased variances 5 and 225
    CHECK_THAT(mean[0], WithinAbs(0.1 * 4, 1e-6));
    CHECK_THAT(mean[1], WithinAbs(0.1 * 25, 1e-5));
    CHECK_THAT(variance[0], WithinAbs(0.9 + 0.1 * 5, 1e-5));
    CHECK_THAT(variance[1], WithinAbs(0.9 + 0.1 * 225, 1e-4));
  }
  SECTION("inference uses the moving statistics and leaves them alone") {
    mean[0] = 2.0f, mean[1] = 0.0f, variance[0] = 4.0f, variance[1] = 1.0f;
    const std::vector<float> before = bound.state;
    Matrix out;
    bn.forward(Matrix{{6, 3}}, out, {Phase::kInfer, 0});
    CHECK_THAT(out(0, 0), WithinAbs((6 - 2) / std::sqrt(4 + 1e-5), 1e-5));
    CHECK_THAT(out(0, 1), WithinAbs(3 / std::sqrt(1 + 1e-5), 1e-5));
    CHECK(bound.state == before);
  }
}

TEST_CASE("BatchNorm on images normalises each channel over batch and space") {
  const Shape in{2, 2, 2};
  BatchNorm bn("bn", in, {});
  BoundLayer bound(bn);
  std::fill(bound.params.begin(), bound.params.end(), 0.0f);
  const ParamBlock gamma = bound.trainable.block(0);
  std::fill_n(bound.params.begin() + gamma.offset, gamma.size(), 1.0f);
  const Matrix x = random_batch(3, in, 5);
  Matrix y;
  bn.forward(x, y, {Phase::kTrain, 0});
  const ConstMatrixMap channels(y.data(), 12, 2);
  CHECK_THAT(channels.col(0).mean(), WithinAbs(0.0, 1e-6));
  CHECK_THAT(channels.col(1).mean(), WithinAbs(0.0, 1e-6));
}

TEST_CASE("BatchNorm has the same bits at any thread count, in both modes") {
  // The threads share tiles of rows and channels. 700 features at batch
  // 128: many blocks of channels, a ragged last one. 16x16 images of 20
  // channels at batch 21: many chunks of rows, a ragged last one, and two
  // blocks of channels.
  const auto phase = GENERATE(Phase::kTrain, Phase::kInfer);
  const auto [in, batch] =
      GENERATE(std::pair{Shape::flat(700), 128}, std::pair{Shape{16, 16, 20}, 21});
  CAPTURE(phase == Phase::kTrain, in.to_string());
  const Matrix x = random_batch(batch, in, 11);
  const Matrix dy = random_batch(batch, in, 12);
  struct Run {
    Matrix y, dx;
    std::vector<float> grads, state;
  };
  std::vector<Run> runs;
  for (int threads : {1, 2, 3, 16}) {
    set_compute_threads(threads);
    BatchNorm bn("bn", in, {.momentum = 0.5f});
    BoundLayer bound(bn);
    std::fill(bound.params.begin(), bound.params.end(), 0.0f);
    const ParamBlock gamma = bound.trainable.block(0);
    std::fill_n(bound.params.begin() + gamma.offset, gamma.size(), 1.0f);
    std::fill(bound.state.begin(), bound.state.end(), 0.0f);
    const ParamBlock variance = bound.state_layout.block(1);
    std::fill_n(bound.state.begin() + variance.offset, variance.size(), 1.0f);
    Run run;
    bn.forward(x, run.y, {phase, 0});
    bn.backward(x, run.y, dy, &run.dx);
    run.grads = bound.grads;
    run.state = bound.state;
    runs.push_back(std::move(run));
  }
  set_compute_threads(2);
  // Against the formulas in double, gamma 1 and beta 0: with batch
  // statistics, x_hat = (x - mean) / sqrt(var + eps) and
  // dx = (dy - mean(dy) - x_hat * mean(dy * x_hat)) / sqrt(var + eps);
  // with the moving ones (0 and 1 at first), x / sqrt(1 + eps) and likewise dy.
  // One column per channel: (batch * height * width, channels).
  const auto per_channel = [&](const Matrix& m) {
    return ConstMatrixMap(m.data(), m.size() / in.channels, in.channels).cast<double>().eval();
  };
  const Eigen::MatrixXd xd = per_channel(x), dyd = per_channel(dy);
  const double eps = BatchNormOptions{}.epsilon;
  Eigen::MatrixXd y_ref, dx_ref;
  if (phase == Phase::kTrain) {
    const Eigen::RowVectorXd mean = xd.colwise().mean();
    const Eigen::MatrixXd centred = xd.rowwise() - mean;
    const Eigen::RowVectorXd inv_std =
        (centred.array().square().colwise().mean() + eps).rsqrt().matrix();
    y_ref = centred.array().rowwise() * inv_std.array();
    const Eigen::RowVectorXd mean_dy = dyd.colwise().mean();
    const Eigen::RowVectorXd mean_dy_x_hat = dyd.cwiseProduct(y_ref).colwise().mean();
    dx_ref = ((dyd.rowwise() - mean_dy).array() - y_ref.array().rowwise() * mean_dy_x_hat.array())
                 .rowwise() *
             inv_std.array();
  } else {
    y_ref = xd / std::sqrt(1 + eps);
    dx_ref = dyd / std::sqrt(1 + eps);
  }
  CHECK((per_channel(runs[0].y) - y_ref).cwiseAbs().maxCoeff() < 1e-5);
  CHECK((per_channel(runs[0].dx) - dx_ref).cwiseAbs().maxCoeff() < 1e-4);
  for (std::size_t i = 1; i < runs.size(); ++i) {
    CAPTURE(i);
    CHECK(runs[i].y == runs[0].y);
    CHECK(runs[i].dx == runs[0].dx);
    CHECK(runs[i].grads == runs[0].grads);
    CHECK(runs[i].state == runs[0].state);
  }
}

TEST_CASE("Inverted dropout zeroes about rate of the values and rescales the rest") {
  Dropout dropout("drop", Shape::flat(1000), 0.3f);
  dropout.seed(17);
  const Matrix x = Matrix::Ones(20, 1000);
  Matrix y;
  dropout.forward(x, y, {Phase::kTrain, 3});
  const double zeros = (y.array() == 0.0f).count() / 20000.0;
  CHECK_THAT(zeros, WithinAbs(0.3, 0.02));
  CHECK(((y.array() == 0.0f) || (y.array() - 1.0f / 0.7f).abs() < 1e-6f).all());
  CHECK_THAT(y.mean(), WithinAbs(1.0, 0.03));  // the expectation is kept

  SECTION("the same step draws the same mask, another step another") {
    Matrix again, other;
    dropout.forward(x, again, {Phase::kTrain, 3});
    dropout.forward(x, other, {Phase::kTrain, 4});
    CHECK(again == y);
    CHECK(other != y);
  }
  SECTION("inference is the identity") {
    Matrix out;
    dropout.forward(x, out, {Phase::kInfer, 3});
    CHECK(out == x);
  }
}

TEST_CASE("Regularizers add Keras' penalties and their gradients") {
  const Regularizer r{.l1 = 0.1f, .l2 = 0.01f};
  const std::vector<float> w{2.0f, -3.0f, 0.0f};
  CHECK_THAT(r.penalty(w), WithinAbs(0.1 * 5 + 0.01 * 13, 1e-7));
  std::vector<float> g{1.0f, 1.0f, 1.0f};
  r.add_gradient(w, g);
  CHECK_THAT(g[0], WithinAbs(1 + 0.1 + 0.04, 1e-6));
  CHECK_THAT(g[1], WithinAbs(1 - 0.1 - 0.06, 1e-6));
  CHECK_THAT(g[2], WithinAbs(1.0, 1e-7));  // sign(0) = 0
}

TEST_CASE("A regularizer's penalty and gradient have the same bits at any thread count") {
  // Several chunks and a ragged last one: the threads share the chunks.
  const Regularizer r{.l1 = 1e-3f, .l2 = 1e-3f};
  std::vector<float> w(100'003);
  Rng rng(3);
  for (float& v : w) v = rng.uniform(-1, 1);
  std::vector<double> penalties;
  std::vector<std::vector<float>> grads;
  for (int threads : {1, 2, 3, 16}) {
    set_compute_threads(threads);
    std::vector<float> g(w.size(), 0.5f);
    penalties.push_back(r.apply(w, g));
    CHECK(r.penalty(w) == penalties.back());  // apply returns the penalty's bits
    grads.push_back(std::move(g));
  }
  set_compute_threads(2);
  // Against a plain serial sum, to rounding.
  double l1 = 0, l2 = 0;
  for (float v : w) l1 += std::abs(v), l2 += double{v} * v;
  CHECK_THAT(penalties[0], WithinRel(1e-3 * l1 + 1e-3 * l2, 1e-5));
  CHECK_THAT(grads[0].back(),
             WithinAbs(0.5 + 1e-3 * (w.back() > 0 ? 1 : -1) + 2e-3 * w.back(), 1e-6));
  for (size_t i = 1; i < penalties.size(); ++i) {
    CAPTURE(i);
    CHECK(penalties[i] == penalties[0]);
    CHECK(grads[i] == grads[0]);
  }
}

TEST_CASE("An embedding refuses ids outside its vocabulary") {
  Embedding emb("taxi", Shape::flat(2), {.first_column = 0, .vocab = {3, 4}, .dim = 2});
  BoundLayer bound(emb);
  Matrix y;
  CHECK_NOTHROW(emb.forward(Matrix{{2, 3}}, y, {}));
  CHECK_THROWS_WITH(emb.forward(Matrix{{1, 4}}, y, {}),
                    Catch::Matchers::Contains("input column 1 of example 0 holds 4") &&
                        Catch::Matchers::Contains("vocabulary of 4"));
  CHECK_THROWS(emb.forward(Matrix{{0.5f, 1}}, y, {}));
  CHECK_THROWS(emb.forward(Matrix{{-1, 1}}, y, {}));
}

TEST_CASE("An embedding looks up one table row per column") {
  Embedding emb("e", Shape::flat(2), {.first_column = 0, .vocab = {2, 3}, .dim = 2});
  BoundLayer bound(emb);
  std::iota(bound.params.begin(), bound.params.end(), 0.0f);  // row r holds (2r, 2r+1)
  Matrix y;
  emb.forward(Matrix{{1, 2}}, y, {});
  // column 0, id 1 -> table row 1; column 1, id 2 -> row 2 + 2 = 4
  CHECK(y == Matrix{{2, 3, 8, 9}});
}
