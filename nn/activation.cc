#include "nn/activation.h"

#include "common/error.h"

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
  if (bias) {
    const ConstRowVectorMap b(bias, z.cols());
    if (a == Activation::kRelu) {
      z = (z.rowwise() + b).cwiseMax(0.0f);
    } else {
      z.rowwise() += b;
    }
  } else if (a == Activation::kRelu) {
    z = z.cwiseMax(0.0f);
  }
}

const Matrix& activation_backward(Activation a, const Matrix& y, const Matrix& dy, Matrix& dz) {
  if (a == Activation::kNone) return dy;
  activation_backward_into(a, as_map(y), as_map(dy), dz);
  return dz;
}

void activation_backward_into(Activation a, ConstMatrixMap y, ConstMatrixMap dy, Matrix& dz) {
  dz.resize(dy.rows(), dy.cols());
  if (a == Activation::kNone) {
    dz = dy;
  } else {  // ReLU: the gradient passes where the output is positive.
    dz.array() = (y.array() > 0.0f).select(dy.array(), 0.0f);
  }
}

}  // namespace distlab::nn
