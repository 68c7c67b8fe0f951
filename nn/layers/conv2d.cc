#include "nn/layers/conv2d.h"

#include <algorithm>
#include <cstring>

#include "common/error.h"

namespace distlab::nn {

Padding parse_padding(const std::string& name) {
  if (name == "valid") return Padding::kValid;
  if (name == "same") return Padding::kSame;
  throw Error("unknown padding '" + name + "'");
}

AxisGeometry axis_geometry(int in, int kernel, int stride, Padding padding) {
  if (padding == Padding::kValid) return {in < kernel ? 0 : (in - kernel) / stride + 1, 0};
  const int out = (in + stride - 1) / stride;
  const int total = std::max((out - 1) * stride + kernel - in, 0);
  return {out, total / 2};
}

namespace {

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

// Each patch row holds, for every (kh, kw), the C channels of one input pixel:
// contiguous in NHWC, so a row is built from KH*KW short copies.
void Conv2D::im2col(const Matrix& x) {
  const Shape in = input_shape();
  const int channels = in.channels;
  const auto batch = x.rows();
  patches_.resize(batch * positions(), patch_size());
#pragma omp parallel for schedule(static)
  for (Eigen::Index n = 0; n < batch; ++n) {
    const float* image = x.row(n).data();
    for (int oh = 0; oh < out_h_.out; ++oh) {
      for (int ow = 0; ow < out_w_.out; ++ow) {
        float* patch = patches_.row((n * out_h_.out + oh) * out_w_.out + ow).data();
        for (int kh = 0; kh < opt_.kernel_h; ++kh) {
          const int ih = oh * opt_.stride_h - out_h_.pad_before + kh;
          for (int kw = 0; kw < opt_.kernel_w; ++kw, patch += channels) {
            const int iw = ow * opt_.stride_w - out_w_.pad_before + kw;
            if (ih < 0 || ih >= in.height || iw < 0 || iw >= in.width) {
              std::fill_n(patch, channels, 0.0f);
            } else {
              std::memcpy(patch, image + (int64_t{ih} * in.width + iw) * channels,
                          sizeof(float) * channels);
            }
          }
        }
      }
    }
  }
}

// The adjoint of im2col: every patch entry adds back into its input pixel.
void Conv2D::col2im(const Matrix& dpatches, Matrix& dx) const {
  const Shape in = input_shape();
  const int channels = in.channels;
  dx.setZero();
#pragma omp parallel for schedule(static)
  for (Eigen::Index n = 0; n < dx.rows(); ++n) {
    float* image = dx.row(n).data();
    for (int oh = 0; oh < out_h_.out; ++oh) {
      for (int ow = 0; ow < out_w_.out; ++ow) {
        const float* patch = dpatches.row((n * out_h_.out + oh) * out_w_.out + ow).data();
        for (int kh = 0; kh < opt_.kernel_h; ++kh) {
          const int ih = oh * opt_.stride_h - out_h_.pad_before + kh;
          for (int kw = 0; kw < opt_.kernel_w; ++kw, patch += channels) {
            const int iw = ow * opt_.stride_w - out_w_.pad_before + kw;
            if (ih < 0 || ih >= in.height || iw < 0 || iw >= in.width) continue;
            float* pixel = image + (int64_t{ih} * in.width + iw) * channels;
            for (int c = 0; c < channels; ++c) pixel[c] += patch[c];
          }
        }
      }
    }
  }
}

void Conv2D::forward(const Matrix& x, Matrix& y, const ForwardContext& /*ctx*/) {
  im2col(x);
  y.resize(x.rows(), output_shape().size());
  MatrixMap out(y.data(), patches_.rows(), opt_.filters);  // (N*OH*OW, F) view of y
  out.noalias() = patches_ * param(kernel_);
  if (opt_.use_bias) out.rowwise() += RowVectorMap(param(bias_).data(), opt_.filters);
  apply_activation(opt_.activation, y);
}

void Conv2D::backward(const Matrix& x, const Matrix& y, const Matrix& dy, Matrix* dx) {
  const Matrix& dz = activation_backward(opt_.activation, y, dy, dz_);
  ConstMatrixMap dz_rows(dz.data(), patches_.rows(), opt_.filters);  // (N*OH*OW, F)
  grad(kernel_).noalias() += patches_.transpose() * dz_rows;
  if (opt_.use_bias) grad(bias_) += dz_rows.colwise().sum();
  if (dx) {
    dpatches_.resize(patches_.rows(), patches_.cols());
    dpatches_.noalias() = dz_rows * param(kernel_).transpose();
    dx->resize(x.rows(), x.cols());
    col2im(dpatches_, *dx);
  }
}

LayerCost Conv2D::cost(int batch) const {
  const double rows = double{1} * batch * positions(), k = patch_size(), f = opt_.filters;
  const double in = double{1} * batch * input_shape().size(), out = rows * f;
  LayerCost c;
  c.forward_flops = 2 * rows * k * f + 2 * out;  // GEMM, then bias and activation
  c.forward_bytes = kFloatBytes * (in + k * f + out);
  c.backward_flops = 4 * rows * k * f + out;  // dW and dx GEMMs, bias sum
  c.backward_bytes = kFloatBytes * (2 * out + 2 * in + 2 * k * f);
  c.forward_kernels = 1;
  c.backward_kernels = 2;
  return c;
}

}  // namespace distlab::nn
