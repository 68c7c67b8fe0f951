#include "nn/random.h"

#include <catch2/catch.hpp>
#include <numeric>
#include <vector>

using distlab::nn::derive_seed;
using distlab::nn::Rng;

TEST_CASE("The generator repeats its sequence for the same seed") {
  Rng a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next_u64();
    CHECK(x == b.next_u64());
    CHECK(x != c.next_u64());
  }
}

TEST_CASE("Uniform floats lie between 0 and 1 with mean one half") {
  Rng rng(7);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const float u = rng.uniform();
    REQUIRE(u >= 0.0f);
    REQUIRE(u < 1.0f);
    sum += u;
  }
  CHECK_THAT(sum / 100000, Catch::Matchers::WithinAbs(0.5, 0.01));
}

TEST_CASE("Normal draws have mean 0 and variance 1") {
  Rng rng(9);
  double sum = 0, square = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double v = rng.normal();
    sum += v;
    square += v * v;
  }
  CHECK_THAT(sum / n, Catch::Matchers::WithinAbs(0.0, 0.01));
  CHECK_THAT(square / n, Catch::Matchers::WithinAbs(1.0, 0.02));
}

TEST_CASE("Bounded integers are unbiased and in range") {
  Rng rng(3);
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 70000; ++i) {
    const auto k = rng.below(7);
    REQUIRE(k < 7);
    ++counts[k];
  }
  for (int c : counts) CHECK(std::abs(c - 10000) < 400);
}

TEST_CASE("A shuffle is a permutation and depends on the seed") {
  std::vector<int64_t> a(1000), b(1000);
  std::iota(a.begin(), a.end(), 0);
  std::iota(b.begin(), b.end(), 0);
  Rng r1(1), r2(2);
  distlab::nn::shuffle(a, r1);
  distlab::nn::shuffle(b, r2);
  CHECK(a != b);
  std::sort(a.begin(), a.end());
  for (int64_t i = 0; i < 1000; ++i) REQUIRE(a[i] == i);
}

TEST_CASE("Derived seeds differ per stream and repeat per input") {
  CHECK(derive_seed(1, {2, 3}) == derive_seed(1, {2, 3}));
  CHECK(derive_seed(1, {2, 3}) != derive_seed(1, {3, 2}));
  CHECK(derive_seed(1, {2}) != derive_seed(2, {2}));
  CHECK(derive_seed(1, {}) != derive_seed(1, {0}));
}
