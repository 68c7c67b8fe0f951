// Included by every per-level kernel source: the namespace that level's
// code lives in. cmake/IsaKernels.cmake compiles those sources once per
// ISA level with DISTLAB_KERNEL_NAMESPACE (x86_64_v4, ...) and
// DISTLAB_KERNEL_LEVEL ("x86-64-v4", ...) defined.
#pragma once

#if !defined(DISTLAB_KERNEL_NAMESPACE) || !defined(DISTLAB_KERNEL_LEVEL)
#error "kernel sources are compiled once per ISA level by cmake/IsaKernels.cmake"
#endif

#include "nn/kernels/kernels.h"

#define DISTLAB_KERNELS distlab::nn::kernels::DISTLAB_KERNEL_NAMESPACE

namespace DISTLAB_KERNELS {

// Each level's sources define these; table.cc gathers them.
void product(Block c, ConstBlock a, Transpose ta, ConstBlock b, Transpose tb, bool accumulate);
void bias_activation(Activation a, MatrixMap z, const float* bias);
void activation_gradient(Activation a, ConstMatrixMap y, ConstMatrixMap dy, MatrixMap dz);
void add_column_sums(ConstMatrixMap m, float* sums);
void max_pool(const PoolGeometry& g, const float* image, float* out, int32_t* argmax);
void sgd(const SgdStep& s, float* w, const float* g, float* velocity, int64_t n);
void adam(const AdamStep& s, float* w, const float* g, float* m, float* v, int64_t n);
void adagrad(const AdagradStep& s, float* w, const float* g, float* accumulator, int64_t n);
void ftrl(const FtrlStep& s, float* w, const float* g, float* accumulator, float* linear,
          int64_t n);
void batch_norm_sums(ConstBlock x, double* sums);
void batch_norm_normalize(ConstBlock x, const float* mean, const float* inv_std, const float* gamma,
                          const float* beta, Block x_hat, Block y);
void batch_norm_gradient_sums(ConstBlock dy, ConstBlock x_hat, double* sums);
void batch_norm_input_gradient(ConstBlock dy, ConstBlock x_hat, const float* mean_dy,
                               const float* mean_dy_x_hat, const float* scale, Block dx);
void add(float* sum, const float* values, int64_t n);
void to_float16(const float* values, float scale, std::byte* out, int64_t n);
void from_float16(const std::byte* in, float scale, float* out, int64_t n);
void to_bfloat16(const float* values, std::byte* out, int64_t n);
void from_bfloat16(const std::byte* in, float* out, int64_t n);
float max_magnitude(const float* values, int64_t n);

// The level's table, the one symbol dispatch.cc looks up.
const Kernels& table();

}  // namespace DISTLAB_KERNELS
