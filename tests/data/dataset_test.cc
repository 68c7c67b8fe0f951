#include "nn/data/dataset.h"

#include <catch2/catch.hpp>

using namespace distlab::nn;

TEST_CASE("Gathering a batch copies the chosen rows and labels") {
  Dataset d;
  d.example_shape = Shape::flat(2);
  d.num_classes = 3;
  d.features = Matrix{{0, 1}, {2, 3}, {4, 5}};
  d.labels = {0, 1, 2};
  Matrix x;
  std::vector<int32_t> y;
  const std::vector<int64_t> idx{2, 0};
  gather_batch(d, idx, x, y);
  CHECK(x == Matrix{{4, 5}, {0, 1}});
  CHECK(y == std::vector<int32_t>{2, 0});
  CHECK(d.head(2).size() == 2);
  CHECK(d.head(2).features.row(1) == d.features.row(1));
}
