// Softmax cross-entropy with integer labels, computed from logits in one
// numerically stable pass: log-softmax subtracts each row's maximum first.
#pragma once

#include <cstdint>
#include <span>

#include "nn/tensor.h"

namespace distlab::nn {

struct LossResult {
  double loss = 0;      // sum over the batch / divisor: the mean by default
  int64_t correct = 0;  // examples whose arg-max logit is the label
};

// The loss summed over the batch and divided by `divisor` (the batch's size
// when 0), and dL/dlogits = (softmax - onehot) / divisor in dlogits. Labels
// must lie in [0, logits.cols()); anything else is an InputError naming the
// example.
LossResult softmax_cross_entropy(const Matrix& logits, std::span<const int32_t> labels,
                                 Matrix& dlogits, int64_t divisor = 0);

// The mean loss and the count without the gradient (evaluation).
LossResult softmax_cross_entropy(const Matrix& logits, std::span<const int32_t> labels);

}  // namespace distlab::nn
