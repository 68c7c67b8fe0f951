// The kernels' ISA levels: which one a process runs, and that every level
// this CPU can run computes what the baseline computes.
#include "nn/kernels/kernels.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "nn/random.h"
#include "random_matrix.h"
#include "support/error_message.h"

using namespace distlab;
using namespace distlab::nn;
using kernels::Kernels;

namespace {

using distlab::testing::random_matrix;

// The largest difference between two equally shaped matrices, relative to
// the largest magnitude in the expected one.
double relative_difference(const Matrix& got, const Matrix& expected) {
  const double scale = std::max(1.0, double(expected.cwiseAbs().maxCoeff()));
  return double((got - expected).cwiseAbs().maxCoeff()) / scale;
}

// The baseline every other level is held against: the last one built.
const Kernels& baseline() {
  return *kernels::runnable_levels().back();
}

}  // namespace

TEST_CASE("a process runs the best kernels its CPU runs, or those DISTLAB_ISA names", "[kernels]") {
  const auto runnable = kernels::runnable_levels();
  REQUIRE_FALSE(runnable.empty());
  const char* wanted = std::getenv("DISTLAB_ISA");
  const std::string expected = wanted && *wanted ? wanted : runnable.front()->level;
  CHECK(kernels::kernels().level == expected);
  CHECK(&kernels::kernels() == &kernels::choose_kernels(wanted));
}

TEST_CASE("a portable build carries x86-64, x86-64-v3 and x86-64-v4 kernels", "[kernels]") {
  if (kernels::build_arch() != "portable") {
    CHECK(kernels::built_levels() == std::vector<std::string>{kernels::build_arch()});
    return;
  }
  CHECK(kernels::built_levels() == std::vector<std::string>{"x86-64-v4", "x86-64-v3", "x86-64"});
  // Every x86-64 CPU runs the baseline; the rest follow the CPU's level.
  const std::string cpu = kernels::cpu_level();
  std::vector<std::string> expected;
  if (cpu == "x86-64-v4") expected.push_back("x86-64-v4");
  if (cpu == "x86-64-v4" || cpu == "x86-64-v3") expected.push_back("x86-64-v3");
  expected.push_back("x86-64");
  std::vector<std::string> runnable;
  for (const Kernels* k : kernels::runnable_levels()) runnable.emplace_back(k->level);
  CHECK(runnable == expected);
}

TEST_CASE("a level is chosen by name, and an unknown one is refused with the levels built",
          "[kernels]") {
  for (const Kernels* k : kernels::runnable_levels()) {
    CHECK(&kernels::choose_kernels(k->level) == k);
  }
  CHECK(&kernels::choose_kernels("") == kernels::runnable_levels().front());
  const std::string unknown =
      testing::message_of<Error>([] { kernels::choose_kernels("x86-64-v9"); });
  CHECK_THAT(unknown, Catch::Contains("DISTLAB_ISA=x86-64-v9 is not a level of this build") &&
                          Catch::Contains(kernels::built_levels().back()));
  if (kernels::cpu_level() != "x86-64-v4" && kernels::build_arch() == "portable") {
    CHECK_THAT(testing::message_of<Error>([] { kernels::choose_kernels("x86-64-v4"); }),
               Catch::Contains("cannot run that level"));
  }
}

TEST_CASE("every thread of a process runs the same kernels", "[kernels]") {
  const Kernels* main_thread = &kernels::kernels();
  std::vector<const Kernels*> seen(8, nullptr);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < seen.size(); ++t) {
    threads.emplace_back([&seen, t] { seen[t] = &kernels::kernels(); });
  }
  for (auto& t : threads) t.join();
  for (const Kernels* k : seen) CHECK(k == main_thread);
  int differing = 0;
#pragma omp parallel num_threads(4) reduction(+ : differing)
  differing += &kernels::kernels() != main_thread;
  CHECK(differing == 0);
}

