// The NN core's hot loops, compiled once per x86-64 ISA level and chosen
// once per process for the CPU at hand, so that one portable binary runs
// AVX-512 code on an AVX-512 machine and still starts on any x86-64.
//
// Why one build per level and not GCC's target_clones: Eigen picks its
// packet width from preprocessor macros (__AVX2__, __FMA__, __AVX512F__)
// at compile time, and a function cloned for another target keeps the
// macros of the translation unit, hence Eigen's SSE2 paths. So the kernel
// sources are compiled once per level with that level's -march, each into
// its own namespace, and every symbol but that namespace's is made local to
// the level's object (cmake/IsaKernels.cmake): Eigen's inline templates,
// instantiated in every level, can then never be merged across levels by
// the linker, which would run AVX-512 code on a CPU without it.
//
// The table is chosen the first time kernels() is called and never changes,
// so every thread and every process of a binary on one machine runs the
// same code and computes the same bits. DISTLAB_ISA=<level> in the
// environment picks a lower level (for comparisons; a level this CPU cannot
// run is refused).
//
// Kernels take views the caller has sized, and never allocate or free
// memory the caller owns: the levels agree on Eigen's memory layout
// (EIGEN_MAX_ALIGN_BYTES is set for the whole project), but nothing else
// should have to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nn/activation.h"
#include "nn/tensor.h"

namespace distlab::nn {

enum class Transpose { kNo, kYes };

namespace kernels {

// A view with a row stride: a block of rows or columns of a row-major matrix.
using Block = Eigen::Map<Matrix, 0, Eigen::OuterStride<>>;
using ConstBlock = Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>;

// A whole matrix as a kernel's output or input.
inline Block out(MatrixMap m) {
  return {m.data(), m.rows(), m.cols(), Eigen::OuterStride<>(m.cols())};
}
inline Block out(Matrix& m) {
  return out(as_map(m));
}
inline ConstBlock in(ConstMatrixMap m) {
  return {m.data(), m.rows(), m.cols(), Eigen::OuterStride<>(m.cols())};
}
inline ConstBlock in(const MatrixMap& m) {
  return in(as_const(m));
}
inline ConstBlock in(const Matrix& m) {
  return in(as_map(m));
}

// Rows or columns [first, first + count) of a block, as a block.
template <typename View>
View middle_rows(View m, Eigen::Index first, Eigen::Index count) {
  return View(m.data() + first * m.outerStride(), count, m.cols(),
              Eigen::OuterStride<>(m.outerStride()));
}
template <typename View>
View middle_cols(View m, Eigen::Index first, Eigen::Index count) {
  return View(m.data() + first, m.rows(), count, Eigen::OuterStride<>(m.outerStride()));
}

// The geometry of a 2-D max pooling over NHWC rows (TensorFlow's padding:
// positions outside the image are skipped, never taken as a maximum).
struct PoolGeometry {
  int in_h = 0, in_w = 0, channels = 0;
  int out_h = 0, out_w = 0;
  int pool_h = 0, pool_w = 0;
  int stride_h = 0, stride_w = 0;
  int pad_top = 0, pad_left = 0;
};

struct SgdStep {
  float learning_rate = 0;
  float momentum = 0;
  bool nesterov = false;
};

// Optimizer steps over more values than this run as a parallel region;
// below it, a parallel loop costs more than it saves.
inline constexpr int64_t kOptimizerParallelValues = int64_t{1} << 15;

// Adam's step with the bias corrections folded into two scalars.
struct AdamStep {
  float beta1 = 0, beta2 = 0, epsilon = 0;
  float step_size = 0;    // learning rate / (1 - beta1^t)
  float inv_sqrt_c2 = 0;  // 1 / sqrt(1 - beta2^t)
};

// Adagrad's step (TensorFlow's ApplyAdagradV2).
struct AdagradStep {
  float learning_rate = 0, epsilon = 0;
};

// FTRL-proximal's step (TensorFlow's ApplyFtrl, McMahan et al. 2013).
struct FtrlStep {
  float learning_rate = 0;
  float learning_rate_power = 0;  // <= 0; -0.5 takes square roots
  float l1 = 0, l2 = 0;
};

// Batch normalisation works through its channels in blocks of at most
// this many (a block's slice of a row is one 64-byte cache line).
inline constexpr Eigen::Index kNormBlockChannels = 16;

struct Kernels {
  const char* level;  // "x86-64-v4", "x86-64-v3", "x86-64", or the build's -march

