#include "strategy/work.h"

#include <cmath>
#include <limits>
#include <utility>

#include "common/error.h"

namespace distlab::strategy {

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

Work training_step_work(const std::vector<nn::LayerCostEntry>& layers) {
  Work work{.label = "forward+backward"};
  work.items.reserve(2 * layers.size());
  // In the order they run: every forward pass, then the backward passes
  // from the last layer to the first.
  for (const auto& layer : layers) {
    const nn::LayerCost& c = layer.cost;
    work.items.push_back({c.forward_flops, c.forward_bytes, c.forward_kernels});
  }
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
    const nn::LayerCost& c = it->cost;
    work.items.push_back({c.backward_flops, c.backward_bytes, c.backward_kernels});
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
  Work work{.label = "evaluation"};
  work.items.reserve(layers.size());
  for (const auto& layer : layers) {
    const nn::LayerCost& c = layer.cost;
    const double kernels = c.forward_kernels * launches;
    if (kernels > std::numeric_limits<int>::max()) {
      throw Error("evaluation_work: " + std::to_string(batches) + " batches of layer '" +
                  layer.name + "' launch more kernels than an int counts");
    }
    work.items.push_back(
        {c.forward_flops * batches, c.forward_bytes * batches, static_cast<int>(kernels)});
  }
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
  work.items.push_back({n * flops_per_float, n * floats_touched * nn::kFloatBytes, 1});
  return work;
}

}  // namespace distlab::strategy
