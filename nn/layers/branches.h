// Parallel paths over the same input whose outputs are combined: summed
// (wide & deep: logits = linear part + deep part; a residual block: the
// block's layers + its shortcut) or concatenated (numeric features beside
// embeddings). Each path is a Sequential; an empty one is the identity.
#pragma once

#include <memory>
#include <vector>

#include "nn/layers/sequential.h"

namespace distlab::nn {

class Branches : public Layer {
 public:
  Branches(std::string name, Shape input, std::vector<std::unique_ptr<Sequential>> paths,
           Combine combine);

  std::string kind() const override { return "branches"; }
  void declare(ParameterLayout& trainable, ParameterLayout& state) override;
  bool has_parameters() const override;
  void bind(const ParameterBuffers& buffers) override;
  void seed(uint64_t seed) override;
  void forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) override;
  void backward(const Matrix& x, const Matrix& y, const Matrix& dy, Matrix* dx) override;
  LayerCost cost(int batch, bool input_gradient) const override;
  void collect_costs(int batch, bool input_gradient,
                     std::vector<LayerCostEntry>& out) const override;

 private:
  // The combination alone: the sum or the concatenation, and backward the
  // paths' input gradients summed.
  LayerCost combine_cost(int batch, bool input_gradient) const;

  std::vector<std::unique_ptr<Sequential>> paths_;
  Combine combine_;
  std::vector<const Matrix*> outputs_;  // each path's last output
  Matrix dy_part_;                      // one path's share of dy (concat)
  Matrix dx_part_;                      // one path's dx, before summing
};

}  // namespace distlab::nn
