// Half-precision encodings of float32 values, the wire formats of gradients
// (strategy/gradient_wire.h): IEEE 754 binary16 ("float16") and bfloat16
// (float32's sign and exponent with 7 bits of mantissa). Eigen converts,
// rounding to nearest even, with the level's instructions where it has them
// (F16C and AVX-512's vcvtps2ph from x86-64-v3 on, integer packets for
// bfloat16) and in software below them. Each conversion is correctly
// rounded, so every level gives the same bits for every finite value and
// infinity.
//
// The halves are written and read as bytes (two per value, little-endian as
// the CPU stores them), through a small Eigen buffer on the stack: the
// caller's storage is a message payload, not an array of Eigen's types.
#include <algorithm>
#include <cstring>

#include "nn/kernels/level.h"

namespace DISTLAB_KERNELS {
namespace {

// Values converted per pass through the stack buffer: 4 KiB of floats.
constexpr int64_t kBlock = 1024;

template <typename Half>
void encode(const float* values, float scale, std::byte* out, int64_t n) {
  Eigen::Array<Half, kBlock, 1> halves;
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    const int64_t count = std::min(kBlock, n - begin);
    const Eigen::Map<const Eigen::ArrayXf> v(values + begin, count);
    if (scale == 1.0f) {
      halves.head(count) = v.template cast<Half>();
    } else {
      halves.head(count) = (v * scale).template cast<Half>();
    }
    std::memcpy(out + 2 * begin, halves.data(), static_cast<std::size_t>(2 * count));
  }
}

template <typename Half>
void decode(const std::byte* in, float scale, float* out, int64_t n) {
  Eigen::Array<Half, kBlock, 1> halves;
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    const int64_t count = std::min(kBlock, n - begin);
    std::memcpy(halves.data(), in + 2 * begin, static_cast<std::size_t>(2 * count));
    Eigen::Map<Eigen::ArrayXf> v(out + begin, count);
    if (scale == 1.0f) {
      v = halves.head(count).template cast<float>();
    } else {
      v = halves.head(count).template cast<float>() * scale;
    }
  }
}

}  // namespace

static_assert(sizeof(Eigen::half) == 2 && sizeof(Eigen::bfloat16) == 2);

void to_float16(const float* values, float scale, std::byte* out, int64_t n) {
  encode<Eigen::half>(values, scale, out, n);
}

void from_float16(const std::byte* in, float scale, float* out, int64_t n) {
  decode<Eigen::half>(in, scale, out, n);
}

void to_bfloat16(const float* values, std::byte* out, int64_t n) {
  encode<Eigen::bfloat16>(values, 1.0f, out, n);
}

void from_bfloat16(const std::byte* in, float* out, int64_t n) {
  decode<Eigen::bfloat16>(in, 1.0f, out, n);
}

float max_magnitude(const float* values, int64_t n) {
  float largest = 0;
#pragma omp simd reduction(max : largest)
  for (int64_t i = 0; i < n; ++i) largest = std::max(largest, std::abs(values[i]));
  return largest;
}

}  // namespace DISTLAB_KERNELS
