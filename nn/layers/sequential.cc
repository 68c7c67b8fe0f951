#include "nn/layers/sequential.h"

namespace distlab::nn {
namespace {

Shape last_output(Shape input, const std::vector<LayerPtr>& layers) {
  return layers.empty() ? input : layers.back()->output_shape();
}

}  // namespace

Sequential::Sequential(std::string name, Shape input, std::vector<LayerPtr> layers)
    : Layer(std::move(name), input, last_output(input, layers)),
      layers_(std::move(layers)),
      outputs_(layers_.size()) {}

void Sequential::declare(ParameterLayout& trainable, ParameterLayout& state) {
  for (auto& layer : layers_) layer->declare(trainable, state);
}

void Sequential::bind(const ParameterBuffers& buffers) {
  for (auto& layer : layers_) layer->bind(buffers);
}

void Sequential::seed(uint64_t seed) {
  for (std::size_t i = 0; i < layers_.size(); ++i) layers_[i]->seed(derive_seed(seed, {i}));
}

const Matrix& Sequential::run(const Matrix& x, const ForwardContext& ctx) {
  const Matrix* in = &x;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    layers_[i]->forward(*in, outputs_[i], ctx);
    in = &outputs_[i];
  }
  return *in;
}

void Sequential::forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) {
  y = run(x, ctx);
}

void Sequential::backward(const Matrix& x, const Matrix& /*y*/, const Matrix& dy, Matrix* dx) {
  if (layers_.empty()) {
    if (dx) *dx = dy;
    return;
  }
  const Matrix* grad_out = &dy;
  for (std::size_t i = layers_.size(); i-- > 0;) {
    const Matrix& in = i == 0 ? x : outputs_[i - 1];
    // The first layer writes dx only when the caller wants it: the input
    // gradient of a model's first layer is never needed, and skipping it
    // saves a whole GEMM for the first convolution.
    Matrix* grad_in = i == 0 ? dx : &scratch_[i % 2];
    layers_[i]->backward(in, outputs_[i], *grad_out, grad_in);
    grad_out = grad_in;
  }
}

LayerCost Sequential::cost(int batch) const {
  LayerCost total;
  for (const auto& layer : layers_) total += layer->cost(batch);
  return total;
}

void Sequential::for_each(const std::function<void(const Layer&)>& visit) const {
  for (const auto& layer : layers_) layer->for_each(visit);
}

}  // namespace distlab::nn
