// What a piece of computation costs, in the terms of a roofline model: for
// each kernel group (a layer's pass, an optimizer update, a reduction), the
// arithmetic and the memory traffic. The real backend ignores it and simply
// runs the work; the simulator turns it into time on the host's machine type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/cost.h"

namespace distlab::strategy {

struct WorkItem {
  double flops = 0;
  double bytes = 0;  // read plus written
  int kernels = 0;   // launches: a fixed overhead each on GPUs
};

struct Work {
  std::string label;  // shown on the timeline: "forward+backward", "adam update"...
  std::vector<WorkItem> items;

  double flops() const;
  double bytes() const;
};

// One training step of a model: every layer's forward and backward pass, as
// nn::Model::layer_costs gives them.
Work training_step_work(const std::vector<nn::LayerCostEntry>& layers);
// Inference over `examples` examples in batches of the costs' batch size.
Work evaluation_work(const std::vector<nn::LayerCostEntry>& layers, double batches);
// An elementwise pass over `count` floats: `flops_per_float` operations,
// `floats_touched` floats read or written per element (a += b: 1 and 3).
Work elementwise_work(std::string label, int64_t count, double flops_per_float,
                      double floats_touched);

}  // namespace distlab::strategy
