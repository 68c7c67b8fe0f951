#include "nn/layers/pad_channels.h"

#include "common/error.h"

namespace distlab::nn {
namespace {

Shape padded(std::string_view name, Shape in, int before, int after) {
  if (before < 0 || after < 0) {
    throw Error("pad_channels '" + std::string(name) + "': padding cannot be negative");
  }
  return {in.height, in.width, in.channels + before + after};
}

}  // namespace

PadChannels::PadChannels(std::string name, Shape input, int before, int after)
    : Layer(name, input, padded(name, input, before, after)), before_(before) {}

void PadChannels::forward(const Matrix& x, Matrix& y, const ForwardContext& /*ctx*/) {
  const Shape in = input_shape();
  const Eigen::Index pixels = int64_t{in.height} * in.width;
  const int out_channels = output_shape().channels;
  y.resize(x.rows(), output_shape().size());
#pragma omp parallel for schedule(static)
  for (Eigen::Index n = 0; n < x.rows(); ++n) {
    MatrixMap out(y.row(n).data(), pixels, out_channels);
    out.setZero();
    out.middleCols(before_, in.channels) = ConstMatrixMap(x.row(n).data(), pixels, in.channels);
  }
}

void PadChannels::backward(const Matrix& x, const Matrix& /*y*/, const Matrix& dy, Matrix* dx) {
  if (!dx) return;
  const Shape in = input_shape();
  const Eigen::Index pixels = int64_t{in.height} * in.width;
  const int out_channels = output_shape().channels;
  dx->resize(x.rows(), x.cols());
#pragma omp parallel for schedule(static)
  for (Eigen::Index n = 0; n < x.rows(); ++n) {
    MatrixMap(dx->row(n).data(), pixels, in.channels) =
        ConstMatrixMap(dy.row(n).data(), pixels, out_channels).middleCols(before_, in.channels);
  }
}

LayerCost PadChannels::cost(int batch, bool input_gradient) const {
  const double in = double{1} * batch * input_shape().size();
  const double out = double{1} * batch * output_shape().size();
  LayerCost c;  // copies: no arithmetic, only memory
  c.forward_bytes = kFloatBytes * (in + out);
  c.forward_kernels = 1;
  c.forward_regions = 1;
  if (input_gradient) {
    c.backward_bytes = kFloatBytes * 2 * in;
    c.backward_kernels = 1;
    c.backward_regions = 1;
  }
  return c;
}

}  // namespace distlab::nn
