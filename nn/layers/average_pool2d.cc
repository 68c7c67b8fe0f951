#include "nn/layers/average_pool2d.h"

#include <algorithm>

#include "common/error.h"

namespace distlab::nn {
namespace {

Shape pooled_shape(Shape in, const AveragePool2DOptions& o) {
  return {axis_geometry(in.height, o.pool_h, o.stride_h, o.padding).out,
          axis_geometry(in.width, o.pool_w, o.stride_w, o.padding).out, in.channels};
}

}  // namespace

std::vector<AveragePool2D::Window> AveragePool2D::windows(int in, int pool, int stride,
                                                          const AxisGeometry& axis) {
  std::vector<Window> out(std::max(axis.out, 0));
  for (int o = 0; o < axis.out; ++o) {
    const int start = o * stride - axis.pad_before;
    out[o] = {std::max(start, 0), std::min(start + pool, in)};
  }
  return out;
}

AveragePool2D::AveragePool2D(std::string name, Shape input, const AveragePool2DOptions& options)
    : Layer(std::move(name), input, pooled_shape(input, options)), opt_(options) {
  if (options.padding == Padding::kFixed) {
    throw Error("average_pool2d '" + this->name() + "': padding must be valid or same");
  }
  const Shape out = output_shape();
  if (out.height <= 0 || out.width <= 0) {
    throw Error("average_pool2d '" + this->name() + "': the pool does not fit input " +
                input.to_string());
  }
  rows_ = windows(input.height, options.pool_h, options.stride_h,
                  axis_geometry(input.height, options.pool_h, options.stride_h, options.padding));
  cols_ = windows(input.width, options.pool_w, options.stride_w,
                  axis_geometry(input.width, options.pool_w, options.stride_w, options.padding));
}

void AveragePool2D::forward(const Matrix& x, Matrix& y, const ForwardContext& /*ctx*/) {
  const Shape in = input_shape();
  const int c = in.channels;
  y.resize(x.rows(), output_shape().size());
#pragma omp parallel for schedule(static)
  for (Eigen::Index n = 0; n < x.rows(); ++n) {
    const float* src = x.row(n).data();
    float* dst = y.row(n).data();
    for (std::size_t oh = 0; oh < rows_.size(); ++oh) {
      for (std::size_t ow = 0; ow < cols_.size(); ++ow) {
        const auto [h0, h1] = rows_[oh];
        const auto [w0, w1] = cols_[ow];
        float* out = dst + (oh * cols_.size() + ow) * c;
        std::fill_n(out, c, 0.0f);
        for (int h = h0; h < h1; ++h) {
          for (int w = w0; w < w1; ++w) {
            const float* pixel = src + (int64_t{h} * in.width + w) * c;
            for (int k = 0; k < c; ++k) out[k] += pixel[k];
          }
        }
        const float scale = 1.0f / static_cast<float>((h1 - h0) * (w1 - w0));
        for (int k = 0; k < c; ++k) out[k] *= scale;
      }
    }
  }
}

void AveragePool2D::backward(const Matrix& x, const Matrix& /*y*/, const Matrix& dy, Matrix* dx) {
  if (!dx) return;
  const Shape in = input_shape();
  const int c = in.channels;
  dx->resize(x.rows(), x.cols());
#pragma omp parallel for schedule(static)
  for (Eigen::Index n = 0; n < x.rows(); ++n) {
    float* dst = dx->row(n).data();
    std::fill_n(dst, dx->cols(), 0.0f);
    const float* grad = dy.row(n).data();
    for (std::size_t oh = 0; oh < rows_.size(); ++oh) {
      for (std::size_t ow = 0; ow < cols_.size(); ++ow) {
        const auto [h0, h1] = rows_[oh];
        const auto [w0, w1] = cols_[ow];
        const float scale = 1.0f / static_cast<float>((h1 - h0) * (w1 - w0));
        const float* g = grad + (oh * cols_.size() + ow) * c;
        for (int h = h0; h < h1; ++h) {
          for (int w = w0; w < w1; ++w) {
            float* pixel = dst + (int64_t{h} * in.width + w) * c;
            for (int k = 0; k < c; ++k) pixel[k] += scale * g[k];
          }
        }
      }
    }
  }
}

LayerCost AveragePool2D::cost(int batch, bool input_gradient) const {
  const double in = double{1} * batch * input_shape().size();
  const double out = double{1} * batch * output_shape().size();
  LayerCost c;
  c.forward_flops = out * (opt_.pool_h * opt_.pool_w + 1);  // the sum, then the scale
  c.forward_bytes = kFloatBytes * (in + out);
  c.forward_kernels = 1;
  c.forward_regions = 1;
  if (input_gradient) {  // no parameters: backward is dx only
    c.backward_flops = 2 * out * opt_.pool_h * opt_.pool_w;
    c.backward_bytes = kFloatBytes * (in + out);
    c.backward_kernels = 1;
    c.backward_regions = 1;
  }
  return c;
}

}  // namespace distlab::nn
