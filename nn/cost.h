// What a layer costs, for the simulator's roofline model: arithmetic work and
// memory traffic of its forward and backward passes at a given batch size,
// how many kernels each pass launches (a fixed overhead on GPUs), and how
// many parallel regions it opens on the CPU (waking the thread team is a
// fixed cost each, which dominates small layers). The backward pass counts
// the input gradient only where it is computed: not for a model's first
// layer with parameters, nor for the layers before it.
#pragma once

#include <string>

namespace distlab::nn {

struct LayerCost {
  double forward_flops = 0;
  double backward_flops = 0;
  double forward_bytes = 0;   // bytes read and written by the forward pass
  double backward_bytes = 0;  // likewise, backward (input and weight gradients)
  int forward_kernels = 0;
  int backward_kernels = 0;
  int forward_regions = 0;  // OpenMP parallel regions (nn/parallel_product.h and the layers)
  int backward_regions = 0;

  LayerCost& operator+=(const LayerCost& o) {
    forward_flops += o.forward_flops;
    backward_flops += o.backward_flops;
    forward_bytes += o.forward_bytes;
    backward_bytes += o.backward_bytes;
    forward_kernels += o.forward_kernels;
    backward_kernels += o.backward_kernels;
    forward_regions += o.forward_regions;
    backward_regions += o.backward_regions;
    return *this;
  }
};

inline constexpr double kFloatBytes = 4.0;

struct LayerCostEntry {
  std::string name;
  std::string kind;
  LayerCost cost;
};

}  // namespace distlab::nn
