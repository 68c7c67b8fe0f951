#include "net/wire/frame.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace distlab::net {

// Payloads are the floats' bytes as they lie in memory: that is the wire's
// little-endian IEEE-754 only on such machines (x86-64 and ARM64 both are).
static_assert(std::endian::native == std::endian::little,
              "realnet sends float payloads without conversion: little-endian hosts only");
static_assert(std::numeric_limits<float>::is_iec559 && sizeof(float) == 4);

namespace {

// Field offsets, as in the table of frame.h.
constexpr std::size_t kMagicAt = 0;
constexpr std::size_t kProtocolAt = 4;
constexpr std::size_t kTypeAt = 6;
constexpr std::size_t kTagAt = 8;
constexpr std::size_t kFlagsAt = 10;
constexpr std::size_t kSenderAt = 12;
constexpr std::size_t kOpAt = 16;
constexpr std::size_t kFromIncarnationAt = 20;
constexpr std::size_t kToIncarnationAt = 22;
constexpr std::size_t kStepAt = 24;
constexpr std::size_t kVersionAt = 32;
constexpr std::size_t kSequenceAt = 40;
constexpr std::size_t kLengthAt = 48;
static_assert(kLengthAt + 8 == kHeaderBytes);

template <typename T>
void put(std::span<std::byte> out, std::size_t at, T value) {
  using U = std::make_unsigned_t<T>;
  const U bits = static_cast<U>(value);
  for (std::size_t i = 0; i < sizeof(U); ++i) {
    out[at + i] = static_cast<std::byte>((bits >> (8 * i)) & 0xff);
  }
}

template <typename T>
T get(std::span<const std::byte> in, std::size_t at) {
  using U = std::make_unsigned_t<T>;
  U bits = 0;
  for (std::size_t i = 0; i < sizeof(U); ++i) {
    bits = static_cast<U>(bits | static_cast<U>(static_cast<U>(in[at + i]) << (8 * i)));
  }
  return static_cast<T>(bits);  // two's complement: well defined since C++20
}

std::string hex(uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string digits;
  do {
    digits.insert(digits.begin(), kDigits[value & 15]);
    value >>= 4;
  } while (value != 0);
  return "0x" + digits;
}

std::string type_label(FrameType type) {
  std::string label = frame_type_name(type);
  label += " frame";
  return label;
}

[[noreturn]] void fail(FrameProblem problem, const std::string& what) {
  throw FrameError(problem, "bad frame: " + what);
}

bool valid_type(uint16_t type) {
  return type >= static_cast<uint16_t>(FrameType::kHello) &&
         type <= static_cast<uint16_t>(FrameType::kLast);
}

bool valid_tag(strategy::Tag tag) {
  const auto raw = static_cast<uint16_t>(tag);
  return raw >= static_cast<uint16_t>(strategy::Tag::kRing) &&
         raw <= static_cast<uint16_t>(strategy::Tag::kLast);
}

uint16_t allowed_flags(FrameType type) {
  switch (type) {
    case FrameType::kHello:
    case FrameType::kWelcome:
      return kFlagAuthenticated;
    case FrameType::kMessage:
      return kFlagNoValues | kFlagInSenderMemory;
    default:
      return 0;
  }
}

void check_length_exactly(const FrameHeader& header, uint64_t expected) {
  if (header.length != expected) {
    fail(FrameProblem::kBadLength,
         type_label(header.type) + " with a " + std::to_string(header.length) +
             "-byte payload (it carries exactly " + std::to_string(expected) + ")");
  }
}

void check_type(FrameType type) {
  const auto raw_type = static_cast<uint16_t>(type);
  if (!valid_type(raw_type)) {
    fail(FrameProblem::kUnknownType, "unknown frame type " + std::to_string(raw_type) +
                                         " (known: 1 to " +
                                         std::to_string(static_cast<int>(FrameType::kLast)) + ")");
  }
}

// The rules of frame.h past the magic and the protocol version, in the order
// of the fields.
void check(const FrameHeader& header, uint64_t max_payload) {
  check_type(header.type);
  const bool message = header.type == FrameType::kMessage;
  if (message) {
    if (!valid_tag(header.tag)) {
      fail(FrameProblem::kUnknownTag,
           "message with unknown tag " + std::to_string(static_cast<uint16_t>(header.tag)) +
               " (known: 1 to " + std::to_string(static_cast<int>(strategy::Tag::kLast)) + ")");
    }
  } else if (header.tag != strategy::Tag{0}) {
    fail(FrameProblem::kFieldsOnControl, type_label(header.type) + " with tag " +
                                             std::to_string(static_cast<uint16_t>(header.tag)) +
                                             " (only messages carry one)");
  }
  if ((header.flags & ~allowed_flags(header.type)) != 0) {
    fail(FrameProblem::kBadFlags, type_label(header.type) + " with flags " + hex(header.flags) +
                                      " (allowed: " + hex(allowed_flags(header.type)) + ")");
  }
  if (!message &&
      (header.op != 0 || header.step != 0 || header.version != 0 || header.sequence != 0 ||
       header.from_incarnation != 0 || header.to_incarnation != 0)) {
    fail(FrameProblem::kFieldsOnControl,
         type_label(header.type) + " with op, step, version, sequence or incarnations set (only " +
             "messages carry them)");
  }
  switch (header.type) {
    case FrameType::kHello:
      check_length_exactly(header, kHelloBytes);
      break;
    case FrameType::kChallenge:
      check_length_exactly(header, kChallengeBytes);
      break;
    case FrameType::kResponse:
      check_length_exactly(header, kResponseBytes);
      break;
    case FrameType::kWelcome:
      if ((header.flags & kFlagAuthenticated) != 0) {
        check_length_exactly(header, kAuthenticatedWelcomeBytes);
      } else if (header.length != 0) {
        fail(FrameProblem::kBadLength, "unauthenticated welcome frame with a " +
                                           std::to_string(header.length) +
                                           "-byte payload (it carries none)");
      }
      break;
    case FrameType::kMessage:
      if (header.length > max_payload) {
        fail(FrameProblem::kTooLong, "message of " + std::to_string(header.length) +
                                         " bytes, above the maximum of " +
                                         std::to_string(max_payload));
      }
      if ((header.flags & kFlagNoValues) != 0 && header.length == 0) {
        fail(FrameProblem::kBadFlags, "message without values (flag " + hex(kFlagNoValues) +
                                          ") and without a size: the flag needs a length");
      }
      if (header.length % sizeof(float) != 0) {
        fail(FrameProblem::kBadLength, "message of " + std::to_string(header.length) +
                                           " bytes, not a whole number of floats (4 bytes each)");
      }
      if ((header.flags & kFlagInSenderMemory) != 0 &&
          ((header.flags & kFlagNoValues) != 0 || header.length == 0)) {
        fail(FrameProblem::kBadFlags, "message in the sender's memory (flag " +
                                          hex(kFlagInSenderMemory) +
                                          ") without values: there is nothing to read");
      }
      break;
    case FrameType::kOffer:
      check_length_exactly(header, kOfferBytes);
      break;
    case FrameType::kAnswer:
      check_length_exactly(header, kAnswerBytes);
      break;
    case FrameType::kReleased:
      check_length_exactly(header, kReleasedBytes);
      break;
    case FrameType::kGoodbye:
      if (header.length > kMaxGoodbyeBytes) {
        fail(FrameProblem::kTooLong, "goodbye frame of " + std::to_string(header.length) +
                                         " bytes, above the maximum of " +
                                         std::to_string(kMaxGoodbyeBytes));
      }
      break;
  }
}

}  // namespace

