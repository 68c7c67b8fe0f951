// A layer is a forward and a backward function over row-major batches
// (llm.c style), plus the bookkeeping a distributed runtime needs: the
// parameter blocks it owns in the model's flat buffers and its cost.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/activation.h"
#include "nn/cost.h"
#include "nn/parameters.h"
#include "nn/random.h"
#include "nn/tensor.h"

namespace distlab::nn {

enum class Phase { kTrain, kInfer };

// How several vectors become one: side by side, or added element-wise.
enum class Combine { kConcat, kSum };

// What a forward pass needs besides its input. `step` seeds per-step
// randomness (dropout masks), so that a resumed run draws the same masks.
struct ForwardContext {
  Phase phase = Phase::kInfer;
  uint64_t step = 0;
};

class Layer {
 public:
  Layer(std::string name, Shape input, Shape output);
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  const std::string& name() const { return name_; }
  virtual std::string kind() const = 0;
  Shape input_shape() const { return input_; }
  Shape output_shape() const { return output_; }

  // Adds this layer's blocks to the model's layouts (trainable, state) and
  // keeps a copy of each block it added, offsets included.
  virtual void declare(ParameterLayout& /*trainable*/, ParameterLayout& /*state*/) {}
  // Whether the layer (or one inside it) owns trainable parameters: the
  // backward pass of a chain can stop at the first layer that does.
  // Sequential checks it against what declare() adds.
  virtual bool has_parameters() const { return false; }
  // Points the layer at the allocated buffers; called once, after declare.
  virtual void bind(const ParameterBuffers& buffers) { buffers_ = buffers; }
  // Seeds the layer's own randomness (dropout); weights are initialised by
  // the model from the layout, so layers need not know initialisers.
  virtual void seed(uint64_t /*seed*/) {}

  // Whether y holds x's values unchanged, in x's order, so that only the
  // shape differs (a flatten): a chain then hands x itself to the next layer
  // and the gradient straight back, calling neither pass. forward() and
  // backward() must still work, for callers that do call them.
  virtual bool passes_values_through() const { return false; }

  // y = f(x). x is (N, input size), y becomes (N, output size).
  virtual void forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) = 0;
  // Given the forward's x, y and dL/dy: adds dL/dparams into the gradient
  // buffer (+=) and, when dx is not null, writes dL/dx. Layers may keep
  // what the last forward computed (masks, argmax, statistics) for this.
  virtual void backward(const Matrix& x, const Matrix& y, const Matrix& dy, Matrix* dx) = 0;

  // Cost of a forward and a backward pass; the backward pass computes the
  // input gradient only when `input_gradient` (see Sequential::backward).
  virtual LayerCost cost(int batch, bool input_gradient) const = 0;

  // Appends the cost of this layer or, for composites, of every layer inside.
  virtual void collect_costs(int batch, bool input_gradient,
                             std::vector<LayerCostEntry>& out) const {
    out.push_back({name(), kind(), cost(batch, input_gradient)});
  }

 protected:
  // Views of one of this layer's blocks in the bound buffers.
  MatrixMap param(const ParamBlock& b) const { return view(buffers_.params, b); }
  MatrixMap grad(const ParamBlock& b) const { return view(buffers_.grads, b); }
  MatrixMap state(const ParamBlock& b) const { return view(buffers_.state, b); }

 private:
  static MatrixMap view(float* base, const ParamBlock& b) {
    return MatrixMap(base + b.offset, b.rows, b.cols);
  }

  std::string name_;
  Shape input_;
  Shape output_;
  ParameterBuffers buffers_;
};

using LayerPtr = std::unique_ptr<Layer>;

// Cost of an element-wise layer without parameters over `values` values:
// its backward pass is the input gradient, so it costs nothing without one.
LayerCost elementwise_cost(int64_t values, double flops_per_value, bool input_gradient,
                           int kernels = 1);

// The kernels a framework launches for a product or convolution layer (the
// GPU's fixed costs; the CPU counts its own dispatches apart), as
// TensorFlow's graph has them: forward the product, then BiasAdd and the
// activation where the layer has them; backward the activation's gradient,
// BiasAddGrad, the weight gradient and, where it is needed, the input
// gradient. `Options` is a layer's options with `use_bias` and `activation`.
template <typename Options>
int framework_forward_kernels(const Options& o) {
  return 1 + (o.use_bias ? 1 : 0) + (o.activation != Activation::kNone ? 1 : 0);
}
template <typename Options>
int framework_backward_kernels(const Options& o, bool input_gradient) {
  return (o.activation != Activation::kNone ? 1 : 0) + (o.use_bias ? 1 : 0) + 1 +
         (input_gradient ? 1 : 0);
}

}  // namespace distlab::nn
