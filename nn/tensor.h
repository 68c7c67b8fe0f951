// The NN core's only tensor vocabulary: row-major float matrices whose rows
// are examples. An image batch is (N, H*W*C) in NHWC order, so Flatten is
// free and a convolution's GEMM output is already the next layer's input.
#pragma once

#include <cstdint>
#include <string>

#include "nn/eigen.h"

namespace distlab::nn {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowVector = Eigen::Matrix<float, 1, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<Matrix>;
using ConstMatrixMap = Eigen::Map<const Matrix>;
using RowVectorMap = Eigen::Map<RowVector>;
using ConstRowVectorMap = Eigen::Map<const RowVector>;

// Views of a whole matrix, for functions that take maps (of a matrix, a
// parameter block or a chunk of rows alike).
inline MatrixMap as_map(Matrix& m) {
  return {m.data(), m.rows(), m.cols()};
}
inline ConstMatrixMap as_map(const Matrix& m) {
  return {m.data(), m.rows(), m.cols()};
}
inline ConstMatrixMap as_const(const MatrixMap& m) {
  return {m.data(), m.rows(), m.cols()};
}

// The shape of one example: images are (height, width, channels); flat
// feature vectors are (1, 1, features).
struct Shape {
  int height = 1;
  int width = 1;
  int channels = 1;

  static Shape flat(int features) { return {1, 1, features}; }
  int64_t size() const { return int64_t{height} * width * channels; }
  bool is_flat() const { return height == 1 && width == 1; }
  bool operator==(const Shape&) const = default;
  std::string to_string() const;
};

}  // namespace distlab::nn
