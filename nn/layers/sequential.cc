#include "nn/layers/sequential.h"

#include <algorithm>

namespace distlab::nn {
namespace {

Shape last_output(Shape input, const std::vector<LayerPtr>& layers) {
  return layers.empty() ? input : layers.back()->output_shape();
}

}  // namespace

Sequential::Sequential(std::string name, Shape input, std::vector<LayerPtr> layers)
    : Layer(std::move(name), input, last_output(input, layers)),
      layers_(std::move(layers)),
      first_with_parameters_(std::find_if(layers_.begin(), layers_.end(),
                                          [](const LayerPtr& l) { return l->has_parameters(); }) -
                             layers_.begin()),
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
  // Without a caller that wants dx, the pass stops at the first layer with
  // parameters, and that layer computes no input gradient: a model's first
  // convolution or dense layer skips a whole GEMM, and the layers before it
  // (a flatten, say) are not visited at all.
  const std::size_t last = dx ? 0 : first_with_parameters_;
  const Matrix* grad_out = &dy;
  for (std::size_t i = layers_.size(); i-- > last;) {
    const Matrix& in = i == 0 ? x : outputs_[i - 1];
    Matrix* grad_in = i == last ? dx : &scratch_[i % 2];
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
