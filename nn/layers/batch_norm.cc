#include "nn/layers/batch_norm.h"

#include <algorithm>
#include <cmath>

#include "nn/kernels/kernels.h"

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

namespace {

using kernels::kNormBlockChannels;

// Channels are worked through in fixed blocks shared among the threads
// (the kernels do one block); a channel's results depend on its block
// only, so they have the same bits at any thread count.
Eigen::Index channel_blocks(Eigen::Index channels) {
  return (channels + kNormBlockChannels - 1) / kNormBlockChannels;
}

// Below this many values one thread does it all: a parallel region costs
// more than it saves.
constexpr int64_t kParallelValues = int64_t{1} << 14;

bool in_parallel(int64_t rows, Eigen::Index channels) {
  return channel_blocks(channels) > 1 && rows * channels > kParallelValues;
}

// Runs `body(first, width)` for every block of channels [first, first + width).
template <typename Body>
void for_channel_blocks(Eigen::Index rows, Eigen::Index channels, Body&& body) {
  const Eigen::Index blocks = channel_blocks(channels);
#pragma omp parallel for schedule(static) if (in_parallel(rows, channels))
  for (Eigen::Index b = 0; b < blocks; ++b) {
    const Eigen::Index first = b * kNormBlockChannels;
    body(first, std::min(channels - first, kNormBlockChannels));
  }
}

}  // namespace

void BatchNorm::forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) {
  const Eigen::Index rows = x.size() / channels_;  // N*H*W values per channel
  const kernels::ConstBlock in(x.data(), rows, channels_, Eigen::OuterStride<>(channels_));
  float* moving_mean = state(moving_mean_).data();
  float* moving_variance = state(moving_variance_).data();
  const float* gamma = param(gamma_).data();
  const float* beta = param(beta_).data();
  batch_statistics_ = ctx.phase == Phase::kTrain;
  x_hat_.resize(rows, channels_);
  inv_std_.resize(channels_);
  y.resize(x.rows(), x.cols());
  const kernels::Block normalized(x_hat_.data(), rows, channels_, Eigen::OuterStride<>(channels_));
  const kernels::Block out(y.data(), rows, channels_, Eigen::OuterStride<>(channels_));
  const kernels::Kernels& k = kernels::kernels();

  for_channel_blocks(rows, channels_, [&](Eigen::Index first, Eigen::Index width) {
    float mean[kNormBlockChannels], variance[kNormBlockChannels];
    float* inv_std = inv_std_.data() + first;
    if (batch_statistics_) {
      k.batch_norm_statistics(kernels::middle_cols(in, first, width), mean, variance);
      for (Eigen::Index c = 0; c < width; ++c) {
        const float m = opt_.momentum;
        moving_mean[first + c] = m * moving_mean[first + c] + (1 - m) * mean[c];
        moving_variance[first + c] = m * moving_variance[first + c] + (1 - m) * variance[c];
      }
    } else {
      std::copy_n(moving_mean + first, width, mean);
      std::copy_n(moving_variance + first, width, variance);
    }
    for (Eigen::Index c = 0; c < width; ++c) inv_std[c] = 1 / std::sqrt(variance[c] + opt_.epsilon);
    k.batch_norm_normalize(kernels::middle_cols(in, first, width), mean, inv_std, gamma + first,
                           beta + first, kernels::middle_cols(normalized, first, width),
                           kernels::middle_cols(out, first, width));
  });
}

void BatchNorm::backward(const Matrix& x, const Matrix& /*y*/, const Matrix& dy, Matrix* dx) {
  const Eigen::Index rows = x_hat_.rows();
  const kernels::ConstBlock d_out(dy.data(), rows, channels_, Eigen::OuterStride<>(channels_));
  const kernels::ConstBlock normalized = kernels::in(x_hat_);
  float* d_gamma = grad(gamma_).data();
  float* d_beta = grad(beta_).data();
  const float* gamma = param(gamma_).data();
  if (dx) dx->resize(x.rows(), x.cols());
  const kernels::Kernels& k = kernels::kernels();

  for_channel_blocks(rows, channels_, [&](Eigen::Index first, Eigen::Index width) {
    const kernels::ConstBlock g = kernels::middle_cols(d_out, first, width);
    const kernels::ConstBlock x_hat = kernels::middle_cols(normalized, first, width);
    double sum_dy[kNormBlockChannels], sum_dy_x_hat[kNormBlockChannels];
    k.batch_norm_gradient_sums(g, x_hat, sum_dy, sum_dy_x_hat);
    for (Eigen::Index c = 0; c < width; ++c) {
      d_gamma[first + c] += static_cast<float>(sum_dy_x_hat[c]);
      d_beta[first + c] += static_cast<float>(sum_dy[c]);
    }
    if (!dx) return;
    // With batch statistics the mean and variance depend on every input:
    // dx = gamma * inv_std * (dy - mean(dy) - x_hat * mean(dy * x_hat)).
    // With the moving ones, dx = gamma * inv_std * dy.
    float scale[kNormBlockChannels], mean_dy[kNormBlockChannels] = {},
                                     mean_dy_x_hat[kNormBlockChannels] = {};
    for (Eigen::Index c = 0; c < width; ++c) {
      scale[c] = gamma[first + c] * inv_std_[first + c];
      if (batch_statistics_) {
        mean_dy[c] = static_cast<float>(sum_dy[c] / rows);
        mean_dy_x_hat[c] = static_cast<float>(sum_dy_x_hat[c] / rows);
      }
    }
    const kernels::Block d_in(dx->data() + first, rows, width, Eigen::OuterStride<>(channels_));
    k.batch_norm_input_gradient(g, x_hat, mean_dy, mean_dy_x_hat, scale, d_in);
  });
}

LayerCost BatchNorm::cost(int batch, bool input_gradient) const {
  // Forward: statistics (two passes) and the normalisation, about 8 flops a
  // value. Backward: gamma and beta gradients (3 flops a value), and the
  // input gradient (5 more) when it is wanted.
  const double values = double{1} * batch * input_shape().size();
  LayerCost c = elementwise_cost(int64_t{batch} * input_shape().size(), 8, true, 2);
  c.backward_flops = (input_gradient ? 8 : 3) * values;
  c.backward_bytes = kFloatBytes * (input_gradient ? 3 : 2) * values;
  const bool parallel = in_parallel(int64_t{batch} * input_shape().size() / channels_, channels_);
  c.forward_regions = c.backward_regions = parallel ? 1 : 0;
  return c;
}

}  // namespace distlab::nn
