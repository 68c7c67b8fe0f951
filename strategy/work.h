// What a piece of computation costs, in the terms of the simulator's compute
// model: for each operation (a layer's pass, an optimizer update, a
// reduction), its kind, how many times the host dispatches it, its
// arithmetic and its memory traffic. The real backend ignores it and simply
// runs the work; the simulator turns it into time on the host's machine type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nn/cost.h"
#include "nn/model_spec.h"
#include "strategy/config.h"
#include "strategy/phase.h"

namespace distlab::nn {
class Model;
}  // namespace distlab::nn

namespace distlab::strategy {

// Kinds of operation that a device runs at different rates: a matrix
// product, a convolution, a gather or scatter of table rows, and
// everything that streams through memory (activations, pooling,
// normalisation, optimizer updates, reductions).
enum class OpKind { kDense, kConvolution, kEmbedding, kElementwise };
inline constexpr int kOpKinds = 4;

// "dense", "convolution", "embedding", "elementwise": the catalog's keys.
const char* op_kind_name(OpKind kind);
// The kind of a layer (nn::Layer::kind()): dense, conv2d, embedding; every
// other layer streams through memory.
OpKind op_kind_of_layer(const std::string& layer_kind);

struct WorkItem {
  double flops = 0;
  double bytes = 0;  // read plus written
  int kernels = 0;   // launches: a fixed overhead each on GPUs
  OpKind kind = OpKind::kElementwise;
  double ops = 1;      // host dispatches: a fixed overhead each on every device
  double regions = 0;  // CPU parallel regions: waking the thread team is a fixed cost each
  Precision precision = Precision::kFloat32;  // of its products and activations
};

// A collective among the GPUs of one task's machine, over its bus: how a
// task that trains on several (cluster.gpus_per_task) combines their
// gradients before it talks to other tasks, and hands weights back.
enum class DeviceCollective {
  kReduceScatter,  // each device ends with the sum of a 1/k part
  kAllGather,      // each device's part to every device
  kReduce,         // the sum on one device
  kBroadcast,      // one device's values to every device
};

struct Work {
  std::string label;  // shown on the timeline: "forward+backward", "adam update"...
  std::vector<WorkItem> items;
  Phase phase = Phase::kOther;  // where steps.csv counts its time
  // Whether the host waits for this work to end before it goes on. The
  // forward pass does not: on a GPU the host queues the backward pass's
  // kernels behind it, and the two take the longer of the host's time and
  // the device's, as one; on a CPU the simulator sleeps the two as one.
  bool host_waits = true;
  // Whether this work opens a training step (its forward pass): a GPU's
  // host pays the framework's fixed cost per step here.
  bool starts_step = false;

  double flops() const;
  double bytes() const;
};

// One training step of a model: every layer's forward and backward pass, as
// nn::Model::layer_costs gives them.
Work training_step_work(const std::vector<nn::LayerCostEntry>& layers);
// The whole training step of `model` at `batch` as the NN core runs it
// (nn::Model::compute_gradients): every layer's passes, then the rest, as
// one element-wise operation each: the gradient buffer cleared, the loss
// and its gradient over the logits, and each regularized block's penalty.
Work model_step_work(const nn::Model& model, int batch);
// The same step in the two computations the NN core runs it in
// (nn::Model::forward_loss, then nn::Model::backward_gradients): the forward
// passes, the gradient buffer cleared and the loss; then the backward passes
// and the penalties.
// Part of the backward pass: the layers of the network one of them runs
// (its leaves, for a residual block), after which every gradient from
// float `gradients_from` on is final (nn::Model::gradients_final_from).
struct BackwardPiece {
  std::size_t end_item = 0;  // backward.items of the pieces so far, this one's included
  int64_t gradients_from = 0;
};

struct StepPasses {
  Work forward;
  Work backward;
  // The backward pass layer by layer, from the last: consecutive runs of
  // backward.items, the last piece's to the end (the penalties and loss
  // scaling run with it). One piece per layer of the network.
  std::vector<BackwardPiece> backward_pieces;
  // The backward items of piece k.
  Work backward_piece(std::size_t k) const;
};
StepPasses model_step_passes(const nn::Model& model, int batch);
// One optimizer step over `floats` parameters: Adam reads and writes
// parameter, gradient and two moments, about a dozen operations a
// parameter; SGD with momentum about half that. The NN core updates the
// whole buffer in one dispatch; a framework on a GPU launches a kernel per
// parameter tensor (Keras' optimizers apply each variable on its own:
// ResourceApplyAdam), `tensors` of them.
Work update_work(const std::string& optimizer_kind, int64_t floats, int tensors = 1);
// A per_layer optimizer's update of the values [first, first + floats) of a
// model's parameter buffer: each part on its own values, one dispatch per
// parameter tensor it updates (PerLayerOptimizer applies them range by range).
Work per_layer_update_work(const nn::OptimizerSpec& optimizer, const nn::ParameterLayout& layout,
                           int64_t first, int64_t floats);
// Inference over `examples` examples in batches of the costs' batch size.
Work evaluation_work(const std::vector<nn::LayerCostEntry>& layers, double batches);
// An elementwise pass over `count` floats: `flops_per_float` operations,
// `floats_touched` floats read or written per element (a += b: 1 and 3).
Work elementwise_work(std::string label, int64_t count, double flops_per_float,
                      double floats_touched);
// `work`, counted as Phase::kPacking: the sums of a collective or a server.
Work packing(Work work);

}  // namespace distlab::strategy