  // c = op(a) * op(b), or c += op(a) * op(b) when `accumulate`, on the
  // calling thread (nn/parallel_product.h shares a product among threads).
  // Blocked for a 32 KiB L1 whatever the CPU's, so that a level's products
  // have the same bits on every CPU.
  void (*product)(Block c, ConstBlock a, Transpose ta, ConstBlock b, Transpose tb, bool accumulate);

  // z = act(z + bias) in place; bias (z.cols() values) may be null.
  void (*bias_activation)(Activation a, MatrixMap z, const float* bias);
  // dz = dy * act'(y), given the activation's output y.
  void (*activation_gradient)(Activation a, ConstMatrixMap y, ConstMatrixMap dy, MatrixMap dz);
  // sums[j] += the sum of column j of m, row after row.
  void (*add_column_sums)(ConstMatrixMap m, float* sums);

  // One example's max pooling: out and argmax (offsets into image) hold
  // out_h * out_w * channels values.
  void (*max_pool)(const PoolGeometry& g, const float* image, float* out, int32_t* argmax);

  // One optimizer step over n values (in parallel above a size where it
  // pays; each value on its own, so threads never change the result).
  void (*sgd)(const SgdStep& s, float* w, const float* g, float* velocity, int64_t n);
  void (*adam)(const AdamStep& s, float* w, const float* g, float* m, float* v, int64_t n);
  void (*adagrad)(const AdagradStep& s, float* w, const float* g, float* accumulator, int64_t n);
  void (*ftrl)(const FtrlStep& s, float* w, const float* g, float* accumulator, float* linear,
               int64_t n);

  // Batch normalisation of a tile: `x`, `dy` and the rest are a block of
  // rows and of at most kNormBlockChannels columns of (rows, channels)
  // values, and each array holds a value per channel of the tile.
  // sums[2c] and sums[2c + 1]: the sums of x and of x^2 down column c, in
  // double (set, not added).
  void (*batch_norm_sums)(ConstBlock x, double* sums);
  // x_hat = (x - mean) * inv_std and y = x_hat * gamma + beta.
  void (*batch_norm_normalize)(ConstBlock x, const float* mean, const float* inv_std,
                               const float* gamma, const float* beta, Block x_hat, Block y);
  // sums[2c] and sums[2c + 1]: the sums of dy and of dy * x_hat down
  // column c, in double (set, not added).
  void (*batch_norm_gradient_sums)(ConstBlock dy, ConstBlock x_hat, double* sums);
  // dx = (dy - mean_dy - x_hat * mean_dy_x_hat) * scale.
  void (*batch_norm_input_gradient)(ConstBlock dy, ConstBlock x_hat, const float* mean_dy,
                                    const float* mean_dy_x_hat, const float* scale, Block dx);

  // sum[i] += values[i]: the reductions of the strategies.
  void (*add)(float* sum, const float* values, int64_t n);
  // The half-precision wire formats of gradients, two bytes a value in the
  // CPU's byte order, rounded to nearest even (kernels/half_precision.cc):
  // out gets round(values[i] * scale) as IEEE binary16, and back, each value
  // times `scale` (a power of two, which keeps the scaling exact).
  void (*to_float16)(const float* values, float scale, std::byte* out, int64_t n);
  void (*from_float16)(const std::byte* in, float scale, float* out, int64_t n);
  // The same as bfloat16 (float32's range: no scale needed).
  void (*to_bfloat16)(const float* values, std::byte* out, int64_t n);
  void (*from_bfloat16)(const std::byte* in, float* out, int64_t n);
  // The largest |values[i]|; NaNs are passed over (0 for n == 0).
  float (*max_magnitude)(const float* values, int64_t n);
};

// The table for this process: choose_kernels(getenv("DISTLAB_ISA")), once.
const Kernels& kernels();

// The level named `wanted`, or the best this CPU runs when it is null or
// empty. Throws distlab::InputError for a level not built or one this CPU
// cannot run.
const Kernels& choose_kernels(const char* wanted);

// Every level built into this binary that this CPU can run, best first
// (tests and benchmarks compare them).
std::vector<const Kernels*> runnable_levels();

// Every level built into this binary, best first, runnable here or not.
std::vector<std::string> built_levels();

// How this binary was built: "portable" (every level above, chosen at
// start) or the -march the whole build used.
std::string build_arch();

// A paragraph for the commands' --help: the levels built and DISTLAB_ISA.
std::string isa_help();

// The highest x86-64 micro-architecture level this CPU supports
// ("x86-64-v4", "x86-64-v3", "x86-64-v2" or "x86-64"), whatever was built.
std::string cpu_level();

}  // namespace kernels
}  // namespace distlab::nn