TEST_CASE("every level's product agrees with the baseline for each transposition and block",
          "[kernels]") {
  const Matrix a = random_matrix(67, 45, 1), b = random_matrix(45, 38, 2);
  const Matrix at = a.transpose(), bt = b.transpose();
  const Matrix expected = (a.cast<double>() * b.cast<double>()).cast<float>();
  for (const Kernels* k : kernels::runnable_levels()) {
    INFO("level " << k->level);
    for (auto ta : {Transpose::kNo, Transpose::kYes}) {
      for (auto tb : {Transpose::kNo, Transpose::kYes}) {
        const Matrix& lhs = ta == Transpose::kNo ? a : at;
        const Matrix& rhs = tb == Transpose::kNo ? b : bt;
        Matrix c(67, 38);
        k->product(kernels::out(c), kernels::in(lhs), ta, kernels::in(rhs), tb, false);
        CHECK(relative_difference(c, expected) < 1e-5);
        k->product(kernels::out(c), kernels::in(lhs), ta, kernels::in(rhs), tb, true);
        CHECK(relative_difference(c, Matrix(2 * expected)) < 1e-5);
      }
    }
    // A block of columns of c from a block of columns of b: strided views.
    Matrix c = Matrix::Zero(67, 38);
    k->product(kernels::middle_cols(kernels::out(c), 10, 20), kernels::in(a), Transpose::kNo,
               kernels::middle_cols(kernels::in(b), 10, 20), Transpose::kNo, false);
    CHECK(relative_difference(Matrix(c.middleCols(10, 20)), Matrix(expected.middleCols(10, 20))) <
          1e-5);
    CHECK(c.leftCols(10).isZero());
    CHECK(c.rightCols(8).isZero());
  }
}

TEST_CASE("every level's element-wise kernels agree with the baseline", "[kernels]") {
  const Matrix z = random_matrix(33, 19, 3), dy = random_matrix(33, 19, 4);
  const Matrix bias = random_matrix(1, 19, 5);
  const Kernels& base = baseline();
  for (const Kernels* k : kernels::runnable_levels()) {
    INFO("level " << k->level);
    for (auto act : {Activation::kNone, Activation::kRelu}) {
      Matrix got = z, expected = z;
      k->bias_activation(act, as_map(got), bias.data());
      base.bias_activation(act, as_map(expected), bias.data());
      CHECK(got == expected);  // one add and one max per value: exact
      Matrix dz_got(33, 19), dz_expected(33, 19);
      k->activation_gradient(act, as_const(as_map(got)), as_map(dy), as_map(dz_got));
      base.activation_gradient(act, as_const(as_map(expected)), as_map(dy), as_map(dz_expected));
      CHECK(dz_got == dz_expected);
    }
    RowVector sums = RowVector::Ones(19), expected_sums = RowVector::Ones(19);
    k->add_column_sums(as_map(z), sums.data());
    base.add_column_sums(as_map(z), expected_sums.data());
    CHECK((sums - expected_sums).cwiseAbs().maxCoeff() < 1e-5f);
    CHECK((sums.array() - 1 - z.colwise().sum().array()).abs().maxCoeff() < 1e-5f);

    // Sums of two vectors: one rounding each, the same bits at every level.
    Matrix sum = z, own = dy;
    k->add(sum.data(), own.data(), sum.size());
    CHECK(sum == Matrix(z + dy));
  }
}

TEST_CASE("every level's max pooling picks the same values and positions", "[kernels]") {
  // 5x5 images of 3 channels, 2x2 pools with stride 2 and padding below and
  // to the right (TensorFlow's same padding of an odd size).
  const kernels::PoolGeometry g{.in_h = 5,
                                .in_w = 5,
                                .channels = 3,
                                .out_h = 3,
                                .out_w = 3,
                                .pool_h = 2,
                                .pool_w = 2,
                                .stride_h = 2,
                                .stride_w = 2,
                                .pad_top = 0,
                                .pad_left = 0};
  const Matrix image = random_matrix(1, 75, 6);
  std::vector<float> expected(27);
  std::vector<int32_t> expected_at(27);
  baseline().max_pool(g, image.data(), expected.data(), expected_at.data());
  for (int o = 0; o < 27; ++o) CHECK(image.data()[expected_at[o]] == expected[o]);
  // The top-left window of channel 0 is pixels 0, 1, 5, 6.
  float top_left = image.data()[0];
  for (int p : {1, 5, 6}) top_left = std::max(top_left, image.data()[p * 3]);
  CHECK(expected[0] == top_left);
  for (const Kernels* k : kernels::runnable_levels()) {
    INFO("level " << k->level);
    std::vector<float> got(27);
    std::vector<int32_t> got_at(27);
    k->max_pool(g, image.data(), got.data(), got_at.data());
    CHECK(got == expected);
    CHECK(got_at == expected_at);
  }
}

