#include "strategy/work.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "common/error.h"
#include "nn/kernels/kernels.h"
#include "nn/model.h"

namespace distlab::strategy {

const char* op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::kDense:
      return "dense";
    case OpKind::kConvolution:
      return "convolution";
    case OpKind::kEmbedding:
      return "embedding";
    case OpKind::kElementwise:
      return "elementwise";
  }
  return "elementwise";
}

OpKind op_kind_of_layer(const std::string& layer_kind) {
  if (layer_kind == "dense") return OpKind::kDense;
  if (layer_kind == "conv2d") return OpKind::kConvolution;
  if (layer_kind == "embedding") return OpKind::kEmbedding;
  return OpKind::kElementwise;
}

double Work::flops() const {
  double total = 0;
  for (const auto& item : items) total += item.flops;
  return total;
}

double Work::bytes() const {
  double total = 0;
  for (const auto& item : items) total += item.bytes;
  return total;
}

namespace {

WorkItem forward_item(const nn::LayerCostEntry& layer) {
  const nn::LayerCost& c = layer.cost;
  return {
      c.forward_flops,          c.forward_bytes, c.forward_kernels, op_kind_of_layer(layer.kind), 1,
      double(c.forward_regions)};
}

// A layer whose backward pass has nothing to compute (the first layers of a
// model, before any parameter) is not dispatched at all.
WorkItem backward_item(const nn::LayerCostEntry& layer) {
  const nn::LayerCost& c = layer.cost;
  const bool runs = c.backward_flops > 0 || c.backward_bytes > 0;
  return {c.backward_flops,   c.backward_bytes,
          c.backward_kernels, op_kind_of_layer(layer.kind),
          runs ? 1.0 : 0.0,   double(c.backward_regions)};
}

}  // namespace

Work training_step_work(const std::vector<nn::LayerCostEntry>& layers) {
  Work work{.label = "forward+backward"};
  work.items.reserve(2 * layers.size());
  // In the order they run: every forward pass, then the backward passes
  // from the last layer to the first.
  for (const auto& layer : layers) work.items.push_back(forward_item(layer));
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
    work.items.push_back(backward_item(*it));
  }
  return work;
}

Work StepPasses::backward_piece(std::size_t k) const {
  const std::size_t begin = k == 0 ? 0 : backward_pieces.at(k - 1).end_item;
  const std::size_t end =
      k + 1 == backward_pieces.size() ? backward.items.size() : backward_pieces.at(k).end_item;
  Work piece = backward;
  piece.items.assign(backward.items.begin() + static_cast<std::ptrdiff_t>(begin),
                     backward.items.begin() + static_cast<std::ptrdiff_t>(end));
  return piece;
}

StepPasses model_step_passes(const nn::Model& model, int batch) {
  const auto by_layer = model.layer_costs_by_layer(batch);
  std::vector<nn::LayerCostEntry> layers;
  for (const auto& leaves : by_layer) layers.insert(layers.end(), leaves.begin(), leaves.end());
  StepPasses passes{.forward = {.label = "forward",
                                .phase = Phase::kForward,
                                .host_waits = false,
                                .starts_step = true},
                    .backward = {.label = "backward", .phase = Phase::kBackward}};
  const auto parameters = static_cast<double>(model.parameters().size());
  const double logits = static_cast<double>(batch) * model.spec().num_classes;
  // The gradient buffer cleared: one float written each.
  passes.forward.items.push_back({0, parameters * nn::kFloatBytes, 1, OpKind::kElementwise, 1});
  for (const auto& layer : layers) passes.forward.items.push_back(forward_item(layer));
  // Softmax cross-entropy and its gradient: about ten operations a logit
  // (max, exp, sum, log, divide), reading the logits and writing dlogits.
  passes.forward.items.push_back(
      {10 * logits, 3 * logits * nn::kFloatBytes, 1, OpKind::kElementwise, 1});
  const std::vector<int64_t> final_from = model.gradients_final_from();
  for (std::size_t layer = by_layer.size(); layer-- > 0;) {
    const auto& leaves = by_layer[layer];
    for (auto it = leaves.rbegin(); it != leaves.rend(); ++it) {
      passes.backward.items.push_back(backward_item(*it));
    }
    passes.backward_pieces.push_back({passes.backward.items.size(), final_from[layer]});
  }
  // Penalties: each regularized value read with its gradient, which is
  // written back, in one pass per block.
  double regularized = 0;
  int blocks = 0;
  for (const auto& block : model.trainable_layout().blocks()) {
    if (!block.regularizer.active()) continue;
    regularized += static_cast<double>(block.size());
    ++blocks;
  }
  if (blocks > 0) {
    passes.backward.items.push_back({4 * regularized, 3 * regularized * nn::kFloatBytes, blocks,
                                     OpKind::kElementwise, static_cast<double>(blocks)});
  }
  return passes;
}

