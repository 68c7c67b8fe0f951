// 2-D convolution over NHWC rows, as im2col followed by one GEMM for the
// whole batch: y (N*OH*OW, F) = patches (N*OH*OW, KH*KW*C) * W (KH*KW*C, F).
// The GEMM's row-major output is already the NHWC batch of the next layer.
#pragma once

#include "nn/activation.h"
#include "nn/layer.h"

namespace distlab::nn {

enum class Padding { kValid, kSame };

Padding parse_padding(const std::string& name);  // "valid" | "same"

// Output length and leading padding of one spatial axis, TensorFlow's rule:
// valid: ceil((in - k + 1) / s); same: ceil(in / s), padding split with the
// extra pixel after.
struct AxisGeometry {
  int out = 0;
  int pad_before = 0;
};
AxisGeometry axis_geometry(int in, int kernel, int stride, Padding padding);

struct Conv2DOptions {
  int filters = 0;
  int kernel_h = 3, kernel_w = 3;
  int stride_h = 1, stride_w = 1;
  Padding padding = Padding::kValid;
  Activation activation = Activation::kNone;
  bool use_bias = true;
  Regularizer kernel_regularizer;
  Regularizer bias_regularizer;
};

class Conv2D : public Layer {
 public:
  Conv2D(std::string name, Shape input, const Conv2DOptions& options);

  std::string kind() const override { return "conv2d"; }
  void declare(ParameterLayout& trainable, ParameterLayout& state) override;
  void forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) override;
  void backward(const Matrix& x, const Matrix& y, const Matrix& dy, Matrix* dx) override;
  LayerCost cost(int batch) const override;

 private:
  void im2col(const Matrix& x);
  void col2im(const Matrix& dpatches, Matrix& dx) const;
  int64_t positions() const { return int64_t{out_h_.out} * out_w_.out; }
  int patch_size() const { return opt_.kernel_h * opt_.kernel_w * input_shape().channels; }

  Conv2DOptions opt_;
  AxisGeometry out_h_, out_w_;
  ParamBlock kernel_;  // (KH*KW*C, F), rows ordered (kh, kw, c)
  ParamBlock bias_;    // (1, F)
  Matrix patches_;     // (N*OH*OW, KH*KW*C), kept from forward for dW
  Matrix dz_;          // (N, OH*OW*F) gradient before the activation
  Matrix dpatches_;    // (N*OH*OW, KH*KW*C)
};

}  // namespace distlab::nn
