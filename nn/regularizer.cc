#include "nn/regularizer.h"

#include <cmath>

namespace distlab::nn {

double Regularizer::penalty(std::span<const float> w) const {
  double abs_sum = 0, square_sum = 0;
  for (float v : w) {
    abs_sum += std::fabs(v);
    square_sum += double{v} * v;
  }
  return l1 * abs_sum + l2 * square_sum;
}

void Regularizer::add_gradient(std::span<const float> w, std::span<float> grad) const {
  for (std::size_t i = 0; i < w.size(); ++i) {
    const float sign = static_cast<float>((w[i] > 0) - (w[i] < 0));
    grad[i] += l1 * sign + 2 * l2 * w[i];
  }
}

}  // namespace distlab::nn
