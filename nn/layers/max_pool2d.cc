#include "nn/layers/max_pool2d.h"

#include "common/error.h"
#include "nn/kernels/kernels.h"

namespace distlab::nn {
MaxPool2D::MaxPool2D(std::string name, Shape input, const MaxPool2DOptions& options)
    : Layer(
          std::move(name), input,
          Shape{axis_geometry(input.height, options.pool_h, options.stride_h, options.padding).out,
                axis_geometry(input.width, options.pool_w, options.stride_w, options.padding).out,
                input.channels}),
      opt_(options),
      out_h_(axis_geometry(input.height, options.pool_h, options.stride_h, options.padding)),
      out_w_(axis_geometry(input.width, options.pool_w, options.stride_w, options.padding)) {
  if (out_h_.out <= 0 || out_w_.out <= 0) {
    throw Error("max_pool2d '" + this->name() + "': the pool does not fit input " +
                input.to_string());
  }
}

void MaxPool2D::forward(const Matrix& x, Matrix& y, const ForwardContext& /*ctx*/) {
  const Shape in = input_shape();
  const kernels::PoolGeometry geometry{
      .in_h = in.height,
      .in_w = in.width,
      .channels = in.channels,
      .out_h = out_h_.out,
      .out_w = out_w_.out,
      .pool_h = opt_.pool_h,
      .pool_w = opt_.pool_w,
      .stride_h = opt_.stride_h,
      .stride_w = opt_.stride_w,
      .pad_top = out_h_.pad_before,
      .pad_left = out_w_.pad_before,
  };
  const int64_t out_size = output_shape().size();
  y.resize(x.rows(), out_size);
  argmax_.resize(x.rows() * out_size);
  const auto& k = kernels::kernels();
#pragma omp parallel for schedule(static)
  for (Eigen::Index n = 0; n < x.rows(); ++n) {
    k.max_pool(geometry, x.row(n).data(), y.row(n).data(), argmax_.data() + n * out_size);
  }
}

void MaxPool2D::backward(const Matrix& x, const Matrix& /*y*/, const Matrix& dy, Matrix* dx) {
  if (!dx) return;
  const int64_t out_size = output_shape().size();
  dx->resize(x.rows(), x.cols());
#pragma omp parallel for schedule(static)
  for (Eigen::Index n = 0; n < x.rows(); ++n) {
    // Zeroed here rather than up front: each thread clears the rows it is
    // about to scatter into, while they are in its cache.
    float* row = dx->row(n).data();
    std::fill_n(row, dx->cols(), 0.0f);
    const int32_t* where = argmax_.data() + n * out_size;
    const float* grad = dy.row(n).data();
    for (int64_t o = 0; o < out_size; ++o) row[where[o]] += grad[o];
  }
}

LayerCost MaxPool2D::cost(int batch, bool input_gradient) const {
  const double in = double{1} * batch * input_shape().size();
  const double out = double{1} * batch * output_shape().size();
  LayerCost c;
  c.forward_flops = out * opt_.pool_h * opt_.pool_w;  // one comparison per window entry
  c.forward_bytes = kFloatBytes * (in + out);
  c.forward_kernels = 1;
  c.forward_regions = 1;
  if (input_gradient) {  // pooling has no parameters: backward is dx only
    c.backward_flops = out;
    c.backward_bytes = kFloatBytes * (in + 2 * out);
    c.backward_kernels = 1;
    c.backward_regions = 1;
  }
  return c;
}

}  // namespace distlab::nn
