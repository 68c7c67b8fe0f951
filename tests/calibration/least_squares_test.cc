// Non-negative least squares on relative error, the affine fit built on it
// and the median the probes keep.
#include "calibration/least_squares.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "calibration/measurement.h"
#include "common/error.h"
#include "support/error_message.h"

using namespace distlab;
using namespace distlab::calibration;
using distlab::testing::message_of;

TEST_CASE("a non-negative fit recovers the coefficients of exact data") {
  // t = 2 µs + x / (1 GB/s), over four decades of x.
  std::vector<Observation> observations;
  for (double x : {1e3, 1e4, 1e5, 1e6, 1e7}) observations.push_back({{1.0, x}, 2e-6 + x / 1e9});
  const LinearFit fit = fit_nonnegative(observations, "exact");
  REQUIRE(fit.coefficients.size() == 2);
  CHECK(fit.coefficients[0] == Approx(2e-6).epsilon(1e-6));
  CHECK(fit.coefficients[1] == Approx(1e-9).epsilon(1e-6));
  CHECK(fit.quality.median_error < 1e-9);
  CHECK(fit.quality.worst_error < 1e-9);
  CHECK(fit.predict({1.0, 5e5}) == Approx(2e-6 + 5e5 / 1e9).epsilon(1e-6));
}

TEST_CASE("a coefficient the data would make negative is zero, the others refitted") {
  // Exactly t = 2x - 1: the unconstrained intercept is -1.
  const std::vector<Observation> observations = {
      {{1.0, 1.0}, 1.0}, {{1.0, 2.0}, 3.0}, {{1.0, 3.0}, 5.0}};
  const LinearFit fit = fit_nonnegative(observations, "negative intercept");
  REQUIRE(fit.coefficients.size() == 2);
  CHECK(fit.coefficients[0] == 0.0);
  // Slope alone, least squares on c·x/t ≈ 1: c = Σ(x/t) / Σ(x/t)².
  const double a[] = {1.0, 2.0 / 3.0, 3.0 / 5.0};
  const double sum = a[0] + a[1] + a[2];
  const double squares = a[0] * a[0] + a[1] * a[1] + a[2] * a[2];
  CHECK(fit.coefficients[1] == Approx(sum / squares).epsilon(1e-9));
}

TEST_CASE("a non-negative fit refuses too few observations and non-positive times") {
  CHECK_THAT(message_of<Error>([] {
               fit_nonnegative({{{1.0, 2.0}, 1.0}}, "tiny");
             }),
             Catch::Contains("tiny") && Catch::Contains("1 observations cannot fit 2 terms"));
  CHECK_THAT(message_of<Error>([] {
               fit_nonnegative({{{1.0, 1.0}, 1.0}, {{1.0, 2.0}, 0.0}}, "zero");
             }),
             Catch::Contains("zero") && Catch::Contains("not positive"));
  CHECK_THROWS_AS(fit_nonnegative({{{1.0, 1.0}, 1.0}, {{1.0, 2.0}, -1.0}}, "negative"), Error);
  CHECK_THROWS_AS(fit_nonnegative({}, "none"), Error);
  CHECK_THROWS_AS(fit_nonnegative({{{1.0, 1.0}, 1.0}, {{1.0}, 2.0}}, "ragged"), Error);
}

TEST_CASE("fit quality is the median and worst relative error") {
  LinearFit fit;
  fit.coefficients = {1.0, 0.5};
  // Predicted 2, 3, 1 against measured 2, 2, 1.25: errors 0, 0.5, 0.2.
  const std::vector<Observation> odd = {{{1.0, 2.0}, 2.0}, {{1.0, 4.0}, 2.0}, {{1.0, 0.0}, 1.25}};
  FitQuality q = fit_quality(fit, odd);
  CHECK(q.median_error == Approx(0.2));
  CHECK(q.worst_error == Approx(0.5));
  // One more, predicted 1 against 1/1.1: error 0.1; the median of
  // {0, 0.1, 0.2, 0.5} is 0.15.
  std::vector<Observation> even = odd;
  even.push_back({{1.0, 0.0}, 1.0 / 1.1});
  q = fit_quality(fit, even);
  CHECK(q.median_error == Approx(0.15));
  CHECK(q.worst_error == Approx(0.5));
  CHECK(fit_quality(fit, {}).worst_error == 0.0);
}

TEST_CASE("an affine fit gives the fixed cost and the rate") {
  std::vector<Sample> samples;
  for (double size : {8.0, 1e3, 1e5, 1e7}) samples.push_back({size, 5e-5 + size / 2e9});
  const AffineFit fit = fit_affine(samples, "link");
  CHECK(fit.fixed_seconds == Approx(5e-5).epsilon(1e-6));
  CHECK(fit.rate == Approx(2e9).epsilon(1e-6));
  CHECK(fit.quality.worst_error < 1e-9);
}

TEST_CASE("an affine fit of times that do not grow with size has no rate") {
  const std::vector<Sample> samples = {{1.0, 3.0}, {2.0, 2.0}, {3.0, 1.5}};
  const AffineFit fit = fit_affine(samples, "flat");
  CHECK(fit.rate == 0.0);
  CHECK(fit.fixed_seconds > 1.5);
  CHECK(fit.fixed_seconds < 3.0);
  CHECK_THAT(message_of<Error>([] {
               fit_affine({{1.0, 1.0}}, "one sample");
             }),
             Catch::Contains("one sample"));
}

TEST_CASE("median of none, an odd and an even number of times") {
  CHECK(median({}) == 0.0);
  CHECK(median({4.0}) == 4.0);
  CHECK(median({3.0, 1.0, 2.0}) == 2.0);
  CHECK(median({4.0, 1.0, 3.0, 2.0}) == 2.5);
  CHECK(median({5.0, 5.0, 1.0, 9.0, 7.0, 2.0}) == 5.0);
}
