// Max pooling over NHWC rows; remembers where each maximum came from so that
// backward routes the gradient to exactly that input.
#pragma once

#include <vector>

#include "nn/layer.h"
#include "nn/layers/conv2d.h"

namespace distlab::nn {

using MaxPool2DOptions = Pool2DOptions;

class MaxPool2D : public Layer {
 public:
  MaxPool2D(std::string name, Shape input, const MaxPool2DOptions& options);

  std::string kind() const override { return "max_pool2d"; }
  void forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) override;
  void backward(const Matrix& x, const Matrix& y, const Matrix& dy, Matrix* dx) override;
  LayerCost cost(int batch, bool input_gradient) const override;

 private:
  MaxPool2DOptions opt_;
  AxisGeometry out_h_, out_w_;
  std::vector<int32_t> argmax_;  // (N, OH*OW*C): index into the input row
};

}  // namespace distlab::nn
