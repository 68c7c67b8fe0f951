// Fully connected layer: y = act(x W + b).
#pragma once

#include "nn/activation.h"
#include "nn/layer.h"

namespace distlab::nn {

struct DenseOptions {
  int units = 0;
  Activation activation = Activation::kNone;
  bool use_bias = true;
  Regularizer kernel_regularizer;
  Regularizer bias_regularizer;
};

class Dense : public Layer {
 public:
  Dense(std::string name, Shape input, const DenseOptions& options);

  std::string kind() const override { return "dense"; }
  void declare(ParameterLayout& trainable, ParameterLayout& state) override;
  bool has_parameters() const override { return true; }
  void forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) override;
  void backward(const Matrix& x, const Matrix& y, const Matrix& dy, Matrix* dx) override;
  LayerCost cost(int batch, bool input_gradient) const override;

 private:
  DenseOptions options_;
  int inputs_;
  ParamBlock kernel_;  // (inputs, units)
  ParamBlock bias_;    // (1, units)
  Matrix dz_;          // (N, units) gradient before the activation
};

}  // namespace distlab::nn
