// Global average pooling (Keras' GlobalAveragePooling2D, the `reduce_mean`
// over height and width at the end of a ResNet): (H, W, C) -> (C), each
// channel's mean over the image.
#pragma once

#include "nn/layer.h"

namespace distlab::nn {

class GlobalAveragePool2D : public Layer {
 public:
  GlobalAveragePool2D(std::string name, Shape input);

  std::string kind() const override { return "global_average_pool2d"; }
  void forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) override;
  void backward(const Matrix& x, const Matrix& y, const Matrix& dy, Matrix* dx) override;
  LayerCost cost(int batch, bool input_gradient) const override;
};

}  // namespace distlab::nn
