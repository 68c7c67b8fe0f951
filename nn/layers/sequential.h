// A chain of layers, each feeding the next. It keeps every layer's output for
// the backward pass and two gradient buffers that it reuses step after step.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <vector>

#include "nn/layer.h"

namespace distlab::nn {

class Sequential : public Layer {
 public:
  Sequential(std::string name, Shape input, std::vector<LayerPtr> layers);

  std::string kind() const override { return "sequential"; }
  const std::vector<LayerPtr>& layers() const { return layers_; }

  void declare(ParameterLayout& trainable, ParameterLayout& state) override;
  bool has_parameters() const override { return first_with_parameters_ < layers_.size(); }
  void bind(const ParameterBuffers& buffers) override;
  void seed(uint64_t seed) override;

  // Runs every layer and returns the last output, without copying it.
  const Matrix& run(const Matrix& x, const ForwardContext& ctx);
  void forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) override;
  // `y` is not read: the outputs kept by run() are used instead. Without dx,
  // the pass stops at the first layer with parameters.
  void backward(const Matrix& x, const Matrix& y, const Matrix& dy, Matrix* dx) override;
  // backward() without an input gradient, telling `after_layer(i)` as each
  // layer's pass is done, from the last layer to the first: once for every
  // layer, those it need not visit (before the first with parameters)
  // last. Layer i's parameter gradients are then final.
  void backward_layers(const Matrix& x, const Matrix& dy,
                       const std::function<void(std::size_t layer)>& after_layer);
  // The blocks of the trainable layout that layer i declared: [first, end).
  std::size_t first_block(std::size_t layer) const { return block_begin_[layer]; }
  std::size_t end_block(std::size_t layer) const { return block_begin_[layer + 1]; }
  // The costs of layer i's passes in training (as collect_costs gives them).
  void collect_layer_costs(std::size_t layer, int batch, std::vector<LayerCostEntry>& out) const;
  LayerCost cost(int batch, bool input_gradient) const override;
  void collect_costs(int batch, bool input_gradient,
                     std::vector<LayerCostEntry>& out) const override;

 private:
  bool wants_input_gradient(std::size_t i, bool caller_wants) const;
  // Layer i's output after run(): its own buffer, or, for a layer that
  // passes values through, the buffer it was handed (x for the first ones).
  const Matrix& output(std::size_t i, const Matrix& x) const;
  void backward_through(const Matrix& x, const Matrix& dy, Matrix* dx,
                        const std::function<void(std::size_t)>* after_layer);

  std::vector<LayerPtr> layers_;
  std::size_t first_with_parameters_;     // layers_.size() when none has any
  std::vector<Matrix> outputs_;           // outputs_[i]: output of layers_[i]
  std::vector<std::ptrdiff_t> holder_;    // whose buffer holds layer i's output; -1: x's
  std::array<Matrix, 2> scratch_;         // gradients between layers, used in turn
  std::vector<std::size_t> block_begin_;  // per layer, then the end: see first_block
};

}  // namespace distlab::nn
