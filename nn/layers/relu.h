// Stand-alone ReLU, for models that place the activation after another layer
// (Dense and Conv2D also take `activation: relu`, fused).
#pragma once

#include "nn/layer.h"

namespace distlab::nn {

class Relu : public Layer {
 public:
  Relu(std::string name, Shape input) : Layer(std::move(name), input, input) {}

  std::string kind() const override { return "relu"; }
  void forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) override;
  void backward(const Matrix& x, const Matrix& y, const Matrix& dy, Matrix* dx) override;
  LayerCost cost(int batch, bool input_gradient) const override;
};

}  // namespace distlab::nn
