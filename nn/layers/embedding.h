// Embeddings of categorical columns. The input row holds integer ids in the
// columns [first, first + vocab.size()); column j looks its id up in its own
// table of vocab[j] rows (all tables share one parameter block). `concat`
// places the vectors side by side (the deep part of wide & deep); `sum` adds
// them (with dim = classes, the linear "wide" part: one weight per id).
#pragma once

#include <vector>

#include "nn/layer.h"

namespace distlab::nn {

struct EmbeddingOptions {
  int first_column = 0;
  std::vector<int> vocab;  // table size of each column
  int dim = 1;
  Combine combine = Combine::kConcat;
  Regularizer regularizer;
};

class Embedding : public Layer {
 public:
  Embedding(std::string name, Shape input, const EmbeddingOptions& options);

  std::string kind() const override { return "embedding"; }
  void declare(ParameterLayout& trainable, ParameterLayout& state) override;
  bool has_parameters() const override { return true; }
  void forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) override;
  // Ids are not differentiable: dx is zero.
  void backward(const Matrix& x, const Matrix& y, const Matrix& dy, Matrix* dx) override;
  LayerCost cost(int batch, bool input_gradient) const override;

 private:
  int columns() const { return static_cast<int>(opt_.vocab.size()); }
  // The table row of column j's id in example n; refuses ids out of range.
  int64_t table_row(const Matrix& x, Eigen::Index n, int j) const;

  EmbeddingOptions opt_;
  std::vector<int64_t> table_offset_;  // first table row of each column
  ParamBlock table_;                   // (sum(vocab), dim)
};

}  // namespace distlab::nn
