#include "nn/layers/batch_norm.h"

namespace distlab::nn {

BatchNorm::BatchNorm(std::string name, Shape input, const BatchNormOptions& options)
    : Layer(std::move(name), input, input), opt_(options), channels_(input.channels) {}

void BatchNorm::declare(ParameterLayout& trainable, ParameterLayout& state) {
  auto add = [&](ParameterLayout& layout, const char* what, Init init) {
    return layout.block(layout.add({name() + "/" + what, 1, channels_, init}));
  };
  gamma_ = add(trainable, "gamma", Init::kOnes);
  beta_ = add(trainable, "beta", Init::kZeros);
  moving_mean_ = add(state, "moving_mean", Init::kZeros);
  moving_variance_ = add(state, "moving_variance", Init::kOnes);
}

void BatchNorm::forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) {
  const Eigen::Index rows = x.size() / channels_;  // N*H*W values per channel
  ConstMatrixMap in(x.data(), rows, channels_);
  auto moving_mean = state(moving_mean_);
  auto moving_variance = state(moving_variance_);
  batch_statistics_ = ctx.phase == Phase::kTrain;

  RowVector mean;
  if (batch_statistics_) {
    mean = in.colwise().mean();
    const RowVector variance = (in.rowwise() - mean).array().square().colwise().mean();
    inv_std_ = (variance.array() + opt_.epsilon).rsqrt();
    moving_mean = opt_.momentum * moving_mean + (1 - opt_.momentum) * mean;
    moving_variance = opt_.momentum * moving_variance + (1 - opt_.momentum) * variance;
  } else {
    mean = moving_mean.row(0);
    inv_std_ = (moving_variance.row(0).array() + opt_.epsilon).rsqrt();
  }
  x_hat_.resize(rows, channels_);
  x_hat_ = (in.rowwise() - mean).array().rowwise() * inv_std_.array();
  y.resize(x.rows(), x.cols());
  MatrixMap out(y.data(), rows, channels_);
  out = (x_hat_.array().rowwise() * param(gamma_).row(0).array()).rowwise() +
        param(beta_).row(0).array();
}

void BatchNorm::backward(const Matrix& x, const Matrix& /*y*/, const Matrix& dy, Matrix* dx) {
  const Eigen::Index rows = x_hat_.rows();
  ConstMatrixMap d_out(dy.data(), rows, channels_);
  grad(gamma_) += d_out.cwiseProduct(x_hat_).colwise().sum();
  grad(beta_) += d_out.colwise().sum();
  if (!dx) return;
  dx->resize(x.rows(), x.cols());
  MatrixMap d_in(dx->data(), rows, channels_);
  const RowVector scale = param(gamma_).row(0).array() * inv_std_.array();
  if (!batch_statistics_) {
    d_in = d_out.array().rowwise() * scale.array();
    return;
  }
  // With batch statistics the mean and variance depend on every input:
  // dx = gamma * inv_std * (dy - mean(dy) - x_hat * mean(dy * x_hat)).
  const RowVector mean_dy = d_out.colwise().mean();
  const RowVector mean_dy_xhat = d_out.cwiseProduct(x_hat_).colwise().mean();
  d_in = ((d_out.rowwise() - mean_dy).array() - x_hat_.array().rowwise() * mean_dy_xhat.array())
             .rowwise() *
         scale.array();
}

LayerCost BatchNorm::cost(int batch, bool input_gradient) const {
  // Forward: statistics (two passes) and the normalisation, about 8 flops a
  // value. Backward: gamma and beta gradients (3 flops a value), and the
  // input gradient (5 more) when it is wanted.
  const double values = double{1} * batch * input_shape().size();
  LayerCost c = elementwise_cost(int64_t{batch} * input_shape().size(), 8, true, 2);
  c.backward_flops = (input_gradient ? 8 : 3) * values;
  c.backward_bytes = kFloatBytes * (input_gradient ? 3 : 2) * values;
  return c;
}

}  // namespace distlab::nn
