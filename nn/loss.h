// Softmax cross-entropy with integer labels, computed from logits in one
// numerically stable pass: log-softmax subtracts each row's maximum first.
#pragma once

#include <cstdint>
#include <span>

#include "nn/tensor.h"

namespace distlab::nn {

struct LossResult {
  double loss = 0;      // mean over the batch
  int64_t correct = 0;  // examples whose arg-max logit is the label
};

// Writes dL/dlogits = (softmax - onehot) / N into dlogits. Labels must lie in
// [0, logits.cols()); anything else is an Error naming the example.
LossResult softmax_cross_entropy(const Matrix& logits, std::span<const int32_t> labels,
                                 Matrix& dlogits);

// The same loss and count without the gradient (evaluation).
LossResult softmax_cross_entropy(const Matrix& logits, std::span<const int32_t> labels);

}  // namespace distlab::nn