const char* frame_type_name(FrameType type) {
  switch (type) {
    case FrameType::kHello:
      return "hello";
    case FrameType::kChallenge:
      return "challenge";
    case FrameType::kResponse:
      return "response";
    case FrameType::kWelcome:
      return "welcome";
    case FrameType::kMessage:
      return "message";
    case FrameType::kGoodbye:
      return "goodbye";
    case FrameType::kOffer:
      return "offer";
    case FrameType::kAnswer:
      return "answer";
    case FrameType::kReleased:
      return "released";
  }
  return "?";
}

std::array<std::byte, kHeaderBytes> encode_header(const FrameHeader& header, uint64_t max_payload) {
  check(header, max_payload);
  std::array<std::byte, kHeaderBytes> out{};
  std::copy(kMagic.begin(), kMagic.end(), out.begin() + kMagicAt);
  put(out, kProtocolAt, kProtocolVersion);
  put(out, kTypeAt, static_cast<uint16_t>(header.type));
  put(out, kTagAt, static_cast<uint16_t>(header.tag));
  put(out, kFlagsAt, header.flags);
  put(out, kSenderAt, header.sender);
  put(out, kOpAt, header.op);
  put(out, kFromIncarnationAt, header.from_incarnation);
  put(out, kToIncarnationAt, header.to_incarnation);
  put(out, kStepAt, header.step);
  put(out, kVersionAt, header.version);
  put(out, kSequenceAt, header.sequence);
  put(out, kLengthAt, header.length);
  return out;
}

