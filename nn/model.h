// A model: the network of a spec plus its three flat buffers (parameters,
// gradients, state). Replicas built from the same spec and seed start with
// bit-identical parameters, wherever they run.
//
// One thread at a time: layers keep what a forward pass computed for the
// backward pass, so predict() or evaluate() between compute_gradients() and
// the use of its gradients is fine, but two threads on one model are not.
// Its memory is the buffers plus per-layer activations for the last batch
// (about 40 MB for the lab CNN at batch 128).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "nn/data/dataset.h"
#include "nn/loss.h"
#include "nn/model_spec.h"

namespace distlab::nn {

struct Evaluation {
  double loss = 0;
  double accuracy = 0;
  int64_t examples = 0;
};

class Model {
 public:
  Model(ModelSpec spec, uint64_t seed);

  const ModelSpec& spec() const { return spec_; }
  const Sequential& network() const { return *network_; }
  const ParameterLayout& trainable_layout() const { return trainable_; }
  const ParameterLayout& state_layout() const { return state_layout_; }

  // Trainable parameters, not counting the padding between blocks.
  int64_t parameter_count() const { return trainable_.count(); }

  std::span<float> parameters() { return params_; }
  std::span<const float> parameters() const { return params_; }
  std::span<float> gradients() { return grads_; }
  std::span<const float> gradients() const { return grads_; }
  std::span<float> state() { return state_; }
  std::span<const float> state() const { return state_; }

  // Zeroes the gradient buffer, the compute threads sharing it (every
  // training pass begins with this).
  void zero_gradients();
  // Adds every regularized block's penalty gradient to the gradient buffer
  // and its penalty to `loss`, one by one in block order (the end of a
  // backward pass; public for a profiler that times it apart).
  void add_penalties(double& loss);

  // Gives dropout stream `stream` of the model's seed (a worker's rank, say),
  // so that replicas that share their initial weights draw different masks.
  // A new model uses stream 0.
  void seed_randomness(uint64_t stream);

  // One training pass on a batch: forward (training mode), loss plus the
  // regularisation penalties, backward. Overwrites the gradient buffer.
  // `step` numbers the batch for per-step randomness. The loss is the sum
  // over the batch divided by `divisor` (default: the batch's size; a
  // synchronous strategy passes the global batch, so that workers' gradients
  // add up to the global mean). An empty batch gives zero data gradients.
  LossResult compute_gradients(const Matrix& x, std::span<const int32_t> labels, uint64_t step,
                               int64_t divisor = 0);
  // compute_gradients in its two halves, for a caller that times them
  // apart: forward_loss clears the gradient buffer and runs the forward
  // pass and the loss (without penalties); backward_gradients, on the same
  // batch `x` right after, runs the backward pass and the penalties, which
  // it adds to `result.loss`.
  LossResult forward_loss(const Matrix& x, std::span<const int32_t> labels, uint64_t step,
                          int64_t divisor = 0);
  void backward_gradients(const Matrix& x, LossResult& result);
  // backward_gradients, telling `ready(from)` as the gradients become final
  // from the last layer's down: once per layer of network(), in reverse
  // order, every gradient from float `from` on is final, its penalty
  // included (from: gradients_final_from()'s for that layer). Same bits.
  using GradientsReady = std::function<void(int64_t from)>;
  void backward_gradients(const Matrix& x, LossResult& result, const GradientsReady& ready);
  // Per layer of network(), in layer order: the float of the gradient
  // buffer from which every gradient is final once the backward pass has
  // been through that layer (the first float of its parameters, or the
  // next layer's figure for a layer without any).
  std::vector<int64_t> gradients_final_from() const;

  // Inference-mode logits of a batch.
  const Matrix& predict(const Matrix& x);
  // Mean loss (without penalties) and accuracy over a whole data set.
  Evaluation evaluate(const Dataset& data, int batch_size = 1000);

  // Costs of one training step at this batch size: every leaf layer's, and
  // their sum. Input gradients that training skips are not counted.
  std::vector<LayerCostEntry> layer_costs(int batch) const;
  // The same, layer by layer of network() (a residual block's leaves
  // together), in layer order.
  std::vector<std::vector<LayerCostEntry>> layer_costs_by_layer(int batch) const;
  LayerCost total_cost(int batch) const { return network_->cost(batch, false); }

 private:
  void initialize();

  ModelSpec spec_;
  uint64_t seed_;
  std::unique_ptr<Sequential> network_;
  ParameterLayout trainable_;
  ParameterLayout state_layout_;
  FloatBuffer params_, grads_, state_;
  Matrix dlogits_;                  // (N, classes), reused each step
  const Matrix* logits_ = nullptr;  // forward_loss's, until backward_gradients
  Matrix eval_x_;
  std::vector<int32_t> eval_y_;
};

}  // namespace distlab::nn
