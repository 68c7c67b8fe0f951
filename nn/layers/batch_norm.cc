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

// The (rows, C) values are cut into tiles of at most kChunkRows rows and
// kNormBlockChannels channels, a fixed cut that depends on the shape
// only. The threads share the tiles; each tile's sums are kept apart and
// added up per channel in row order afterwards, so the results have the
// same bits at any thread count. Row chunks give the threads work when
// channels are few and rows many (a ResNet's first stage: 16 channels,
// 131,072 rows); the MLP's 128 rows are one chunk.
constexpr Eigen::Index kChunkRows = 1024;
// Below this many values one thread does it all: a parallel region costs
// more than it saves.
constexpr int64_t kParallelValues = int64_t{1} << 14;

struct Tiling {
  Eigen::Index rows, channels, chunks, blocks;

  Tiling(Eigen::Index r, Eigen::Index c)
      : rows(r),
        channels(c),
        chunks(std::max<Eigen::Index>(1, (r + kChunkRows - 1) / kChunkRows)),
        blocks((c + kNormBlockChannels - 1) / kNormBlockChannels) {}
  bool parallel() const {
    return chunks * blocks > 1 && int64_t{rows} * channels > kParallelValues;
  }
};

struct Tile {
  Eigen::Index chunk, first_row, row_count;
  Eigen::Index first, width;  // channels [first, first + width)

  template <typename View>
  View of(View m) const {
    return kernels::middle_cols(kernels::middle_rows(m, first_row, row_count), first, width);
  }
};

// Runs `body(tile)` for every tile, in parallel when the layer is big enough.
template <typename Body>
void for_tiles(const Tiling& t, Body&& body) {
  const Eigen::Index tiles = t.chunks * t.blocks;
#pragma omp parallel for schedule(static) if (t.parallel())
  for (Eigen::Index i = 0; i < tiles; ++i) {
    const Eigen::Index chunk = i / t.blocks, first = i % t.blocks * kNormBlockChannels;
    const Eigen::Index first_row = chunk * kChunkRows;
    body(Tile{chunk, first_row, std::min(kChunkRows, t.rows - first_row), first,
              std::min(t.channels - first, kNormBlockChannels)});
  }
}

kernels::ConstBlock channel_view(const float* data, Eigen::Index rows, Eigen::Index channels) {
  return {data, rows, channels, Eigen::OuterStride<>(channels)};
}
kernels::Block channel_view(float* data, Eigen::Index rows, Eigen::Index channels) {
  return {data, rows, channels, Eigen::OuterStride<>(channels)};
}

// Two sums per channel over all rows: `tile_sums(tile, out)` writes a
// tile's (out[2c] and out[2c + 1] for its channel c), into `partial`
// apart; they are added up per channel in chunk order into `a` and `b`.
template <typename TileSums>
void sum_over_tiles(const Tiling& t, std::vector<double>& partial, std::vector<double>& a,
                    std::vector<double>& b, TileSums&& tile_sums) {
  const auto at = [&](Eigen::Index chunk, Eigen::Index channel) {
    return &partial[static_cast<std::size_t>((chunk * t.channels + channel) * 2)];
  };
  partial.resize(static_cast<std::size_t>(t.chunks * t.channels * 2));
  for_tiles(t, [&](const Tile& tile) { tile_sums(tile, at(tile.chunk, tile.first)); });
  a.assign(static_cast<std::size_t>(t.channels), 0.0);
  b.assign(static_cast<std::size_t>(t.channels), 0.0);
  for (Eigen::Index chunk = 0; chunk < t.chunks; ++chunk) {
    for (Eigen::Index c = 0; c < t.channels; ++c) {
      a[c] += at(chunk, c)[0];
      b[c] += at(chunk, c)[1];
    }
  }
}

}  // namespace

