#include "nn/activation.h"

#include "common/error.h"
#include "nn/kernels/kernels.h"

namespace distlab::nn {

Activation parse_activation(const std::string& name) {
  if (name == "none" || name == "linear") return Activation::kNone;
  if (name == "relu") return Activation::kRelu;
  throw Error("unknown activation '" + name + "'");
}

std::string to_string(Activation a) {
  return a == Activation::kRelu ? "relu" : "none";
}

void add_bias_and_activate(Activation a, MatrixMap z, const float* bias) {
  kernels::kernels().bias_activation(a, z, bias);
}

const Matrix& activation_backward(Activation a, const Matrix& y, const Matrix& dy, Matrix& dz) {
  if (a == Activation::kNone) return dy;
  activation_backward_into(a, as_map(y), as_map(dy), dz);
  return dz;
}

void activation_backward_into(Activation a, ConstMatrixMap y, ConstMatrixMap dy, Matrix& dz) {
  dz.resize(dy.rows(), dy.cols());
  kernels::kernels().activation_gradient(a, y, dy, as_map(dz));
}

}  // namespace distlab::nn
