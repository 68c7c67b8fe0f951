#include "nn/loss.h"

#include <cmath>
#include <string>

#include "common/error.h"

namespace distlab::nn {
namespace {

void check_label(int32_t label, Eigen::Index classes, Eigen::Index example) {
  if (label < 0 || label >= classes) {
    throw InputError("label " + std::to_string(label) + " of example " + std::to_string(example) +
                     " is outside the model's " + std::to_string(classes) + " classes");
  }
}

// Loss of one row, and optionally its gradient row (softmax - onehot) * scale.
double row_loss(const Matrix& logits, Eigen::Index n, int32_t label, float* grad, float scale,
                int64_t& correct) {
  const auto row = logits.row(n);
  Eigen::Index arg_max = 0;
  const float max = row.maxCoeff(&arg_max);
  double sum = 0;
  for (Eigen::Index c = 0; c < row.size(); ++c) sum += std::exp(double{row(c)} - max);
  const double log_sum = std::log(sum);
  correct += arg_max == label;
  if (grad) {
    for (Eigen::Index c = 0; c < row.size(); ++c) {
      const double p = std::exp(double{row(c)} - max - log_sum);
      grad[c] = static_cast<float>((p - (c == label ? 1.0 : 0.0)) * scale);
    }
  }
  return log_sum - (double{row(label)} - max);
}

LossResult compute(const Matrix& logits, std::span<const int32_t> labels, Matrix* dlogits,
                   int64_t divisor) {
  const auto n = logits.rows();
  if (static_cast<std::size_t>(n) != labels.size()) {
    throw Error("the loss got " + std::to_string(n) + " predictions and " +
                std::to_string(labels.size()) + " labels");
  }
  if (dlogits) dlogits->resize(n, logits.cols());
  if (divisor <= 0) divisor = n;
  const float scale = divisor > 0 ? 1.0f / static_cast<float>(divisor) : 0.0f;
  LossResult result;
  double total = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    check_label(labels[i], logits.cols(), i);
    total += row_loss(logits, i, labels[i], dlogits ? dlogits->row(i).data() : nullptr, scale,
                      result.correct);
  }
  result.loss = divisor > 0 ? total / static_cast<double>(divisor) : 0.0;
  return result;
}

}  // namespace

LossResult softmax_cross_entropy(const Matrix& logits, std::span<const int32_t> labels,
                                 Matrix& dlogits, int64_t divisor) {
  return compute(logits, labels, &dlogits, divisor);
}

LossResult softmax_cross_entropy(const Matrix& logits, std::span<const int32_t> labels) {
  return compute(logits, labels, nullptr, 0);
}

}  // namespace distlab::nn
