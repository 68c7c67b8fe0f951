// Selects a contiguous range of input columns (the numeric features of a
// tabular row, say) so that a branch of the model sees only them.
#pragma once

#include "nn/layer.h"

namespace distlab::nn {

class Columns : public Layer {
 public:
  Columns(std::string name, Shape input, int first, int count);

  std::string kind() const override { return "columns"; }
  void forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) override;
  void backward(const Matrix& x, const Matrix& y, const Matrix& dy, Matrix* dx) override;
  LayerCost cost(int, bool) const override { return {}; }  // a view on a device

 private:
  int first_;
  int count_;
};

}  // namespace distlab::nn
