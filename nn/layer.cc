#include "nn/layer.h"

namespace distlab::nn {

Layer::Layer(std::string name, Shape input, Shape output)
    : name_(std::move(name)), input_(input), output_(output) {}

LayerCost elementwise_cost(int64_t values, double flops_per_value, bool input_gradient,
                           int kernels) {
  LayerCost c;
  c.forward_flops = flops_per_value * values;
  c.forward_bytes = 2 * kFloatBytes * values;  // read x, write y
  c.forward_kernels = kernels;
  if (input_gradient) {
    c.backward_flops = flops_per_value * values;
    c.backward_bytes = 3 * kFloatBytes * values;  // read x (or y) and dy, write dx
    c.backward_kernels = kernels;
  }
  return c;
}

}  // namespace distlab::nn
