#include "nn/regularizer.h"

#include "nn/eigen.h"

namespace distlab::nn {
namespace {

using ConstValues = Eigen::Map<const Eigen::ArrayXf>;
using Values = Eigen::Map<Eigen::ArrayXf>;

ConstValues values(std::span<const float> s) {
  return {s.data(), static_cast<Eigen::Index>(s.size())};
}

}  // namespace

double Regularizer::penalty(std::span<const float> w) const {
  const auto v = values(w);
  double total = 0;
  if (l1 != 0) total += l1 * static_cast<double>(v.abs().sum());
  if (l2 != 0) total += l2 * static_cast<double>(v.square().sum());
  return total;
}

void Regularizer::add_gradient(std::span<const float> w, std::span<float> grad) const {
  const auto v = values(w);
  Values g(grad.data(), static_cast<Eigen::Index>(grad.size()));
  if (l1 != 0 && l2 != 0) {
    g += l1 * v.sign() + (2 * l2) * v;
  } else if (l1 != 0) {
    g += l1 * v.sign();
  } else if (l2 != 0) {
    g += (2 * l2) * v;
  }
}

double Regularizer::apply(std::span<const float> w, std::span<float> grad) const {
  add_gradient(w, grad);
  return penalty(w);
}

}  // namespace distlab::nn
