// Gradients on the wire in float32, float16 or bfloat16: the bytes each
// takes, the values a receiver reads back, and the per-message scale that
// keeps small float16 gradients.
#include "strategy/gradient_wire.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "common/error.h"
#include "support/error_message.h"

using namespace distlab::strategy;

namespace {

std::vector<float> read_back(const Message& m, GradientType type, std::size_t count) {
  std::vector<float> out(count);
  read_gradient(m, type, FloatRange(out.data(), static_cast<int64_t>(count)), "test");
  return out;
}

}  // namespace

TEST_CASE("half-precision gradients take two bytes a value, in whole words") {
  CHECK(gradient_bytes(5, GradientType::kFloat32) == 20);
  // float16: a word for the scale, then 3 words for 5 halves.
  CHECK(gradient_bytes(5, GradientType::kFloat16) == 16);
  CHECK(gradient_bytes(6, GradientType::kFloat16) == 16);
  CHECK(gradient_bytes(5, GradientType::kBFloat16) == 12);
  CHECK(gradient_bytes(0, GradientType::kFloat16) == 4);
  CHECK(gradient_bytes(0, GradientType::kBFloat16) == 0);
  CHECK(gradient_bytes(1'000'000, GradientType::kBFloat16) == 2'000'000);
}

TEST_CASE("gradient types are named as in scenarios") {
  for (const std::string& name : gradient_type_names()) {
    CHECK(gradient_type_name(gradient_type_named(name)) == name);
  }
  CHECK_THROWS_AS(gradient_type_named("float8"), distlab::Error);
}

TEST_CASE(
    "a float16 message is scaled by the power of two that puts its largest value from 2^14 to "
    "below 2^15") {
  CHECK(float16_scale_exponent(1.0f) == 14);
  CHECK(float16_scale_exponent(0.75f) == 15);
  CHECK(float16_scale_exponent(40000.0f) == -1);
  CHECK(float16_scale_exponent(1e-6f) == 34);
  CHECK(float16_scale_exponent(0.0f) == 0);
  CHECK(float16_scale_exponent(std::numeric_limits<float>::infinity()) == 0);
  CHECK(float16_scale_exponent(1e-44f) == 126);  // kept within float32's normal powers
}

TEST_CASE("a receiver reads back the sender's values rounded to the wire's format") {
  // Tiny gradients, as late in training: most are below float16's smallest
  // normal (6e-5) and would vanish without the message's scale.
  std::vector<float> tiny;
  for (int i = 0; i < 101; ++i) tiny.push_back(1e-9f * static_cast<float>(i - 50));
  const FloatRange values(tiny.data(), static_cast<int64_t>(tiny.size()));

  const Message m16 = gradient_message(Tag::kRing, 3, values, GradientType::kFloat16);
  CHECK(m16.step == 3);
  CHECK(m16.bytes == gradient_bytes(101, GradientType::kFloat16));
  CHECK(m16.values.size() * 4 == m16.bytes);
  const std::vector<float> back16 = read_back(m16, GradientType::kFloat16, tiny.size());
  const Message m_bf16 = gradient_message(Tag::kRing, 3, values, GradientType::kBFloat16);
  const std::vector<float> back_bf16 = read_back(m_bf16, GradientType::kBFloat16, tiny.size());
  for (std::size_t i = 0; i < tiny.size(); ++i) {
    INFO(i << ": " << tiny[i]);
    CHECK(std::abs(back16[i] - tiny[i]) <= std::abs(tiny[i]) * 0x1p-11f);
    CHECK(std::abs(back_bf16[i] - tiny[i]) <= std::abs(tiny[i]) * 0x1p-8f);
  }
  // Not the same as float32: the rounding is real.
  CHECK(back16 != tiny);

  // Rounded values travel again unchanged: a ring passes sums on.
  const FloatRange rounded(const_cast<float*>(back16.data()), 101);
  CHECK(read_back(gradient_message(Tag::kRing, 3, rounded, GradientType::kFloat16),
                  GradientType::kFloat16, 101) == back16);

  // float32 is sent as it is.
  const Message m32 = gradient_message(Tag::kRing, 3, values, GradientType::kFloat32);
  CHECK(m32.bytes == 404);
  CHECK(read_back(m32, GradientType::kFloat32, tiny.size()) == tiny);
}

TEST_CASE("a sized message of timing fidelity has the bytes of a full one and no values") {
  std::vector<float> values(7, 0.5f);
  for (GradientType type :
       {GradientType::kFloat32, GradientType::kFloat16, GradientType::kBFloat16}) {
    const Message full = gradient_message(Tag::kToParameterServer, 0, FloatRange(values), type);
    const Message sized = gradient_message(Tag::kToParameterServer, 0, FloatRange::sized(7), type);
    CHECK(sized.bytes == full.bytes);
    CHECK(sized.values.empty());
    // Reading a sized message into a sized range checks its size only.
    CHECK_NOTHROW(read_gradient(sized, type, FloatRange::sized(7), "test"));
  }
}

TEST_CASE("a gradient message of another size or format is refused, naming both") {
  std::vector<float> values(8, 1.0f);
  Message m = gradient_message(Tag::kRing, 0, FloatRange(values), GradientType::kFloat16);
  m.from = {Role::kWorker, 2};
  std::vector<float> out(8);
  const std::string text = distlab::testing::message_of<distlab::Error>(
      [&] { read_gradient(m, GradientType::kFloat32, FloatRange(out), "ring all-reduce"); });
  CHECK_THAT(text, Catch::Contains("ring all-reduce: worker:2 sent 20 bytes where 8 float32 "
                                   "values take 32"));
  // A float16 message whose scale is out of range is not read.
  float bad = 0;
  const int32_t exponent = 400;
  std::memcpy(&bad, &exponent, sizeof bad);
  m.values[0] = bad;
  CHECK_THROWS_WITH(read_gradient(m, GradientType::kFloat16, FloatRange(out), "a push"),
                    Catch::Contains("2^400"));
}