TEST_CASE("every level's optimizer steps agree with the baseline", "[kernels]") {
  const int64_t n = 40000;  // above the parallel threshold
  const Matrix w0 = random_matrix(1, n, 7), g = random_matrix(1, n, 8);
  for (bool nesterov : {false, true}) {
    const kernels::SgdStep s{.learning_rate = 0.1f, .momentum = 0.9f, .nesterov = nesterov};
    Matrix w_expected = w0, v_expected = Matrix::Zero(1, n);
    baseline().sgd(s, w_expected.data(), g.data(), v_expected.data(), n);
    CHECK(relative_difference(w_expected, Matrix(w0 - (nesterov ? 0.19f : 0.1f) * g)) < 1e-6);
    for (const Kernels* k : kernels::runnable_levels()) {
      INFO("level " << k->level << ", nesterov " << nesterov);
      Matrix w = w0, v = Matrix::Zero(1, n);
      k->sgd(s, w.data(), g.data(), v.data(), n);
      CHECK(relative_difference(w, w_expected) < 1e-6);
    }
  }
  const kernels::AdamStep s{.beta1 = 0.9f,
                            .beta2 = 0.999f,
                            .epsilon = 1e-7f,
                            .step_size = 0.01f / 0.1f,
                            .inv_sqrt_c2 = 1 / std::sqrt(0.001f)};
  Matrix w_expected = w0, m_expected = Matrix::Zero(1, n), v_expected = Matrix::Zero(1, n);
  baseline().adam(s, w_expected.data(), g.data(), m_expected.data(), v_expected.data(), n);
  // The first step moves every weight by the learning rate against its
  // gradient's sign (m_hat / sqrt(v_hat) = g / |g|).
  CHECK(relative_difference(w_expected, Matrix(w0.array() - 0.01f * g.array().sign())) < 1e-4);
  for (const Kernels* k : kernels::runnable_levels()) {
    INFO("level " << k->level);
    Matrix w = w0, m = Matrix::Zero(1, n), v = Matrix::Zero(1, n);
    k->adam(s, w.data(), g.data(), m.data(), v.data(), n);
    CHECK(relative_difference(w, w_expected) < 1e-6);
  }
}

TEST_CASE("a level's products are blocked for a 32 KiB L1, whatever the CPU's", "[kernels]") {
  // This file is compiled for x86-64 in a portable build, as the baseline
  // kernels are, so its own Eigen products are what those kernels run.
  if (kernels::build_arch() != "portable") return;
  const Matrix a = random_matrix(128, 3072, 9), b = random_matrix(3072, 300, 10);  // the MLP's
  Matrix from_kernel(128, 300);
  kernels::choose_kernels("x86-64").product(kernels::out(from_kernel), kernels::in(a),
                                            Transpose::kNo, kernels::in(b), Transpose::kNo, false);
  const std::ptrdiff_t l1 = Eigen::l1CacheSize(), l2 = Eigen::l2CacheSize(),
                       l3 = Eigen::l3CacheSize();
  auto product_for_l1 = [&](std::ptrdiff_t l1_bytes) {
    Eigen::setCpuCacheSizes(l1_bytes, l2, l3);
    Matrix c(128, 300);
    c.noalias() = a * b;
    return c;
  };
  // 48 KiB: the L1 of this development machine, and of Ice Lake and later.
  const Matrix for_32k = product_for_l1(32 * 1024), for_48k = product_for_l1(48 * 1024);
  Eigen::setCpuCacheSizes(l1, l2, l3);
  CHECK(from_kernel == for_32k);
  // The L1 size does change the bits, so the check above can tell.
  CHECK(for_48k != for_32k);
}
