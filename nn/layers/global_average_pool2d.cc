#include "nn/layers/global_average_pool2d.h"

namespace distlab::nn {

GlobalAveragePool2D::GlobalAveragePool2D(std::string name, Shape input)
    : Layer(std::move(name), input, Shape::flat(input.channels)) {}

void GlobalAveragePool2D::forward(const Matrix& x, Matrix& y, const ForwardContext& /*ctx*/) {
  const Shape in = input_shape();
  const Eigen::Index pixels = int64_t{in.height} * in.width;
  y.resize(x.rows(), in.channels);
#pragma omp parallel for schedule(static)
  for (Eigen::Index n = 0; n < x.rows(); ++n) {
    const ConstMatrixMap image(x.row(n).data(), pixels, in.channels);  // (H*W, C)
    y.row(n) = image.colwise().mean();
  }
}

void GlobalAveragePool2D::backward(const Matrix& x, const Matrix& /*y*/, const Matrix& dy,
                                   Matrix* dx) {
  if (!dx) return;
  const Shape in = input_shape();
  const Eigen::Index pixels = int64_t{in.height} * in.width;
  const float scale = 1.0f / static_cast<float>(pixels);
  dx->resize(x.rows(), x.cols());
#pragma omp parallel for schedule(static)
  for (Eigen::Index n = 0; n < x.rows(); ++n) {
    MatrixMap image(dx->row(n).data(), pixels, in.channels);
    image.rowwise() = scale * dy.row(n);
  }
}

LayerCost GlobalAveragePool2D::cost(int batch, bool input_gradient) const {
  const double in = double{1} * batch * input_shape().size();
  const double out = double{1} * batch * output_shape().size();
  LayerCost c;
  c.forward_flops = in + out;  // the sums, then the scale
  c.forward_bytes = kFloatBytes * (in + out);
  c.forward_kernels = 1;
  c.forward_regions = 1;
  if (input_gradient) {  // no parameters: backward is dx only
    c.backward_flops = in;
    c.backward_bytes = kFloatBytes * (in + out);
    c.backward_kernels = 1;
    c.backward_regions = 1;
  }
  return c;
}

}  // namespace distlab::nn
