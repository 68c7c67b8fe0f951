// Keras-style weight penalties: l1 * sum|w| + l2 * sum(w^2), added to the loss,
// with gradient l1 * sign(w) + 2 * l2 * w added to the weights' gradient.
#pragma once

#include <span>

namespace distlab::nn {

struct Regularizer {
  float l1 = 0;
  float l2 = 0;

  bool active() const { return l1 != 0 || l2 != 0; }
  double penalty(std::span<const float> w) const;
  void add_gradient(std::span<const float> w, std::span<float> grad) const;
  // Both at once, for the training step: adds the gradient, returns the penalty.
  double apply(std::span<const float> w, std::span<float> grad) const;
};

}  // namespace distlab::nn
