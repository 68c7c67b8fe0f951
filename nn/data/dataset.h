// A labelled data set held in memory: one row of float features per example.
// Images are NHWC scaled to [0, 1]; tabular rows hold numeric features and
// categorical ids (small integers stored exactly as floats). Data sets are
// read-only once loaded, so simulated workers in one process share one copy.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nn/tensor.h"

namespace distlab::nn {

struct Dataset {
  std::string name;            // "fashion-mnist/train", "taxi/synthetic", ...
  Shape example_shape;         // shape of one row of `features`
  int num_classes = 0;         // labels lie in [0, num_classes)
  Matrix features;             // (N, example_shape.size())
  std::vector<int32_t> labels; // (N)

  int64_t size() const { return static_cast<int64_t>(labels.size()); }

  // The first `count` examples (or all, if fewer): training on a subset.
  Dataset head(int64_t count) const;
};

// Copies the examples at `indices` into a batch, reusing the caller's
// storage: x becomes (indices.size(), example size), y (indices.size()).
void gather_batch(const Dataset& data, std::span<const int64_t> indices, Matrix& x,
                  std::vector<int32_t>& y);

}  // namespace distlab::nn
