// This level's table of kernels.
#include "nn/kernels/level.h"

namespace DISTLAB_KERNELS {

const Kernels& table() {
  static constexpr Kernels kTable{
      .level = DISTLAB_KERNEL_LEVEL,
      .product = product,
      .bias_activation = bias_activation,
      .activation_gradient = activation_gradient,
      .add_column_sums = add_column_sums,
      .max_pool = max_pool,
      .sgd = sgd,
      .adam = adam,
      .adagrad = adagrad,
      .ftrl = ftrl,
      .batch_norm_sums = batch_norm_sums,
      .batch_norm_normalize = batch_norm_normalize,
      .batch_norm_gradient_sums = batch_norm_gradient_sums,
      .batch_norm_input_gradient = batch_norm_input_gradient,
      .add = add,
      .to_float16 = to_float16,
      .from_float16 = from_float16,
      .to_bfloat16 = to_bfloat16,
      .from_bfloat16 = from_bfloat16,
      .max_magnitude = max_magnitude,
  };
  return kTable;
}

}  // namespace DISTLAB_KERNELS
