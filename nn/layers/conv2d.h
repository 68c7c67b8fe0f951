// 2-D convolution over NHWC rows, as im2col followed by a GEMM:
// y (N*OH*OW, F) = patches (N*OH*OW, KH*KW*C) * W (KH*KW*C, F), whose
// row-major output is already the NHWC batch of the next layer.
//
// The batch is processed in chunks of a few examples whose patches fit in a
// core's cache: each chunk's im2col, GEMM, bias and activation run while the
// data are hot, chunks run in parallel, and the patches are rebuilt in
// backward rather than kept (a full batch's would be tens of megabytes per
// replica). Weight gradients are summed per chunk in chunk order, so the
// result does not depend on the number of threads.
#pragma once

#include <vector>

#include "nn/activation.h"
#include "nn/layer.h"

namespace distlab::nn {

// kFixed is the padding of TensorFlow's ResNets (`fixed_padding` in the
// official models, `_conv` in the CIFAR-10 estimator): pad k - 1 pixels,
// (k - 1) / 2 before and the rest after, whatever the stride, then convolve
// without padding. At stride 1 it is `same`; at stride 2 `same` would put
// the odd pixel after and shift every window by one.
enum class Padding { kValid, kSame, kFixed };

Padding parse_padding(const std::string& name);  // "valid" | "same" | "fixed"

// Output length and leading padding of one spatial axis, TensorFlow's rule:
// valid: ceil((in - k + 1) / s); same: ceil(in / s), padding split with the
// extra pixel after; fixed: floor((in - 1) / s) + 1, (k - 1) / 2 before.
struct AxisGeometry {
  int out = 0;
  int pad_before = 0;
};
AxisGeometry axis_geometry(int in, int kernel, int stride, Padding padding);

// A pooling window (max or average), Keras' options.
struct Pool2DOptions {
  int pool_h = 2, pool_w = 2;
  int stride_h = 2, stride_w = 2;  // Keras: strides default to the pool size
  Padding padding = Padding::kValid;
};

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
  bool has_parameters() const override { return true; }
  void forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) override;
  void backward(const Matrix& x, const Matrix& y, const Matrix& dy, Matrix* dx) override;
  LayerCost cost(int batch, bool input_gradient) const override;

 private:
  // Per-thread buffers, reused from step to step.
  struct Scratch {
    Matrix patches;   // (chunk rows, KH*KW*C)
    Matrix dz;        // (chunk rows, F) gradient before the activation
    Matrix dpatches;  // (chunk rows, KH*KW*C)
  };

  template <typename Visit>
  void for_each_tap(Visit&& visit) const;
  // Patches of examples [first, first + count) into `patches`.
  void im2col(const Matrix& x, Eigen::Index first, Eigen::Index count, Matrix& patches) const;
  // Adds patch gradients back into the input pixels of those examples.
  void col2im(const Matrix& dpatches, Eigen::Index first, Eigen::Index count, Matrix& dx) const;
  int64_t positions() const { return int64_t{out_h_.out} * out_w_.out; }
  int patch_size() const { return opt_.kernel_h * opt_.kernel_w * input_shape().channels; }
  Scratch& scratch();
  Eigen::Index chunk_examples(Eigen::Index batch) const;

  Conv2DOptions opt_;
  AxisGeometry out_h_, out_w_;
  ParamBlock kernel_;                 // (KH*KW*C, F), rows ordered (kh, kw, c)
  ParamBlock bias_;                   // (1, F)
  std::vector<Scratch> scratch_;      // one per thread
  std::vector<Matrix> kernel_part_;   // per chunk: its share of dW
  std::vector<RowVector> bias_part_;  // per chunk: its share of db
};

}  // namespace distlab::nn
