// Batch normalisation over the last axis (channels of NHWC images, features
// of flat rows), Keras semantics: in training, normalise with the batch's
// mean and (biased) variance and update the moving statistics as
// moving = momentum * moving + (1 - momentum) * batch; in inference, use them.
// gamma and beta are trainable; the moving statistics live in the model's
// state buffer (checkpointed, not trained).
#pragma once

#include <vector>

#include "nn/layer.h"

namespace distlab::nn {

struct BatchNormOptions {
  float momentum = 0.99f;
  float epsilon = 1e-3f;
};

class BatchNorm : public Layer {
 public:
  BatchNorm(std::string name, Shape input, const BatchNormOptions& options);

  std::string kind() const override { return "batch_norm"; }
  void declare(ParameterLayout& trainable, ParameterLayout& state) override;
  bool has_parameters() const override { return true; }
  void forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) override;
  void backward(const Matrix& x, const Matrix& y, const Matrix& dy, Matrix* dx) override;
  LayerCost cost(int batch, bool input_gradient) const override;

 private:
  BatchNormOptions opt_;
  int channels_;
  ParamBlock gamma_, beta_;                   // (1, C) trainable
  ParamBlock moving_mean_, moving_variance_;  // (1, C) state
  bool batch_statistics_ = false;  // whether the last forward normalised with batch stats
  Matrix x_hat_;                   // (N*H*W, C) normalised input
  RowVector mean_;                 // (C) the mean the last forward used
  RowVector inv_std_;              // (C) 1 / sqrt(variance + epsilon)
  // Scratch of the passes, kept between steps: each tile's two sums per
  // channel, their totals, and the input gradient's factors per channel.
  std::vector<double> partial_, total_a_, total_b_;
  RowVector scale_, mean_dy_, mean_dy_x_hat_;
};

}  // namespace distlab::nn
