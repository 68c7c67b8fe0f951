#include "nn/layers/dense.h"

namespace distlab::nn {

Dense::Dense(std::string name, Shape input, const DenseOptions& options)
    : Layer(std::move(name), input, Shape::flat(options.units)),
      options_(options),
      inputs_(static_cast<int>(input.size())) {}

void Dense::declare(ParameterLayout& trainable, ParameterLayout& /*state*/) {
  kernel_ = trainable.block(trainable.add({name() + "/kernel", inputs_, options_.units,
                                           Init::kGlorotUniform, options_.kernel_regularizer}));
  if (options_.use_bias) {
    bias_ = trainable.block(trainable.add(
        {name() + "/bias", 1, options_.units, Init::kZeros, options_.bias_regularizer}));
  }
}

void Dense::forward(const Matrix& x, Matrix& y, const ForwardContext& /*ctx*/) {
  y.resize(x.rows(), options_.units);
  y.noalias() = x * param(kernel_);
  add_bias_and_activate(options_.activation, MatrixMap(y.data(), y.rows(), y.cols()),
                        options_.use_bias ? param(bias_).data() : nullptr);
}

void Dense::backward(const Matrix& x, const Matrix& y, const Matrix& dy, Matrix* dx) {
  const Matrix& dz = activation_backward(options_.activation, y, dy, dz_);
  grad(kernel_).noalias() += x.transpose() * dz;
  if (options_.use_bias) grad(bias_) += dz.colwise().sum();
  if (dx) {
    dx->resize(x.rows(), inputs_);
    dx->noalias() = dz * param(kernel_).transpose();
  }
}

LayerCost Dense::cost(int batch) const {
  const double n = batch, in = inputs_, out = options_.units;
  LayerCost c;
  c.forward_flops = 2 * n * in * out + 2 * n * out;  // GEMM, then bias and activation
  c.forward_bytes = kFloatBytes * (n * in + in * out + n * out);
  c.backward_flops = 4 * n * in * out + n * out;  // dW and dx GEMMs, bias sum
  c.backward_bytes = kFloatBytes * (2 * n * out + 2 * n * in + 2 * in * out);
  c.forward_kernels = 1;
  c.backward_kernels = 2;
  return c;
}

}  // namespace distlab::nn