FrameHeader decode_header(std::span<const std::byte> bytes, uint64_t max_payload) {
  if (bytes.size() < kHeaderBytes) {
    fail(FrameProblem::kTruncated, "header truncated: " + std::to_string(bytes.size()) + " of " +
                                       std::to_string(kHeaderBytes) + " bytes");
  }
  if (!std::equal(kMagic.begin(), kMagic.end(), bytes.begin() + kMagicAt)) {
    fail(FrameProblem::kBadMagic, "magic " + hex(get<uint32_t>(bytes, kMagicAt)) +
                                      " is not \"DLAB\" (0x42414c44): not a distlab peer, or " +
                                      "a stream out of step");
  }
  const auto protocol = get<uint16_t>(bytes, kProtocolAt);
  if (protocol != kProtocolVersion) {
    fail(FrameProblem::kUnsupportedVersion,
         "protocol version " + std::to_string(protocol) + " (this build speaks version " +
             std::to_string(kProtocolVersion) + "; run the same distlab on every task)");
  }
  FrameHeader header;
  header.type = static_cast<FrameType>(get<uint16_t>(bytes, kTypeAt));
  header.tag = static_cast<strategy::Tag>(get<uint16_t>(bytes, kTagAt));
  header.flags = get<uint16_t>(bytes, kFlagsAt);
  header.sender = get<uint32_t>(bytes, kSenderAt);
  header.op = get<int32_t>(bytes, kOpAt);
  header.step = get<int64_t>(bytes, kStepAt);
  header.version = get<int64_t>(bytes, kVersionAt);
  header.sequence = get<uint64_t>(bytes, kSequenceAt);
  header.from_incarnation = get<uint16_t>(bytes, kFromIncarnationAt);
  header.to_incarnation = get<uint16_t>(bytes, kToIncarnationAt);
  header.length = get<uint64_t>(bytes, kLengthAt);
  // The type first: the rest of the rules depend on it.
  check_type(header.type);
  check(header, max_payload);
  return header;
}

std::vector<std::byte> encode_frame(const Frame& frame) {
  if (frame.payload.size() != frame.header.length) {
    fail(FrameProblem::kPayloadMismatch,
         type_label(frame.header.type) + " announcing " + std::to_string(frame.header.length) +
             " payload bytes but holding " + std::to_string(frame.payload.size()));
  }
  const auto header = encode_header(frame.header);
  // Sized, then copied into: GCC 12 misreads insert() after reserve() here
  // as an overflow (-Wstringop-overflow).
  std::vector<std::byte> out(header.size() + frame.payload.size());
  std::copy(header.begin(), header.end(), out.begin());
  std::copy(frame.payload.begin(), frame.payload.end(), out.begin() + header.size());
  return out;
}

Frame goodbye_frame(uint32_t sender, std::string_view reason) {
  Frame frame;
  frame.header.type = FrameType::kGoodbye;
  frame.header.sender = sender;
  const auto text =
      std::as_bytes(std::span(reason.data(), std::min(reason.size(), kMaxGoodbyeBytes)));
  frame.payload.assign(text.begin(), text.end());
  frame.header.length = frame.payload.size();
  return frame;
}

