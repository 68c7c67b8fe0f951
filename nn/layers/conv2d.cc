#include "nn/layers/conv2d.h"

#include <omp.h>

#include <algorithm>

#include "common/error.h"
#include "nn/kernels/kernels.h"

namespace distlab::nn {

Padding parse_padding(const std::string& name) {
  if (name == "valid") return Padding::kValid;
  if (name == "same") return Padding::kSame;
  if (name == "fixed") return Padding::kFixed;
  throw Error("unknown padding '" + name + "'");
}

AxisGeometry axis_geometry(int in, int kernel, int stride, Padding padding) {
  if (padding == Padding::kValid) return {in < kernel ? 0 : (in - kernel) / stride + 1, 0};
  if (padding == Padding::kFixed) return {(in - 1) / stride + 1, (kernel - 1) / 2};
  const int out = (in + stride - 1) / stride;
  const int total = std::max((out - 1) * stride + kernel - in, 0);
  return {out, total / 2};
}

namespace {

// About this many patch values per chunk, so that a chunk's patches, output
// and gradients stay within a core's L2 cache.
// (Measured on the lab CNN: 32K to 512K values; 64K was fastest.)
constexpr int64_t kChunkValues = 1 << 16;

Shape conv_output(Shape in, const Conv2DOptions& o) {
  const auto h = axis_geometry(in.height, o.kernel_h, o.stride_h, o.padding);
  const auto w = axis_geometry(in.width, o.kernel_w, o.stride_w, o.padding);
  return {h.out, w.out, o.filters};
}

}  // namespace

Conv2D::Conv2D(std::string name, Shape input, const Conv2DOptions& options)
    : Layer(std::move(name), input, conv_output(input, options)),
      opt_(options),
      out_h_(axis_geometry(input.height, options.kernel_h, options.stride_h, options.padding)),
      out_w_(axis_geometry(input.width, options.kernel_w, options.stride_w, options.padding)) {
  if (out_h_.out <= 0 || out_w_.out <= 0) {
    throw Error("conv2d '" + this->name() + "': a " + std::to_string(options.kernel_h) + "x" +
                std::to_string(options.kernel_w) + " kernel does not fit input " +
                input.to_string() + " with valid padding");
  }
}

void Conv2D::declare(ParameterLayout& trainable, ParameterLayout& /*state*/) {
  const int receptive = opt_.kernel_h * opt_.kernel_w;
  ParamBlock kernel(name() + "/kernel", patch_size(), opt_.filters, Init::kGlorotUniform,
                    opt_.kernel_regularizer);
  kernel.fan_in = receptive * input_shape().channels;  // Keras: receptive field x channels
  kernel.fan_out = receptive * opt_.filters;
  kernel_ = trainable.block(trainable.add(std::move(kernel)));
  if (opt_.use_bias) {
    bias_ = trainable.block(
        trainable.add({name() + "/bias", 1, opt_.filters, Init::kZeros, opt_.bias_regularizer}));
  }
}

Conv2D::Scratch& Conv2D::scratch() {
  return scratch_[omp_get_thread_num()];
}

// Each patch row holds, for every (kh, kw), the C channels of one input pixel
// (contiguous in NHWC). Calls visit(pixel) for every tap of every output
// position of one image, in patch order, with the offset of the tap's pixel
// in the image's row, or -1 where the tap falls in the padding.
template <typename Visit>
void Conv2D::for_each_tap(Visit&& visit) const {
  const Shape in = input_shape();
  for (int oh = 0; oh < out_h_.out; ++oh) {
    for (int ow = 0; ow < out_w_.out; ++ow) {
      for (int kh = 0; kh < opt_.kernel_h; ++kh) {
        const int ih = oh * opt_.stride_h - out_h_.pad_before + kh;
        for (int kw = 0; kw < opt_.kernel_w; ++kw) {
          const int iw = ow * opt_.stride_w - out_w_.pad_before + kw;
          const bool inside = ih >= 0 && ih < in.height && iw >= 0 && iw < in.width;
          visit(inside ? (int64_t{ih} * in.width + iw) * in.channels : int64_t{-1});
        }
      }
    }
  }
}

void Conv2D::im2col(const Matrix& x, Eigen::Index first, Eigen::Index count,
                    Matrix& patches) const {
  const int channels = input_shape().channels;
  patches.resize(count * positions(), patch_size());
  float* patch = patches.data();
  for (Eigen::Index n = first; n < first + count; ++n) {
    const float* image = x.row(n).data();
    for_each_tap([&](int64_t pixel) {
      // A plain loop, not memcpy: with one channel (the first layer of an
      // image model) a call per value would dominate.
      for (int c = 0; c < channels; ++c) patch[c] = pixel < 0 ? 0.0f : image[pixel + c];
      patch += channels;
    });
  }
}

// The adjoint of im2col: every patch entry adds back into its input pixel.
void Conv2D::col2im(const Matrix& dpatches, Eigen::Index first, Eigen::Index count,
                    Matrix& dx) const {
  const int channels = input_shape().channels;
  const float* patch = dpatches.data();
  for (Eigen::Index n = first; n < first + count; ++n) {
    float* image = dx.row(n).data();
    std::fill_n(image, dx.cols(), 0.0f);
    for_each_tap([&](int64_t pixel) {
      if (pixel >= 0) {
        for (int c = 0; c < channels; ++c) image[pixel + c] += patch[c];
      }
      patch += channels;
    });
  }
}

Eigen::Index Conv2D::chunk_examples(Eigen::Index batch) const {
  // Even chunks of about kChunkValues patch values. The plan depends on the
  // batch and the shapes only, never on the thread count.
  const int64_t values = batch * positions() * patch_size();
  const Eigen::Index chunks = std::max<Eigen::Index>(1, (values + kChunkValues / 2) / kChunkValues);
  return std::max<Eigen::Index>(1, (batch + chunks - 1) / chunks);
}

void Conv2D::forward(const Matrix& x, Matrix& y, const ForwardContext& /*ctx*/) {
  const Eigen::Index batch = x.rows();
  const Eigen::Index per_chunk = chunk_examples(batch);
  const Eigen::Index chunks = (batch + per_chunk - 1) / per_chunk;
  y.resize(batch, output_shape().size());
  scratch_.resize(omp_get_max_threads());
  const auto kernel = param(kernel_);
  const float* bias = opt_.use_bias ? param(bias_).data() : nullptr;
  const auto& k = kernels::kernels();
#pragma omp parallel for schedule(dynamic)
  for (Eigen::Index c = 0; c < chunks; ++c) {
    const Eigen::Index first = c * per_chunk;
    const Eigen::Index count = std::min(per_chunk, batch - first);
    Matrix& patches = scratch().patches;
    im2col(x, first, count, patches);
    MatrixMap out(y.row(first).data(), patches.rows(), opt_.filters);  // (rows, F) view of y
    k.product(kernels::out(out), kernels::in(patches), Transpose::kNo, kernels::in(kernel),
              Transpose::kNo, /*accumulate=*/false);
    k.bias_activation(opt_.activation, out, bias);
  }
}

void Conv2D::backward(const Matrix& x, const Matrix& y, const Matrix& dy, Matrix* dx) {
  const Eigen::Index batch = x.rows();
  const Eigen::Index per_chunk = chunk_examples(batch);
  const Eigen::Index chunks = (batch + per_chunk - 1) / per_chunk;
  scratch_.resize(omp_get_max_threads());
  kernel_part_.resize(chunks);
  bias_part_.resize(chunks);
  if (dx) dx->resize(batch, x.cols());
  const auto kernel = param(kernel_);
  const auto& k = kernels::kernels();
  for (Matrix& part : kernel_part_) part.resize(patch_size(), opt_.filters);
  for (RowVector& part : bias_part_) part.resize(opt_.filters);
#pragma omp parallel for schedule(dynamic)
  for (Eigen::Index c = 0; c < chunks; ++c) {
    const Eigen::Index first = c * per_chunk;
    const Eigen::Index count = std::min(per_chunk, batch - first);
    const Eigen::Index rows = count * positions();
    Scratch& s = scratch();
    // dz = dy * act'(y) for this chunk's rows, as a (rows, F) matrix.
    const ConstMatrixMap y_rows(y.row(first).data(), rows, opt_.filters);
    const ConstMatrixMap dy_rows(dy.row(first).data(), rows, opt_.filters);
    s.dz.resize(rows, opt_.filters);
    k.activation_gradient(opt_.activation, y_rows, dy_rows, as_map(s.dz));
    im2col(x, first, count, s.patches);
    k.product(kernels::out(kernel_part_[c]), kernels::in(s.patches), Transpose::kYes,
              kernels::in(s.dz), Transpose::kNo, /*accumulate=*/false);
    if (opt_.use_bias) {
      bias_part_[c].setZero();
      k.add_column_sums(as_const(as_map(s.dz)), bias_part_[c].data());
    }
    if (dx) {
      s.dpatches.resize(rows, patch_size());
      k.product(kernels::out(s.dpatches), kernels::in(s.dz), Transpose::kNo, kernels::in(kernel),
                Transpose::kYes, /*accumulate=*/false);
      col2im(s.dpatches, first, count, *dx);
    }
  }
  // Chunk order, not thread order: the sum is the same for any thread count.
  float* kernel_grad = grad(kernel_).data();
  for (const Matrix& part : kernel_part_) k.add(kernel_grad, part.data(), part.size());
  if (opt_.use_bias) {
    float* bias_grad = grad(bias_).data();
    for (const RowVector& part : bias_part_) k.add(bias_grad, part.data(), part.size());
  }
}

LayerCost Conv2D::cost(int batch, bool input_gradient) const {
  const double rows = double{1} * batch * positions(), k = patch_size(), f = opt_.filters;
  const double in = double{1} * batch * input_shape().size(), out = rows * f;
  LayerCost c;
  c.forward_flops = 2 * rows * k * f + 2 * out;  // GEMM, then bias and activation
  c.forward_bytes = kFloatBytes * (in + k * f + out);
  c.forward_kernels = framework_forward_kernels(opt_);
  c.forward_regions = 1;  // the chunks of the batch, in one parallel loop
  // dW GEMM and bias sum: read x and dy, read and write dW.
  c.backward_flops = 2 * rows * k * f + out;
  c.backward_bytes = kFloatBytes * (in + out + 2 * k * f);
  c.backward_kernels = framework_backward_kernels(opt_, input_gradient);
  c.backward_regions = 1;
  if (input_gradient) {  // dx GEMM and col2im: read dy and W, write dx
    c.backward_flops += 2 * rows * k * f;
    c.backward_bytes += kFloatBytes * (out + k * f + in);
  }
  return c;
}

}  // namespace distlab::nn
