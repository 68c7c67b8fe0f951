// Inverted dropout: in training, each value is zeroed with probability
// `rate` and the survivors scaled by 1 / (1 - rate), so inference is the
// identity. Masks come from (seed, step, example): a resumed run draws the
// same ones, and rows can be drawn in parallel.
#pragma once

#include "nn/layer.h"

namespace distlab::nn {

class Dropout : public Layer {
 public:
  Dropout(std::string name, Shape input, float rate);

  std::string kind() const override { return "dropout"; }
  void seed(uint64_t seed) override { seed_ = seed; }
  void forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) override;
  void backward(const Matrix& x, const Matrix& y, const Matrix& dy, Matrix* dx) override;
  LayerCost cost(int batch, bool input_gradient) const override;

 private:
  float rate_;
  uint64_t seed_ = 0;
  bool masked_ = false;  // whether the last forward applied a mask
  Matrix mask_;          // (N, size): 0 or 1 / (1 - rate)
};

}  // namespace distlab::nn