void BatchNorm::forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) {
  const Eigen::Index rows = x.size() / channels_;  // N*H*W values per channel
  const Tiling tiling(rows, channels_);
  const kernels::ConstBlock in = channel_view(x.data(), rows, channels_);
  float* moving_mean = state(moving_mean_).data();
  float* moving_variance = state(moving_variance_).data();
  const float* gamma = param(gamma_).data();
  const float* beta = param(beta_).data();
  const kernels::Kernels& k = kernels::kernels();
  batch_statistics_ = ctx.phase == Phase::kTrain;
  mean_.resize(channels_);
  inv_std_.resize(channels_);

  if (batch_statistics_) {
    // Sums of x and x^2 in double: var = E[x^2] - E[x]^2 then loses about
    // log2(mean^2 / var) of double's 53 bits, which leaves more than
    // float's 24 unless |mean| exceeds 2^14 standard deviations.
    sum_over_tiles(tiling, partial_, total_a_, total_b_,
                   [&](const Tile& t, double* sums) { k.batch_norm_sums(t.of(in), sums); });
    const float m = opt_.momentum;
    for (Eigen::Index c = 0; c < channels_; ++c) {
      const double mean = total_a_[c] / rows;
      const auto variance = static_cast<float>(std::max(0.0, total_b_[c] / rows - mean * mean));
      mean_[c] = static_cast<float>(mean);
      inv_std_[c] = 1 / std::sqrt(variance + opt_.epsilon);
      moving_mean[c] = m * moving_mean[c] + (1 - m) * mean_[c];
      moving_variance[c] = m * moving_variance[c] + (1 - m) * variance;
    }
  } else {
    for (Eigen::Index c = 0; c < channels_; ++c) {
      mean_[c] = moving_mean[c];
      inv_std_[c] = 1 / std::sqrt(moving_variance[c] + opt_.epsilon);
    }
  }
  x_hat_.resize(rows, channels_);
  y.resize(x.rows(), x.cols());
  const kernels::Block normalized = channel_view(x_hat_.data(), rows, channels_);
  const kernels::Block out = channel_view(y.data(), rows, channels_);
  for_tiles(tiling, [&](const Tile& t) {
    k.batch_norm_normalize(t.of(in), &mean_[t.first], &inv_std_[t.first], gamma + t.first,
                           beta + t.first, t.of(normalized), t.of(out));
  });
}

void BatchNorm::backward(const Matrix& x, const Matrix& /*y*/, const Matrix& dy, Matrix* dx) {
  const Eigen::Index rows = x_hat_.rows();
  const Tiling tiling(rows, channels_);
  const kernels::ConstBlock d_out = channel_view(dy.data(), rows, channels_);
  const kernels::ConstBlock normalized = kernels::in(x_hat_);
  float* d_gamma = grad(gamma_).data();
  float* d_beta = grad(beta_).data();
  const float* gamma = param(gamma_).data();
  const kernels::Kernels& k = kernels::kernels();

  // The sums of dy and of dy * x_hat.
  sum_over_tiles(tiling, partial_, total_a_, total_b_, [&](const Tile& t, double* sums) {
    k.batch_norm_gradient_sums(t.of(d_out), t.of(normalized), sums);
  });
  for (Eigen::Index c = 0; c < channels_; ++c) {
    d_beta[c] += static_cast<float>(total_a_[c]);
    d_gamma[c] += static_cast<float>(total_b_[c]);
  }
  if (!dx) return;
  // With batch statistics the mean and variance depend on every input:
  // dx = gamma * inv_std * (dy - mean(dy) - x_hat * mean(dy * x_hat)).
  // With the moving ones, dx = gamma * inv_std * dy.
  scale_.resize(channels_);
  mean_dy_.setZero(channels_);
  mean_dy_x_hat_.setZero(channels_);
  for (Eigen::Index c = 0; c < channels_; ++c) {
    scale_[c] = gamma[c] * inv_std_[c];
    if (batch_statistics_) {
      mean_dy_[c] = static_cast<float>(total_a_[c] / rows);
      mean_dy_x_hat_[c] = static_cast<float>(total_b_[c] / rows);
    }
  }
  dx->resize(x.rows(), x.cols());
  const kernels::Block d_in = channel_view(dx->data(), rows, channels_);
  for_tiles(tiling, [&](const Tile& t) {
    k.batch_norm_input_gradient(t.of(d_out), t.of(normalized), &mean_dy_[t.first],
                                &mean_dy_x_hat_[t.first], &scale_[t.first], t.of(d_in));
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
  // Parallel regions: the tiles' sums, then the values they give (the
  // normalised batch; the input gradient, when it is wanted).
  const bool parallel = Tiling(batch * input_shape().size() / channels_, channels_).parallel();
  c.forward_regions = parallel ? 2 : 0;
  c.backward_regions = parallel ? (input_gradient ? 2 : 1) : 0;
  return c;
}

}  // namespace distlab::nn
