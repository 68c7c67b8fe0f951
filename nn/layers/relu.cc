#include "nn/layers/relu.h"

namespace distlab::nn {

void Relu::forward(const Matrix& x, Matrix& y, const ForwardContext& /*ctx*/) {
  y = x.cwiseMax(0.0f);
}

void Relu::backward(const Matrix& /*x*/, const Matrix& y, const Matrix& dy, Matrix* dx) {
  if (dx) *dx = (y.array() > 0.0f).select(dy, 0.0f);
}

LayerCost Relu::cost(int batch, bool input_gradient) const {
  return elementwise_cost(int64_t{batch} * input_shape().size(), 1, input_gradient);
}

}  // namespace distlab::nn
