#include "nn/data/dataset.h"

#include <algorithm>

namespace distlab::nn {

Dataset Dataset::head(int64_t count) const {
  const int64_t n = std::clamp<int64_t>(count, 0, size());
  Dataset out;
  out.name = name;
  out.example_shape = example_shape;
  out.num_classes = num_classes;
  out.features = features.topRows(n);
  out.labels.assign(labels.begin(), labels.begin() + n);
  return out;
}

void gather_batch(const Dataset& data, std::span<const int64_t> indices, Matrix& x,
                  std::vector<int32_t>& y) {
  const auto n = static_cast<Eigen::Index>(indices.size());
  x.resize(n, data.features.cols());
  y.resize(indices.size());
  for (Eigen::Index i = 0; i < n; ++i) {
    x.row(i) = data.features.row(indices[i]);
    y[i] = data.labels[indices[i]];
  }
}

}  // namespace distlab::nn
