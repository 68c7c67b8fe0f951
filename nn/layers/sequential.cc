#include "nn/layers/sequential.h"

#include <algorithm>
#include <chrono>

#include "common/error.h"
#include "nn/layer_timing.h"

namespace distlab::nn {
namespace {

Shape last_output(Shape input, const std::vector<LayerPtr>& layers) {
  return layers.empty() ? input : layers.back()->output_shape();
}

// Runs one layer pass, timed when a LayerTimer is installed (./calibrate).
template <typename PassFn>
void run_pass(const Layer& layer, Pass pass, bool input_gradient, PassFn&& pass_fn) {
  LayerTimer* timer = layer_timer();
  if (!timer) {
    pass_fn();
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  pass_fn();
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  timer->record(
      {.layer = &layer, .pass = pass, .input_gradient = input_gradient, .seconds = took.count()});
}

}  // namespace

Sequential::Sequential(std::string name, Shape input, std::vector<LayerPtr> layers)
    : Layer(std::move(name), input, last_output(input, layers)),
      layers_(std::move(layers)),
      first_with_parameters_(std::find_if(layers_.begin(), layers_.end(),
                                          [](const LayerPtr& l) { return l->has_parameters(); }) -
                             layers_.begin()),
      outputs_(layers_.size()) {
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const bool handed_on = layers_[i]->passes_values_through();
    holder_.push_back(!handed_on ? static_cast<std::ptrdiff_t>(i) : i == 0 ? -1 : holder_[i - 1]);
  }
}

const Matrix& Sequential::output(std::size_t i, const Matrix& x) const {
  return holder_[i] < 0 ? x : outputs_[static_cast<std::size_t>(holder_[i])];
}

void Sequential::declare(ParameterLayout& trainable, ParameterLayout& state) {
  block_begin_.clear();
  for (auto& layer : layers_) {
    const std::size_t blocks = trainable.blocks().size();
    block_begin_.push_back(blocks);
    layer->declare(trainable, state);
    // backward() trusts has_parameters() to know where it may stop.
    if ((trainable.blocks().size() > blocks) != layer->has_parameters()) {
      throw Error("layer '" + layer->name() + "': has_parameters() disagrees with declare()");
    }
  }
  block_begin_.push_back(trainable.blocks().size());
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
    // A layer that passes values through is still timed (at what it costs
    // here: nothing), so that ./calibrate sees every layer of the chain.
    run_pass(*layers_[i], Pass::kForward, false, [&] {
      if (holder_[i] == static_cast<std::ptrdiff_t>(i)) layers_[i]->forward(*in, outputs_[i], ctx);
    });
    in = &output(i, x);
  }
  return *in;
}

void Sequential::forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) {
  y = run(x, ctx);
}

void Sequential::backward(const Matrix& x, const Matrix& /*y*/, const Matrix& dy, Matrix* dx) {
  backward_through(x, dy, dx, nullptr);
}

void Sequential::backward_layers(const Matrix& x, const Matrix& dy,
                                 const std::function<void(std::size_t)>& after_layer) {
  backward_through(x, dy, nullptr, &after_layer);
}

void Sequential::backward_through(const Matrix& x, const Matrix& dy, Matrix* dx,
                                  const std::function<void(std::size_t)>* after_layer) {
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
    if (holder_[i] != static_cast<std::ptrdiff_t>(i)) {
      // A pass-through layer leaves the gradient where it is; only the
      // caller's dx gets a copy. (It has no parameters, so it is `last`
      // only when the caller wants dx.)
      const bool to_caller = i == last && dx;
      run_pass(*layers_[i], Pass::kBackward, true, [&] {
        if (to_caller) *dx = *grad_out;
      });
      if (to_caller) grad_out = dx;
    } else {
      const Matrix& in = i == 0 ? x : output(i - 1, x);
      // The scratch buffer grad_out is not in (pass-throughs break the
      // alternation by layer index).
      Matrix* grad_in = i == last ? dx : grad_out == &scratch_[0] ? &scratch_[1] : &scratch_[0];
      run_pass(*layers_[i], Pass::kBackward, grad_in != nullptr,
               [&] { layers_[i]->backward(in, outputs_[i], *grad_out, grad_in); });
      grad_out = grad_in;
    }
    if (after_layer) (*after_layer)(i);
  }
  if (after_layer) {
    for (std::size_t i = last; i-- > 0;) (*after_layer)(i);
  }
}

// Mirrors backward(): layer i computes its input gradient when the caller
// wants one or when a layer before it has parameters.
bool Sequential::wants_input_gradient(std::size_t i, bool caller_wants) const {
  return caller_wants || i > first_with_parameters_;
}

LayerCost Sequential::cost(int batch, bool input_gradient) const {
  LayerCost total;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    total += layers_[i]->cost(batch, wants_input_gradient(i, input_gradient));
  }
  return total;
}

void Sequential::collect_layer_costs(std::size_t layer, int batch,
                                     std::vector<LayerCostEntry>& out) const {
  layers_.at(layer)->collect_costs(batch, wants_input_gradient(layer, false), out);
}

void Sequential::collect_costs(int batch, bool input_gradient,
                               std::vector<LayerCostEntry>& out) const {
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    layers_[i]->collect_costs(batch, wants_input_gradient(i, input_gradient), out);
  }
}

}  // namespace distlab::nn
