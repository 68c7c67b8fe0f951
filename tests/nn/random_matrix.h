// A matrix of seeded standard normal values, for tests of products.
#pragma once

#include <cstdint>

#include "nn/random.h"
#include "nn/tensor.h"

namespace distlab::testing {

inline nn::Matrix random_matrix(Eigen::Index rows, Eigen::Index cols, uint64_t seed) {
  nn::Rng rng(seed);
  nn::Matrix m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = rng.normal();
  return m;
}

}  // namespace distlab::testing
