#include "nn/layers/dropout.h"

#include "common/error.h"

namespace distlab::nn {

Dropout::Dropout(std::string name, Shape input, float rate)
    : Layer(std::move(name), input, input), rate_(rate) {
  if (!(rate >= 0.0f && rate < 1.0f)) throw Error("dropout rate must lie in [0, 1)");
}

void Dropout::forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) {
  masked_ = ctx.phase == Phase::kTrain && rate_ > 0.0f;
  if (!masked_) {
    y = x;
    return;
  }
  Rng rng(derive_seed(seed_, {ctx.step}));
  const float keep_scale = 1.0f / (1.0f - rate_);
  mask_.resize(x.rows(), x.cols());
  for (Eigen::Index i = 0; i < mask_.size(); ++i) {
    mask_.data()[i] = rng.uniform() < rate_ ? 0.0f : keep_scale;
  }
  y = x.cwiseProduct(mask_);
}

void Dropout::backward(const Matrix& /*x*/, const Matrix& /*y*/, const Matrix& dy, Matrix* dx) {
  if (!dx) return;
  if (masked_) {
    *dx = dy.cwiseProduct(mask_);
  } else {
    *dx = dy;
  }
}

LayerCost Dropout::cost(int batch) const {
  return elementwise_cost(int64_t{batch} * input_shape().size(), 2);
}

}  // namespace distlab::nn
