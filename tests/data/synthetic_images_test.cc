#include "nn/data/synthetic_images.h"

#include <catch2/catch.hpp>

#include "common/error.h"

using namespace distlab::nn;

namespace {

SyntheticImageOptions options(uint64_t seed) {
  SyntheticImageOptions o;
  o.examples = 500;
  o.shape = {8, 8, 3};
  o.num_classes = 7;
  o.noise = 0.3f;
  o.seed = seed;
  return o;
}

}  // namespace

TEST_CASE("Synthetic images have the asked shape and stay in the unit range") {
  const Dataset d = make_synthetic_images(options(1));
  CHECK(d.size() == 500);
  CHECK(d.example_shape == Shape{8, 8, 3});
  CHECK(d.features.cols() == 192);
  CHECK(d.num_classes == 7);
  CHECK(d.features.minCoeff() >= 0.0f);
  CHECK(d.features.maxCoeff() <= 1.0f);
  CHECK(*std::min_element(d.labels.begin(), d.labels.end()) == 0);
  CHECK(*std::max_element(d.labels.begin(), d.labels.end()) == 6);
}

TEST_CASE("The same seed gives bit-identical synthetic images") {
  const Dataset a = make_synthetic_images(options(42));
  const Dataset b = make_synthetic_images(options(42));
  CHECK(a.features == b.features);
  CHECK(a.labels == b.labels);
}

TEST_CASE("Different seeds give different synthetic images") {
  const Dataset a = make_synthetic_images(options(1));
  const Dataset b = make_synthetic_images(options(2));
  CHECK(a.features != b.features);
  CHECK(a.labels != b.labels);
}

TEST_CASE("More synthetic examples extend fewer") {
  auto o = options(3);
  const Dataset big = make_synthetic_images(o);
  o.examples = 100;
  const Dataset small = make_synthetic_images(o);
  CHECK(small.features == big.features.topRows(100));
}

TEST_CASE("A nearest-prototype rule recovers synthetic labels well above chance") {
  const auto o = options(5);
  const Dataset d = make_synthetic_images(o);
  const Matrix prototypes = synthetic_image_prototypes(o);
  int64_t correct = 0;
  for (int64_t i = 0; i < d.size(); ++i) {
    Eigen::Index best = 0;
    (prototypes.rowwise() - d.features.row(i)).rowwise().squaredNorm().minCoeff(&best);
    correct += best == d.labels[i];
  }
  const double accuracy = static_cast<double>(correct) / static_cast<double>(d.size());
  CAPTURE(accuracy);
  CHECK(accuracy > 0.9);  // chance is 1/7
}

TEST_CASE("Impossible synthetic image options are refused") {
  auto o = options(1);
  o.num_classes = 0;
  CHECK_THROWS_AS(make_synthetic_images(o), distlab::Error);
  o = options(1);
  o.shape = {0, 4, 1};
  CHECK_THROWS_AS(make_synthetic_images(o), distlab::Error);
  o = options(1);
  o.noise = -1.0f;
  CHECK_THROWS_AS(make_synthetic_images(o), distlab::Error);
}
