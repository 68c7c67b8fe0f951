#include "nn/layers/dense.h"

#include "common/error.h"
#include "nn/parallel_product.h"

namespace distlab::nn {

Dense::Dense(std::string name, Shape input, const DenseOptions& options)
    : Layer(std::move(name), input, Shape::flat(options.units)),
      options_(options),
      inputs_(static_cast<int>(input.size())) {
  // Keras applies Dense to the last axis of an image; silently flattening
  // instead would build another model than the spec's author expects.
  if (!input.is_flat()) {
    throw Error("dense '" + this->name() + "' needs flat input, got " + input.to_string() +
                "; add a flatten layer before it");
  }
}

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
  parallel_product(as_map(y), as_map(x), Transpose::kNo, as_const(param(kernel_)), Transpose::kNo);
  add_bias_and_activate(options_.activation, as_map(y),
                        options_.use_bias ? param(bias_).data() : nullptr);
}

void Dense::backward(const Matrix& x, const Matrix& y, const Matrix& dy, Matrix* dx) {
  const Matrix& dz = activation_backward(options_.activation, y, dy, dz_);
  parallel_product(grad(kernel_), as_map(x), Transpose::kYes, as_map(dz), Transpose::kNo,
                   /*accumulate=*/true);
  if (options_.use_bias) kernels::kernels().add_column_sums(as_map(dz), grad(bias_).data());
  if (dx) {
    dx->resize(x.rows(), inputs_);
    parallel_product(as_map(*dx), as_map(dz), Transpose::kNo, as_const(param(kernel_)),
                     Transpose::kYes);
  }
}

LayerCost Dense::cost(int batch, bool input_gradient) const {
  const double n = batch, in = inputs_, out = options_.units;
  LayerCost c;
  c.forward_flops = 2 * n * in * out + 2 * n * out;  // GEMM, then bias and activation
  c.forward_bytes = kFloatBytes * (n * in + in * out + n * out);
  c.forward_kernels = framework_forward_kernels(options_);
  c.forward_regions = plan_product(batch, options_.units, inputs_).regions();
  // dW GEMM and bias sum: read x and dy, read and write dW.
  c.backward_flops = 2 * n * in * out + n * out;
  c.backward_bytes = kFloatBytes * (n * in + n * out + 2 * in * out);
  c.backward_kernels = framework_backward_kernels(options_, input_gradient);
  c.backward_regions = plan_product(inputs_, options_.units, batch).regions();
  if (input_gradient) {  // dx GEMM: read dy and W, write dx
    c.backward_flops += 2 * n * in * out;
    c.backward_bytes += kFloatBytes * (n * out + in * out + n * in);
    c.backward_regions += plan_product(batch, inputs_, options_.units).regions();
  }
  return c;
}

}  // namespace distlab::nn
