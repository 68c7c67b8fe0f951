// Activations fused into Dense and Conv2D (Keras' `activation:` argument):
// applying it in place on the layer's output saves a pass over memory.
#pragma once

#include <string>

#include "nn/tensor.h"

namespace distlab::nn {

enum class Activation { kNone, kRelu };

Activation parse_activation(const std::string& name);  // "none" | "relu"
std::string to_string(Activation a);

// z = act(z + bias), in place, in one pass over z: z is (rows, units) and
// bias, when not null, holds `units` values.
void add_bias_and_activate(Activation a, MatrixMap z, const float* bias);
// The gradient before the activation, dz = dy * act'(y), given its output y.
// Returns dy itself when the activation is the identity (no copy).
const Matrix& activation_backward(Activation a, const Matrix& y, const Matrix& dy, Matrix& dz);
// The same into dz always, for views (a chunk of a batch's rows).
void activation_backward_into(Activation a, ConstMatrixMap y, ConstMatrixMap dy, Matrix& dz);

}  // namespace distlab::nn
