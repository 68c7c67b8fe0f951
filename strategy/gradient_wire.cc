#include "strategy/gradient_wire.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/error.h"
#include "nn/kernels/kernels.h"

namespace distlab::strategy {
namespace {

constexpr uint64_t kWordBytes = sizeof(float);
constexpr uint64_t kHalfBytes = 2;

// float16 messages start with one word: the scale's exponent.
uint64_t header_words(GradientType type) {
  return type == GradientType::kFloat16 ? 1 : 0;
}

// Where the halves begin in a message's payload words.
std::byte* halves_of(std::vector<float>& words, GradientType type) {
  return reinterpret_cast<std::byte*>(words.data() + header_words(type));
}
const std::byte* halves_of(const std::vector<float>& words, GradientType type) {
  return reinterpret_cast<const std::byte*>(words.data() + header_words(type));
}

Work conversion_work(std::string label, int64_t count, double bytes_per_value) {
  Work work{.label = std::move(label), .phase = Phase::kPacking};
  if (count > 0) {
    work.items.push_back(
        {0, static_cast<double>(count) * bytes_per_value, 1, OpKind::kElementwise, 1});
  }
  return work;
}

}  // namespace

const char* gradient_type_name(GradientType type) {
  switch (type) {
    case GradientType::kFloat32:
      return "float32";
    case GradientType::kFloat16:
      return "float16";
    case GradientType::kBFloat16:
      return "bfloat16";
  }
  return "?";
}

std::vector<std::string> gradient_type_names() {
  return {"float32", "float16", "bfloat16"};
}

GradientType gradient_type_named(const std::string& name) {
  for (GradientType type :
       {GradientType::kFloat32, GradientType::kFloat16, GradientType::kBFloat16}) {
    if (name == gradient_type_name(type)) return type;
  }
  throw Error("unknown gradient type '" + name + "' (float32, float16 or bfloat16)");
}

uint64_t gradient_bytes(int64_t count, GradientType type) {
  const auto n = static_cast<uint64_t>(count);
  if (type == GradientType::kFloat32) return n * kWordBytes;
  const uint64_t words = header_words(type) + (n * kHalfBytes + kWordBytes - 1) / kWordBytes;
  return words * kWordBytes;
}

int float16_scale_exponent(float largest_magnitude) {
  if (!(largest_magnitude > 0) || !std::isfinite(largest_magnitude)) return 0;
  int k = 0;
  std::frexp(largest_magnitude, &k);  // largest in [2^(k-1), 2^k)
  // Kept within float32's normal powers of two, so that 2^e and 2^-e are
  // both exact floats (a largest magnitude below 2^-111 is not lifted all
  // the way: such a gradient is zero in every sense that matters).
  return std::clamp(15 - k, -126, 126);
}

Message gradient_message(Tag tag, int64_t step, FloatRange values, GradientType type) {
  if (type == GradientType::kFloat32) return make_message(tag, step, values.size(), values.data());
  Message message;
  message.tag = tag;
  message.step = step;
  message.bytes = gradient_bytes(values.size(), type);
  if (!values.has_values()) return message;
  message.values.assign(message.bytes / kWordBytes, 0.0f);  // the padding half is zero
  const auto& k = nn::kernels::kernels();
  if (type == GradientType::kFloat16) {
    const int32_t exponent = float16_scale_exponent(k.max_magnitude(values.data(), values.size()));
    std::memcpy(message.values.data(), &exponent, sizeof exponent);
    k.to_float16(values.data(), std::ldexp(1.0f, exponent), halves_of(message.values, type),
                 values.size());
  } else {
    k.to_bfloat16(values.data(), halves_of(message.values, type), values.size());
  }
  return message;
}

void read_gradient(const Message& message, GradientType type, FloatRange out,
                   const std::string& what) {
  const uint64_t expected = gradient_bytes(out.size(), type);
  if (message.bytes != expected) {
    throw Error(what + ": " + task_name(message.from) + " sent " + std::to_string(message.bytes) +
                " bytes where " + std::to_string(out.size()) + " " + gradient_type_name(type) +
                " values take " + std::to_string(expected));
  }
  if (!out.has_values()) return;
  if (message.values.size() * kWordBytes != expected) {
    throw Error(what + ": " + task_name(message.from) + " sent a " + std::to_string(message.bytes) +
                "-byte message without its values");
  }
  const auto& k = nn::kernels::kernels();
  switch (type) {
    case GradientType::kFloat32:
      std::copy(message.values.begin(), message.values.end(), out.data());
      break;
    case GradientType::kFloat16: {
      int32_t exponent = 0;
      std::memcpy(&exponent, message.values.data(), sizeof exponent);
      if (exponent < -126 || exponent > 126) {
        throw Error(what + ": " + task_name(message.from) + " sent float16 values scaled by 2^" +
                    std::to_string(exponent) + ", outside [2^-126, 2^126]");
      }
      k.from_float16(halves_of(message.values, type), std::ldexp(1.0f, -exponent), out.data(),
                     out.size());
      break;
    }
    case GradientType::kBFloat16:
      k.from_bfloat16(halves_of(message.values, type), out.data(), out.size());
      break;
  }
}

Work encode_work(int64_t count, GradientType type) {
  switch (type) {
    case GradientType::kFloat32:
      return {.label = "send float32", .phase = Phase::kPacking};
    case GradientType::kFloat16:  // a pass for the largest magnitude, then the conversion
      return conversion_work("to float16", count, 2 * kWordBytes + kHalfBytes);
    case GradientType::kBFloat16:
      return conversion_work("to bfloat16", count, kWordBytes + kHalfBytes);
  }
  return {};
}

Work decode_work(int64_t count, GradientType type) {
  if (type == GradientType::kFloat32) return {.label = "receive float32", .phase = Phase::kPacking};
  return conversion_work(std::string("from ") + gradient_type_name(type), count,
                         kHalfBytes + kWordBytes);
}

}  // namespace distlab::strategy
