#include "nn/data/data_source.h"

#include <catch2/catch.hpp>

#include "common/error.h"
#include "nn/data/taxi.h"
#include "nn/data/taxi_csv.h"
#include "nn/data/taxi_synthetic.h"
#include "test_files.h"

using namespace distlab::nn;

TEST_CASE("The default source is Fashion-MNIST with its two splits") {
  const DataSplits d = load_data("fashion-mnist", {{28, 28, 1}, 10}, 0);
  CHECK(d.train.size() == 60000);
  CHECK(d.test.size() == 10000);
}

TEST_CASE("Synthetic sources take the model's shape and split five to one") {
  const DataSplits images = load_data("synthetic:600", {{8, 8, 3}, 4}, 1);
  CHECK(images.train.size() == 500);
  CHECK(images.test.size() == 100);
  CHECK(images.train.example_shape == Shape{8, 8, 3});
  CHECK(images.train.num_classes == 4);
  const DataSplits taxi = load_data("synthetic-taxi:120", {Shape::flat(kTaxiFeatureCount), 2}, 1);
  CHECK(taxi.train.size() == 100);
  CHECK(taxi.test.size() == 20);
}

TEST_CASE("A taxi CSV keeps its last fifth for testing") {
  distlab::test::TempDir dir;
  const std::string path = dir.file("trips.csv");
  write_taxi_csv(path, generate_taxi_trips(50, 3));
  const DataSplits d = load_data("taxi:" + path, {Shape::flat(kTaxiFeatureCount), 2}, 0);
  CHECK(d.train.size() + d.test.size() == 50);
  CHECK(d.test.size() == 10);
}

TEST_CASE("Bad data sources are refused with the accepted forms") {
  using distlab::InputError;
  CHECK_THROWS_AS(load_data("mnist", {{28, 28, 1}, 10}, 0), InputError);
  CHECK_THROWS_WITH(load_data("mnist", {{28, 28, 1}, 10}, 0),
                    Catch::Matchers::Contains("fashion-mnist[:DIR], cifar10:DIR"));
  CHECK_THROWS_WITH(load_data("synthetic:x", {{28, 28, 1}, 10}, 0),
                    Catch::Matchers::Contains("'x' is not an example count"));
  CHECK_THROWS_WITH(load_data("cifar10", {{32, 32, 3}, 10}, 0),
                    Catch::Matchers::Contains("needs a directory"));
  CHECK_THROWS_AS(load_data("fashion-mnist:/nonexistent", {{28, 28, 1}, 10}, 0),
                  distlab::DataError);
}

TEST_CASE("Data that do not fit the model are refused") {
  CHECK_THROWS_WITH(load_data("fashion-mnist", {{32, 32, 3}, 10}, 0),
                    Catch::Matchers::Contains("the model expects (32, 32, 3)"));
  CHECK_THROWS_WITH(load_data("fashion-mnist", {{28, 28, 1}, 5}, 0),
                    Catch::Matchers::Contains("has 10 classes, the model only 5"));
}
