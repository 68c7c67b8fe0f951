// Average pooling over NHWC rows (Keras' AveragePooling2D). With `same`
// padding a window at the border averages only the pixels inside the image,
// as TensorFlow's AvgPool does: padding is not counted as zeros.
#pragma once

#include <vector>

#include "nn/layer.h"
#include "nn/layers/conv2d.h"

namespace distlab::nn {

using AveragePool2DOptions = Pool2DOptions;

class AveragePool2D : public Layer {
 public:
  AveragePool2D(std::string name, Shape input, const AveragePool2DOptions& options);

  std::string kind() const override { return "average_pool2d"; }
  void forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) override;
  void backward(const Matrix& x, const Matrix& y, const Matrix& dy, Matrix* dx) override;
  LayerCost cost(int batch, bool input_gradient) const override;

 private:
  // The input rows [first, last) of one output row or column.
  struct Window {
    int first = 0, last = 0;
  };
  static std::vector<Window> windows(int in, int pool, int stride, const AxisGeometry& axis);

  AveragePool2DOptions opt_;
  std::vector<Window> rows_, cols_;  // one per output row, per output column
};

}  // namespace distlab::nn
