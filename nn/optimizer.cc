#include "nn/optimizer.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "nn/kernels/kernels.h"

namespace distlab::nn {
namespace {

// The state of `size` values that an update of n values at `offset` reads.
void check_range(const char* who, int64_t size, int64_t offset, std::size_t params,
                 std::size_t grads) {
  const auto n = static_cast<int64_t>(params);
  if (params != grads || offset < 0 || offset + n > size) {
    throw Error(std::string(who) + ": an update of " + std::to_string(params) + " parameters and " +
                std::to_string(grads) + " gradients at offset " + std::to_string(offset) +
                " does not fit its " + std::to_string(size) + " values");
  }
}

}  // namespace

void Optimizer::step(std::span<float> params, std::span<const float> grads) {
  const auto n = static_cast<std::size_t>(size());
  if (params.size() != n || grads.size() != n) {
    throw Error(name() + ": expected " + std::to_string(n) + " parameters and gradients, got " +
                std::to_string(params.size()) + " and " + std::to_string(grads.size()));
  }
  set_steps(steps_ + 1);
  apply(params, grads, 0);
}

Sgd::Sgd(int64_t size, const SgdOptions& options)
    : Optimizer(options.learning_rate), opt_(options), velocity_(size, 0.0f) {}

void Sgd::apply(std::span<float> params, std::span<const float> grads, int64_t offset) {
  check_range("sgd", size(), offset, params.size(), grads.size());
  const kernels::SgdStep step{
      .learning_rate = learning_rate_, .momentum = opt_.momentum, .nesterov = opt_.nesterov};
  kernels::kernels().sgd(step, params.data(), grads.data(), velocity_.data() + offset,
                         static_cast<int64_t>(params.size()));
}

Adam::Adam(int64_t size, const AdamOptions& options)
    : Optimizer(options.learning_rate), opt_(options), m_(size, 0.0f), v_(size, 0.0f) {}

void Adam::apply(std::span<float> params, std::span<const float> grads, int64_t offset) {
  check_range("adam", size(), offset, params.size(), grads.size());
  const float b1 = opt_.beta1, b2 = opt_.beta2;
  // Bias corrections in double: beta^t underflows float precision early.
  const auto c1 = static_cast<float>(1.0 - std::pow(double{b1}, double(steps_)));
  const auto c2 = static_cast<float>(1.0 - std::pow(double{b2}, double(steps_)));
  // lr * m_hat / (sqrt(v_hat) + eps) with the corrections folded into two
  // scalars: one square root and one division per value.
  const kernels::AdamStep step{.beta1 = b1,
                               .beta2 = b2,
                               .epsilon = opt_.epsilon,
                               .step_size = learning_rate_ / c1,
                               .inv_sqrt_c2 = 1.0f / std::sqrt(c2)};
  kernels::kernels().adam(step, params.data(), grads.data(), m_.data() + offset, v_.data() + offset,
                          static_cast<int64_t>(params.size()));
}

Adagrad::Adagrad(int64_t size, const AdagradOptions& options)
    : Optimizer(options.learning_rate),
      opt_(options),
      accumulator_(size, options.initial_accumulator_value) {}

void Adagrad::apply(std::span<float> params, std::span<const float> grads, int64_t offset) {
  check_range("adagrad", size(), offset, params.size(), grads.size());
  kernels::kernels().adagrad({.learning_rate = learning_rate_, .epsilon = opt_.epsilon},
                             params.data(), grads.data(), accumulator_.data() + offset,
                             static_cast<int64_t>(params.size()));
}

Ftrl::Ftrl(int64_t size, const FtrlOptions& options)
    : Optimizer(options.learning_rate),
      opt_(options),
      accumulator_(size, options.initial_accumulator_value),
      linear_(size, 0.0f) {}

void Ftrl::apply(std::span<float> params, std::span<const float> grads, int64_t offset) {
  check_range("ftrl", size(), offset, params.size(), grads.size());
  kernels::kernels().ftrl({.learning_rate = learning_rate_,
                           .learning_rate_power = opt_.learning_rate_power,
                           .l1 = opt_.l1,
                           .l2 = opt_.l2},
                          params.data(), grads.data(), accumulator_.data() + offset,
                          linear_.data() + offset, static_cast<int64_t>(params.size()));
}

PerLayerOptimizer::PerLayerOptimizer(std::vector<Part> parts)
    : Optimizer(parts.empty() ? 0.0f : parts.front().optimizer->learning_rate()),
      parts_(std::move(parts)) {
  if (parts_.empty()) throw Error("a per-layer optimizer needs a part");
  for (const Part& part : parts_) {
    if (part.optimizer->size() != parts_.front().optimizer->size())
      throw Error("a per-layer optimizer's parts must span the same values");
  }
}

std::string PerLayerOptimizer::name() const {
  std::string out;
  for (const Part& part : parts_) out += (out.empty() ? "" : "+") + part.optimizer->name();
  return out;
}

int64_t PerLayerOptimizer::size() const {
  return parts_.front().optimizer->size();
}

// Each part updates where its ranges meet [offset, offset + n).
void PerLayerOptimizer::apply(std::span<float> params, std::span<const float> grads,
                              int64_t offset) {
  check_range(name().c_str(), size(), offset, params.size(), grads.size());
  const int64_t end = offset + static_cast<int64_t>(params.size());
  for (Part& part : parts_) {
    for (const auto& [first, count] : part.ranges) {
      const int64_t from = std::max(first, offset), to = std::min(first + count, end);
      if (from >= to) continue;
      part.optimizer->apply(params.subspan(from - offset, to - from),
                            grads.subspan(from - offset, to - from), from);
    }
  }
}

std::vector<std::span<float>> PerLayerOptimizer::state() {
  std::vector<std::span<float>> out;
  for (Part& part : parts_) {
    for (std::span<float> slot : part.optimizer->state()) out.push_back(slot);
  }
  return out;
}

std::vector<std::string> PerLayerOptimizer::state_names() const {
  std::vector<std::string> out;
  for (const Part& part : parts_) {
    for (const std::string& slot : part.optimizer->state_names())
      out.push_back(part.optimizer->name() + "/" + slot);
  }
  return out;
}

void PerLayerOptimizer::set_steps(int64_t steps) {
  Optimizer::set_steps(steps);
  for (Part& part : parts_) part.optimizer->set_steps(steps);
}

}  // namespace distlab::nn