std::string goodbye_reason(std::span<const std::byte> payload) {
  std::string text;
  const auto shown = payload.first(std::min(payload.size(), kMaxGoodbyeBytes));
  text.reserve(shown.size());
  for (const std::byte b : shown) {
    const auto c = static_cast<unsigned char>(b);
    text += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  return text;
}

namespace {

Frame control_frame(FrameType type, uint32_t sender, std::size_t bytes) {
  Frame frame;
  frame.header.type = type;
  frame.header.sender = sender;
  frame.header.length = bytes;
  frame.payload.resize(bytes);
  return frame;
}

void check_payload(FrameType type, std::span<const std::byte> payload, std::size_t bytes) {
  if (payload.size() != bytes) {
    fail(FrameProblem::kBadLength, type_label(type) + " body of " + std::to_string(payload.size()) +
                                       " bytes (it has " + std::to_string(bytes) + ")");
  }
}

}  // namespace

Frame offer_frame(uint32_t sender, const Offer& offer) {
  Frame frame = control_frame(FrameType::kOffer, sender, kOfferBytes);
  put(frame.payload, 0, offer.pid);
  put(frame.payload, 4, offer.address);
  std::copy(offer.probe.begin(), offer.probe.end(), frame.payload.begin() + 12);
  return frame;
}

Offer read_offer(std::span<const std::byte> payload) {
  check_payload(FrameType::kOffer, payload, kOfferBytes);
  Offer offer;
  offer.pid = get<uint32_t>(payload, 0);
  offer.address = get<uint64_t>(payload, 4);
  std::copy(payload.begin() + 12, payload.end(), offer.probe.begin());
  return offer;
}

Frame answer_frame(uint32_t sender, bool reads_in_place) {
  Frame frame = control_frame(FrameType::kAnswer, sender, kAnswerBytes);
  frame.payload[0] = std::byte{reads_in_place ? uint8_t{1} : uint8_t{0}};
  return frame;
}

bool read_answer(std::span<const std::byte> payload) {
  check_payload(FrameType::kAnswer, payload, kAnswerBytes);
  const auto answer = static_cast<uint8_t>(payload[0]);
  if (answer > 1) {
    fail(FrameProblem::kBadLength,
         "answer frame saying " + std::to_string(answer) + " (it says 0 or 1)");
  }
  return answer == 1;
}

Frame released_frame(uint32_t sender, const Released& released) {
  Frame frame = control_frame(FrameType::kReleased, sender, kReleasedBytes);
  put(frame.payload, 0, static_cast<uint16_t>(released.tag));
  put(frame.payload, 2, released.sequence);
  return frame;
}

Released read_released(std::span<const std::byte> payload) {
  check_payload(FrameType::kReleased, payload, kReleasedBytes);
  const Released released{.tag = static_cast<strategy::Tag>(get<uint16_t>(payload, 0)),
                          .sequence = get<uint64_t>(payload, 2)};
  if (!valid_tag(released.tag)) {
    fail(FrameProblem::kUnknownTag, "released frame naming unknown tag " +
                                        std::to_string(static_cast<uint16_t>(released.tag)));
  }
  return released;
}

std::array<std::byte, kAddressBytes> encode_address(uint64_t address) {
  std::array<std::byte, kAddressBytes> out{};
  put(out, 0, address);
  return out;
}

uint64_t decode_address(std::span<const std::byte, kAddressBytes> bytes) {
  return get<uint64_t>(bytes, 0);
}

MessageFrame frame_message(const strategy::Message& message, uint32_t sender,
                           uint64_t max_payload) {
  return frame_message(message, message.values, sender, max_payload);
}

MessageFrame frame_message(const strategy::Message& message, std::span<const float> values,
                           uint32_t sender, uint64_t max_payload) {
  MessageFrame frame;
  FrameHeader& header = frame.header;
  header.type = FrameType::kMessage;
  header.tag = message.tag;
  header.sender = sender;
  header.op = message.op;
  header.step = message.step;
  header.version = message.version;
  header.sequence = message.sequence;
  if (message.from_incarnation > 0xffff || message.to_incarnation > 0xffff) {
    fail(FrameProblem::kPayloadMismatch, "a task restarted more than 65535 times");
  }
  header.from_incarnation = static_cast<uint16_t>(message.from_incarnation);
  header.to_incarnation = static_cast<uint16_t>(message.to_incarnation);
  header.length = message.bytes;
  if (values.empty()) {
    if (message.bytes != 0) header.flags = kFlagNoValues;
  } else {
    const uint64_t value_bytes = static_cast<uint64_t>(values.size()) * sizeof(float);
    if (value_bytes != message.bytes) {
      fail(FrameProblem::kPayloadMismatch,
           "message of tag " + std::string(strategy::tag_name(message.tag)) + " holding " +
               std::to_string(values.size()) + " floats but announcing " +
               std::to_string(message.bytes) + " bytes");
    }
    frame.payload = std::as_bytes(values);
  }
  check(header, max_payload);
  return frame;
}

strategy::Message begin_message(const FrameHeader& header, uint64_t max_payload) {
  return begin_message(header, max_payload,
                       [](std::size_t count) { return std::vector<float>(count); });
}

namespace {

// The fields of a checked message header, without values.
strategy::Message message_of_header(const FrameHeader& header, uint64_t max_payload) {
  if (header.type != FrameType::kMessage) {
    fail(FrameProblem::kPayloadMismatch, type_label(header.type) + " taken for a message frame");
  }
  check(header, max_payload);
  if ((header.flags & kFlagInSenderMemory) != 0) {
    fail(FrameProblem::kPayloadMismatch,
         "a message whose payload is in the sender's memory taken for one on the stream");
  }
  strategy::Message message;
  message.tag = header.tag;
  message.op = header.op;
  message.step = header.step;
  message.version = header.version;
  message.sequence = header.sequence;
  message.from_incarnation = header.from_incarnation;
  message.to_incarnation = header.to_incarnation;
  message.bytes = header.length;
  return message;
}

}  // namespace

strategy::Message begin_message(const FrameHeader& header, uint64_t max_payload,
                                const FloatStorage& storage) {
  strategy::Message message = message_of_header(header, max_payload);
  if ((header.flags & kFlagNoValues) == 0) {
    const std::size_t count = header.length / sizeof(float);
    message.values = storage(count);
    if (message.values.size() != count) {
      throw std::logic_error("begin_message: storage gave a buffer of the wrong size");
    }
  }
  return message;
}

strategy::Message begin_delivered_message(const FrameHeader& header, uint64_t max_payload) {
  strategy::Message message = message_of_header(header, max_payload);
  if ((header.flags & kFlagNoValues) != 0) {
    fail(FrameProblem::kPayloadMismatch, "a message without values taken for a delivered one");
  }
  message.delivered = true;
  return message;
}

std::span<std::byte> payload_target(strategy::Message& message) {
  return std::as_writable_bytes(std::span(message.values));
}

strategy::Message message_from_frame(const FrameHeader& header, std::span<const std::byte> payload,
                                     uint64_t max_payload) {
  const bool no_values = (header.flags & kFlagNoValues) != 0;
  const bool sized = payload.size() == header.length || (no_values && payload.empty());
  if (header.type == FrameType::kMessage && !sized) {
    fail(FrameProblem::kPayloadMismatch, "message announcing " + std::to_string(header.length) +
                                             " payload bytes but given " +
                                             std::to_string(payload.size()));
  }
  // Checks the header before anything is allocated.
  strategy::Message message = begin_message(header, max_payload);
  if (!no_values && !payload.empty()) {
    std::memcpy(message.values.data(), payload.data(), payload.size());
  }
  return message;
}

strategy::Message message_from_frame(const FrameHeader& header, std::span<const std::byte> payload,
                                     const strategy::ClusterSpec& cluster, uint64_t max_payload) {
  if (header.sender >= static_cast<uint32_t>(std::max(cluster.task_count(), 0))) {
    fail(FrameProblem::kUnknownSender,
         "message from task ordinal " + std::to_string(header.sender) + ", outside the cluster's " +
             std::to_string(cluster.task_count()) + " tasks");
  }
  strategy::Message message = message_from_frame(header, payload, max_payload);
  message.from = cluster.task_at(static_cast<int>(header.sender));
  return message;
}

}  // namespace distlab::net
