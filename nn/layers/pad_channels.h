// Zero channels before and after each pixel's own: (H, W, C) ->
// (H, W, before + C + after). It is the identity shortcut of a ResNet block
// that widens (the CIFAR ResNets' option A, `tf.pad` on the channel axis in
// TensorFlow's CIFAR-10 estimator): the new channels start at zero and have
// no parameters, so the shortcut costs no weights.
#pragma once

#include "nn/layer.h"

namespace distlab::nn {

class PadChannels : public Layer {
 public:
  PadChannels(std::string name, Shape input, int before, int after);

  std::string kind() const override { return "pad_channels"; }
  void forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) override;
  void backward(const Matrix& x, const Matrix& y, const Matrix& dy, Matrix* dx) override;
  LayerCost cost(int batch, bool input_gradient) const override;

 private:
  int before_;
};

}  // namespace distlab::nn
