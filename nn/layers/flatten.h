// Flatten: (H, W, C) -> (H*W*C). Rows are already flat in NHWC order, so
// only the shape changes: a Sequential hands the input on without a copy,
// and a caller that runs the passes itself gets the values copied.
#pragma once

#include "nn/layer.h"

namespace distlab::nn {

class Flatten : public Layer {
 public:
  Flatten(std::string name, Shape input)
      : Layer(std::move(name), input, Shape::flat(static_cast<int>(input.size()))) {}

  std::string kind() const override { return "flatten"; }
  bool passes_values_through() const override { return true; }
  void forward(const Matrix& x, Matrix& y, const ForwardContext&) override { y = x; }
  void backward(const Matrix&, const Matrix&, const Matrix& dy, Matrix* dx) override {
    if (dx) *dx = dy;
  }
  LayerCost cost(int, bool) const override { return {}; }  // a reshape costs nothing on a device
};

}  // namespace distlab::nn
