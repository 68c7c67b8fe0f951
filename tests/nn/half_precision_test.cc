// The half-precision conversions of gradients for the wire: IEEE binary16
// and bfloat16 bits, rounded to nearest even, and the same bits at every
// ISA level this CPU runs.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "nn/kernels/kernels.h"
#include "nn/random.h"

using namespace distlab::nn;
using kernels::Kernels;

namespace {

std::vector<uint16_t> float16_bits(const Kernels& k, const std::vector<float>& values,
                                   float scale = 1) {
  std::vector<uint16_t> bits(values.size());
  k.to_float16(values.data(), scale, reinterpret_cast<std::byte*>(bits.data()),
               static_cast<int64_t>(values.size()));
  return bits;
}

std::vector<uint16_t> bfloat16_bits(const Kernels& k, const std::vector<float>& values) {
  std::vector<uint16_t> bits(values.size());
  k.to_bfloat16(values.data(), reinterpret_cast<std::byte*>(bits.data()),
                static_cast<int64_t>(values.size()));
  return bits;
}

float from_float16(const Kernels& k, uint16_t bits, float scale = 1) {
  float value = 0;
  k.from_float16(reinterpret_cast<const std::byte*>(&bits), scale, &value, 1);
  return value;
}

// Gradients of many magnitudes, and some halfway cases, over several of
// the kernels' 1,024-value blocks.
std::vector<float> assorted_values() {
  Rng rng(11);
  std::vector<float> values;
  for (int i = 0; i < 2500; ++i) {
    values.push_back(rng.normal() * std::ldexp(1.0f, static_cast<int>(i % 40) - 30));
  }
  for (int i = 0; i < 64; ++i) values.push_back(1.0f + static_cast<float>(i) * 0x1p-11f);
  return values;
}

}  // namespace

TEST_CASE("float16 bits are IEEE binary16 rounded to nearest, ties to even", "[kernels]") {
  const float inf = std::numeric_limits<float>::infinity();
  for (const Kernels* k : kernels::runnable_levels()) {
    INFO("level " << k->level);
    const std::vector<float> values = {1.0f,
                                       -2.0f,
                                       65504.0f,         // the largest float16
                                       65519.0f,         // rounds down to it
                                       65520.0f,         // halfway to 2^16: overflows
                                       1.0f + 0x1p-11f,  // halfway: to the even 1.0
                                       1.0f + 0x3p-11f,  // halfway: to the even 1 + 2^-9
                                       0x1p-24f,         // the smallest subnormal
                                       0x1p-25f,         // halfway to it: to the even 0
                                       0x3p-26f,         // nearer the smallest subnormal
                                       0x1p-14f,         // the smallest normal
                                       inf,
                                       0.0f};
    const std::vector<uint16_t> expected = {0x3C00, 0xC000, 0x7BFF, 0x7BFF, 0x7C00, 0x3C00, 0x3C02,
                                            0x0001, 0x0000, 0x0001, 0x0400, 0x7C00, 0x0000};
    CHECK(float16_bits(*k, values) == expected);
    // Scaled by a power of two first: 2^-20 * 2^10 is 2^-10.
    CHECK(float16_bits(*k, {0x1p-20f}, 0x1p10f) == std::vector<uint16_t>{0x1400});
    CHECK(from_float16(*k, 0x3C02) == 1.0f + 0x1p-9f);
    CHECK(from_float16(*k, 0x0001) == 0x1p-24f);
    CHECK(from_float16(*k, 0x7C00) == inf);
    CHECK(from_float16(*k, 0x1400, 0x1p-10f) == 0x1p-20f);
  }
}

TEST_CASE("bfloat16 bits are float32's upper half rounded to nearest, ties to even", "[kernels]") {
  for (const Kernels* k : kernels::runnable_levels()) {
    INFO("level " << k->level);
    const std::vector<float> values = {1.0f,
                                       -2.0f,
                                       1.0f + 0x1p-8f,  // halfway: to the even 1.0
                                       1.0f + 0x3p-8f,  // halfway: to the even 1 + 2^-6
                                       1.0f + 0x1p-7f,  // exact
                                       std::numeric_limits<float>::max()};  // rounds up to inf
    const std::vector<uint16_t> expected = {0x3F80, 0xC000, 0x3F80, 0x3F82, 0x3F81, 0x7F80};
    CHECK(bfloat16_bits(*k, values) == expected);
    float back = 0;
    const uint16_t bits = 0x3F82;
    k->from_bfloat16(reinterpret_cast<const std::byte*>(&bits), &back, 1);
    CHECK(back == 1.0f + 0x1p-6f);
  }
}

TEST_CASE("every level converts to and from half precision with the same bits", "[kernels]") {
  const std::vector<float> values = assorted_values();
  const auto n = static_cast<int64_t>(values.size());
  const Kernels& base = *kernels::runnable_levels().back();
  const std::vector<uint16_t> base16 = float16_bits(base, values, 0x1p2f);
  const std::vector<uint16_t> base_bf16 = bfloat16_bits(base, values);
  for (const Kernels* k : kernels::runnable_levels()) {
    INFO("level " << k->level);
    const std::vector<uint16_t> bits16 = float16_bits(*k, values, 0x1p2f);
    CHECK(bits16 == base16);
    CHECK(bfloat16_bits(*k, values) == base_bf16);
    CHECK(k->max_magnitude(values.data(), n) == base.max_magnitude(values.data(), n));

    // Back to float32 and to half precision again: nothing moves.
    std::vector<float> back(values.size());
    k->from_float16(reinterpret_cast<const std::byte*>(bits16.data()), 0x1p-2f, back.data(), n);
    CHECK(float16_bits(*k, back, 0x1p2f) == bits16);
    for (std::size_t i = 0; i < values.size(); ++i) {
      // Within half a unit in float16's last place where the scaled value is
      // a normal float16 (2^-14 and up); within its subnormal spacing below.
      const float scaled = std::abs(values[i]) * 0x1p2f;
      const float tolerance = scaled >= 0x1p-14f ? scaled * 0x1p-11f : 0x1p-25f;
      CHECK(std::abs(back[i] - values[i]) * 0x1p2f <= tolerance);
    }
  }
}

TEST_CASE("the largest magnitude passes NaNs over", "[kernels]") {
  const std::vector<float> values = {1.0f, -7.5f, std::numeric_limits<float>::quiet_NaN(), 3.0f};
  for (const Kernels* k : kernels::runnable_levels()) {
    INFO("level " << k->level);
    CHECK(k->max_magnitude(values.data(), 4) == 7.5f);
    CHECK(k->max_magnitude(values.data(), 0) == 0.0f);
  }
}
