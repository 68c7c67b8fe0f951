// libFuzzer target: arbitrary bytes as a frame. The header must decode or be
// refused with a FrameError; a header that decodes must encode back to the
// same 56 bytes; a message frame, with the rest of the input as its payload,
// must become a Message or be refused with a FrameError, and a Message that
// comes out must frame back to the same header and payload; an offer's, an
// answer's or a released frame's body must read back to the same bytes or be refused. Anything else
// (another exception, a sanitizer report, a trap) is a finding.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "net/wire/frame.h"
#include "strategy/task.h"

using namespace distlab::net;
namespace strategy = distlab::strategy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto bytes = std::as_bytes(std::span(data, size));
  FrameHeader header;
  try {
    header = decode_header(bytes);
  } catch (const FrameError&) {
    return 0;
  }
  const auto again = encode_header(header);
  if (!std::equal(again.begin(), again.end(), bytes.begin())) __builtin_trap();

  const auto rest = bytes.subspan(kHeaderBytes);
  const auto payload =
      rest.first(static_cast<std::size_t>(std::min<uint64_t>(rest.size(), header.length)));
  if (header.type == FrameType::kGoodbye) {
    const std::string reason = goodbye_reason(payload);
    if (reason.size() != payload.size()) __builtin_trap();
    return 0;
  }
  const auto same = [&](const Frame& frame) {
    return std::equal(frame.payload.begin(), frame.payload.end(), payload.begin(), payload.end());
  };
  try {
    if (header.type == FrameType::kOffer && !same(offer_frame(0, read_offer(payload)))) {
      __builtin_trap();
    }
    if (header.type == FrameType::kAnswer && !same(answer_frame(0, read_answer(payload)))) {
      __builtin_trap();
    }
    if (header.type == FrameType::kReleased && !same(released_frame(0, read_released(payload)))) {
      __builtin_trap();
    }
  } catch (const FrameError&) {
    return 0;
  }
  if (header.type != FrameType::kMessage) return 0;

  const strategy::ClusterSpec cluster{.chiefs = 1, .workers = 2, .ps = 1};
  strategy::Message message;
  try {
    message = message_from_frame(header, payload, cluster);
  } catch (const FrameError&) {
    return 0;
  }
  if (message.bytes != header.length) __builtin_trap();
  const bool no_values = (header.flags & kFlagNoValues) != 0;
  if (no_values != message.values.empty() && header.length != 0) __builtin_trap();
  const MessageFrame frame = frame_message(message, header.sender);
  if (!(frame.header == header)) __builtin_trap();
  if (!no_values &&
      !std::equal(frame.payload.begin(), frame.payload.end(), payload.begin(), payload.end())) {
    __builtin_trap();
  }
  return 0;
}
