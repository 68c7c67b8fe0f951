// Activations fused into Dense and Conv2D (Keras' `activation:` argument):
// applying it in place on the layer's output saves a pass over memory.
#pragma once

#include <string>

#include "nn/tensor.h"

namespace distlab::nn {

enum class Activation { kNone, kRelu };

Activation parse_activation(const std::string& name);  // "none" | "relu"
std::string to_string(Activation a);

// y = act(y), in place.
void apply_activation(Activation a, Matrix& y);
// The gradient before the activation, dz = dy * act'(y), given its output y.
// Returns dy itself when the activation is the identity (no copy).
const Matrix& activation_backward(Activation a, const Matrix& y, const Matrix& dy, Matrix& dz);

}  // namespace distlab::nn
