// Finite-difference gradient checks (tiny-dnn's gradient_check idea): the
// scalar L = sum(y * probe) for a fixed random probe has dL/dy = probe, so a
// layer's backward(probe) must match central differences of L, on every
// input value and every parameter.
#pragma once

#include <string>
#include <vector>

#include "nn/layer.h"

namespace distlab::nn::testing {

// A layer with its own buffers, bound and filled with random parameters.
struct BoundLayer {
  explicit BoundLayer(Layer& layer, uint64_t seed = 1);

  Layer& layer;
  ParameterLayout trainable, state_layout;
  std::vector<float> params, grads, state;
};

struct GradientCheckOptions {
  float epsilon = 5e-3f;
  double abs_tolerance = 2e-3;
  double rel_tolerance = 2e-2;
  bool check_input = true;
  ForwardContext context{Phase::kTrain, 7};
};

struct GradientMismatch {
  std::string what;  // "input 12" or "param 3"
  double analytic = 0;
  double numeric = 0;
};

// Returns every value whose analytic and numeric derivatives disagree
// (empty when the layer is right). x holds the input batch.
std::vector<GradientMismatch> check_gradients(BoundLayer& bound, Matrix x,
                                              const GradientCheckOptions& options = {});

// A batch of `rows` examples of `shape`, uniform in [-1, 1].
Matrix random_batch(int rows, Shape shape, uint64_t seed);

}  // namespace distlab::nn::testing
