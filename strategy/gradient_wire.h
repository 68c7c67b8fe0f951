// The number format gradients travel in between tasks: float32 as computed,
// or halved to two bytes a value, as frameworks compress gradients for the
// wire (Horovod's fp16 compression, PyTorch DDP's fp16/bf16 hooks).
//
// Only the wire is half precision. The model's own math stays float32:
// a sender rounds its values to the format (nn/kernels: round to nearest
// even), and a receiver turns them back into float32 and adds in float32.
// Rounding happens in the strategy code, which both backends run, so a
// simulated and a real run still end with the same weights bit for bit.
//
// float16 has 5 exponent bits: gradients below 6e-5 lose precision and
// below 6e-8 vanish, and sums can overflow past 65,504. So a float16
// message is scaled by a power of two chosen from its own largest
// magnitude, which puts that magnitude in [2^14, 2^15): a loss scale per
// message, chosen where it is needed and exact to undo, that never
// overflows and never has to skip a step (Keras' LossScaleOptimizer scales
// the loss because its whole backward pass runs in float16; here only the
// wire does). bfloat16 has float32's range and needs no scale.
//
// Layout of a half-precision message's payload, in 4-byte words (the
// transport moves words without computing with them, as it moves text,
// strategy/message.h): float16: the scale's exponent (int32), then the
// halves two to a word, the last word padded with zero; bfloat16: the
// halves only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strategy/config.h"
#include "strategy/float_range.h"
#include "strategy/message.h"
#include "strategy/work.h"

namespace distlab::strategy {

const char* gradient_type_name(GradientType type);  // "float32", "float16", "bfloat16"
std::vector<std::string> gradient_type_names();
GradientType gradient_type_named(const std::string& name);  // throws Error for another name

// Payload bytes of `count` values in `type`.
uint64_t gradient_bytes(int64_t count, GradientType type);

// A message of `values` in `type`: rounded to it in full fidelity, sized
// only when `values` has none (timing fidelity).
Message gradient_message(Tag tag, int64_t step, FloatRange values, GradientType type);

// The float32 values a gradient message of `type` holds, written to `out`
// (out.size() of them; nothing when `out` has no values). Throws Error,
// naming `what`, when the message is not out.size() values of `type`.
void read_gradient(const Message& message, GradientType type, FloatRange out,
                   const std::string& what);

// What rounding `count` values to `type` costs (read 4 bytes, write 2) and
// what reading them back does; empty work for float32, which is sent as is.
Work encode_work(int64_t count, GradientType type);
Work decode_work(int64_t count, GradientType type);

// The exponent e of the power of two that float16 messages are scaled by:
// the largest magnitude times 2^e lies in [2^14, 2^15). 0 for no values,
// zeros or a largest magnitude that is not finite.
int float16_scale_exponent(float largest_magnitude);

}  // namespace distlab::strategy