Work model_step_work(const nn::Model& model, int batch) {
  StepPasses passes = model_step_passes(model, batch);
  Work work{.label = "forward+backward"};
  work.items = std::move(passes.forward.items);
  work.items.insert(work.items.end(), passes.backward.items.begin(), passes.backward.items.end());
  return work;
}

Work update_work(const std::string& optimizer_kind, int64_t floats, int tensors) {
  // Per value: FLOPs (a square root or a division counted as one), and the
  // floats read and written (weight, gradient, then each state slot twice).
  struct Cost {
    double flops, floats_touched;
  };
  const Cost cost = optimizer_kind == "adam"      ? Cost{12, 7}
                    : optimizer_kind == "adagrad" ? Cost{6, 5}
                    : optimizer_kind == "ftrl"    ? Cost{16, 7}
                                                  : Cost{4, 5};  // sgd with momentum
  Work work = elementwise_work(optimizer_kind + " update", floats, cost.flops, cost.floats_touched);
  work.phase = Phase::kOptimizer;
  if (work.items.empty()) return work;
  if (floats > nn::kernels::kOptimizerParallelValues) work.items.front().regions = 1;
  work.items.front().kernels = std::max(tensors, 1);
  return work;
}

Work per_layer_update_work(const nn::OptimizerSpec& optimizer, const nn::ParameterLayout& layout,
                           int64_t first, int64_t floats) {
  Work work{.label = optimizer.kind + " update", .phase = Phase::kOptimizer};
  for (const nn::OptimizerAssignment& a : nn::assign_optimizer(optimizer, layout, first, floats)) {
    if (a.ranges.empty()) continue;
    const Work part =
        update_work(a.optimizer->kind, a.floats(), std::max(static_cast<int>(a.ranges.size()), 1));
    work.items.insert(work.items.end(), part.items.begin(), part.items.end());
  }
  return work;
}

Work evaluation_work(const std::vector<nn::LayerCostEntry>& layers, double batches) {
  if (!(batches >= 0) || !std::isfinite(batches)) {
    throw Error("evaluation_work: the number of batches must be finite and not negative, got " +
                std::to_string(batches));
  }
  // A last, partial batch still launches every kernel.
  const double launches = std::ceil(batches);
  Work work{.label = "evaluation", .phase = Phase::kEvaluation};
  work.items.reserve(layers.size());
  for (const auto& layer : layers) {
    const nn::LayerCost& c = layer.cost;
    const double kernels = c.forward_kernels * launches;
    if (kernels > std::numeric_limits<int>::max()) {
      throw Error("evaluation_work: " + std::to_string(batches) + " batches of layer '" +
                  layer.name + "' launch more kernels than an int counts");
    }
    work.items.push_back({c.forward_flops * batches, c.forward_bytes * batches,
                          static_cast<int>(kernels), op_kind_of_layer(layer.kind), launches,
                          c.forward_regions * launches});
  }
  return work;
}

Work packing(Work work) {
  work.phase = Phase::kPacking;
  return work;
}

Work elementwise_work(std::string label, int64_t count, double flops_per_float,
                      double floats_touched) {
  if (count < 0) {
    throw Error("elementwise_work '" + label + "': negative count " + std::to_string(count));
  }
  Work work{.label = std::move(label)};
  if (count == 0) return work;
  const auto n = static_cast<double>(count);
  work.items.push_back(
      {n * flops_per_float, n * floats_touched * nn::kFloatBytes, 1, OpKind::kElementwise, 1});
  return work;
}

}  // namespace distlab::strategy
