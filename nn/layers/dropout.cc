#include "nn/layers/dropout.h"

#include "common/error.h"

namespace distlab::nn {

namespace {
// Below this many values the mask is drawn on one thread: a parallel
// region costs more than it saves.
constexpr int64_t kParallelValues = int64_t{1} << 14;
}  // namespace

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
  const float keep_scale = 1.0f / (1.0f - rate_);
  mask_.resize(x.rows(), x.cols());
  y.resize(x.rows(), x.cols());
  // One stream per example, from (seed, step, example): the rows can be
  // drawn in parallel and the masks do not depend on the thread count.
#pragma omp parallel for schedule(static) if (x.size() > kParallelValues)
  for (Eigen::Index n = 0; n < x.rows(); ++n) {
    Rng rng(derive_seed(seed_, {ctx.step, static_cast<uint64_t>(n)}));
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      const float keep = rng.uniform() < rate_ ? 0.0f : keep_scale;
      mask_(n, j) = keep;
      y(n, j) = x(n, j) * keep;
    }
  }
}

void Dropout::backward(const Matrix& /*x*/, const Matrix& /*y*/, const Matrix& dy, Matrix* dx) {
  if (!dx) return;
  if (masked_) {
    *dx = dy.cwiseProduct(mask_);
  } else {
    *dx = dy;
  }
}

LayerCost Dropout::cost(int batch, bool input_gradient) const {
  const int64_t values = int64_t{batch} * input_shape().size();
  LayerCost c = elementwise_cost(values, 2, input_gradient);
  c.forward_regions = values > kParallelValues;
  return c;
}

}  // namespace distlab::nn
