// The wire format of ./realnet: every byte two tasks exchange over TCP is a
// frame, a fixed 56-byte header followed by `length` bytes of payload.
// Encoding and decoding are pure functions over bytes, with no socket in
// sight, so that every rule below is tested and fuzzed on its own.
//
// Header layout (all integers little-endian, encoded field by field):
//
//   offset size field      meaning
//        0    4 magic      "DLAB"
//        4    2 protocol   kProtocolVersion; any other value is refused
//        6    2 type       FrameType
//        8    2 tag        strategy::Tag of a message frame; 0 otherwise
//       10    2 flags      FrameFlag bits allowed for the type; others refused
//       12    4 sender     the sending task's ordinal (ClusterSpec::ordinal)
//       16    4 op         Message::op (signed)
//       20    2 from_inc   Message::from_incarnation: the sender's life (0 until
//                          it is restarted after a failure)
//       22    2 to_inc     Message::to_incarnation: the receiver's, as the
//                          sender knows it
//       24    8 step       Message::step (signed)
//       32    8 version    Message::version (signed)
//       40    8 sequence   Message::sequence
//       48    8 length     payload bytes after the header
//
// Payload by frame type (frames other than messages carry tag, op, step,
// version, sequence and incarnations 0):
//
//   type       payload
//   hello      20 bytes: the acceptor's ordinal the connector means to reach,
//              the connector's cluster as chiefs, workers, ps, then the
//              connector's incarnation (u32 each)
//   challenge  32 bytes: the acceptor's nonce
//   response   64 bytes: the connector's MAC over the acceptor's nonce, then
//              the connector's own nonce
//   welcome    32 bytes with kFlagAuthenticated (the acceptor's MAC over the
//              connector's nonce), none without
//   message    the message's floats (IEEE-754 binary32, little-endian): a
//              multiple of 4 bytes, at most the receiver's maximum. With
//              kFlagNoValues (timing fidelity) the payload is `length` bytes
//              of filler: the size travels, the values do not. A task
//              report's text travels packed in floats (text_message), and
//              half-precision gradients two to a float
//              (strategy/gradient_wire.h): the words are copied, never
//              computed with, so every bit arrives as it left. With
//              kFlagInSenderMemory the payload does not follow: 8 bytes do,
//              the address (u64) of its `length` bytes in the sender's
//              memory, for the receiver to read there (see below).
//   goodbye    at most kMaxGoodbyeBytes of text: why the sender closes
//              (empty at the normal end of a run)
//   offer      28 bytes: the sender's process id (u32), then the address
//              (u64) of 16 bytes of its memory and those bytes: the
//              receiver may read the sender's payloads in place if it can
//              read these (it is another process of the same host)
//   answer     1 byte: 1 if the receiver of an offer reads the sender's
//              payloads in place from now on, 0 if it does not
//   released   10 bytes: the tag (u16) and sequence (u64) of a message
//              read in place; the sender may free or change its payload
//
// net/handshake.h says in which order the first frames come.
//
// Payloads read in place (same_host_reads in net/runtime): two tasks of one
// host need not copy a large payload through the kernel twice, as loopback
// TCP does. After the handshake each may offer the other its memory; once a
// task has accepted (answered 1), its peer sends large payloads as addresses, the task
// copies each straight from the peer's memory (Linux's process_vm_readv,
// one copy) and answers with a released frame, until which the peer leaves
// the payload alone. A receiver that cannot read the offered bytes (another
// host, another PID namespace, no ptrace permission) answers 0, and
// payloads keep coming over TCP.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "strategy/message.h"

namespace distlab::net {

inline constexpr std::array<std::byte, 4> kMagic = {std::byte{'D'}, std::byte{'L'}, std::byte{'A'},
                                                    std::byte{'B'}};
// 2: incarnations at offset 20; 3: task reports (strategy::Tag::kTaskReport);
// 4: learning rates (strategy::Tag::kLearningRate, PsRequest::kLearningRate);
// 5: the connector's incarnation in the hello (and its MAC);
// 6: payloads read in place (offer, answer, released; kFlagInSenderMemory)
inline constexpr uint16_t kProtocolVersion = 6;
inline constexpr std::size_t kHeaderBytes = 56;
// The largest message payload a receiver accepts unless told otherwise: 1 GiB
// (268,435,456 floats). A longer frame is refused before anything is
// allocated for it.
inline constexpr uint64_t kMaxPayloadBytes = uint64_t{1} << 30;
inline constexpr std::size_t kMaxGoodbyeBytes = 1024;
// Fixed payload sizes of the handshake frames.
inline constexpr std::size_t kHelloBytes = 20;
inline constexpr std::size_t kChallengeBytes = 32;
inline constexpr std::size_t kResponseBytes = 64;
inline constexpr std::size_t kAuthenticatedWelcomeBytes = 32;
inline constexpr std::size_t kOfferBytes = 28;
inline constexpr std::size_t kAnswerBytes = 1;
inline constexpr std::size_t kReleasedBytes = 10;
// What follows the header of a message read in place: its address.
inline constexpr std::size_t kAddressBytes = 8;

enum class FrameType : uint16_t {
  kHello = 1,      // connector -> acceptor: who I am, whom I mean to reach
  kChallenge = 2,  // acceptor -> connector: a nonce to answer
  kResponse = 3,   // connector -> acceptor: the answer and a nonce back
  kWelcome = 4,    // acceptor -> connector: accepted (and its own answer)
  kMessage = 5,    // a strategy::Message
  kGoodbye = 6,    // the sender closes the connection, saying why
  kOffer = 7,      // the receiver may read the sender's payloads in place
  kAnswer = 8,     // whether the receiver of an offer will
  kReleased = 9,   // a payload read in place is the sender's again
  kLast = kReleased,
};
// "hello", "challenge", ...; "?" for a value outside the enumeration.
const char* frame_type_name(FrameType type);

enum FrameFlag : uint16_t {
  // hello, welcome: the sender holds a cluster secret and authenticates.
  kFlagAuthenticated = 1 << 0,
  // message: the payload is filler of the message's size, not its values
  // (a timing-fidelity message). The receiver discards it.
  kFlagNoValues = 1 << 1,
  // message: the payload is in the sender's memory, at the address that
  // follows the header; the receiver reads it there, then releases it.
  kFlagInSenderMemory = 1 << 2,
};

struct FrameHeader {
  FrameType type = FrameType::kMessage;
  uint16_t flags = 0;
  strategy::Tag tag = strategy::Tag{0};  // Tag{0} on frames other than messages
  uint32_t sender = 0;
  int32_t op = 0;
  int64_t step = 0;
  int64_t version = 0;
  uint64_t sequence = 0;
  uint16_t from_incarnation = 0;
  uint16_t to_incarnation = 0;
  uint64_t length = 0;

  friend bool operator==(const FrameHeader&, const FrameHeader&) = default;
};

// Why a frame was refused; what() says it with the offending values.
enum class FrameProblem {
  kTruncated,           // fewer than kHeaderBytes bytes
  kBadMagic,            // not "DLAB": not a distlab peer, or a stream out of step
  kUnsupportedVersion,  // another protocol version
  kUnknownType,         // a frame type outside FrameType
  kBadFlags,            // flag bits not defined for the frame type
  kUnknownTag,          // a message tag outside strategy::Tag
  kFieldsOnControl,  // tag, op, step, version, sequence or incarnations set on a non-message frame
  kTooLong,          // a payload above the maximum
  kBadLength,        // a payload length the frame type cannot have
  kPayloadMismatch,  // a payload span (or message) that does not match the header
  kUnknownSender,    // a sender ordinal outside the cluster
};

class FrameError : public Error {
 public:
  FrameError(FrameProblem problem, const std::string& what) : Error(what), problem_(problem) {}
  FrameProblem problem() const { return problem_; }

 private:
  FrameProblem problem_;
};

// The header's 56 bytes. Throws FrameError (kBadLength, kTooLong, ...) for a
// header decode_header would refuse, so nothing invalid leaves a task.
std::array<std::byte, kHeaderBytes> encode_header(const FrameHeader& header,
                                                  uint64_t max_payload = kMaxPayloadBytes);

// Decodes the first kHeaderBytes of `bytes` (further bytes are ignored) and
// checks every rule above, in the order of the fields. Throws FrameError.
// `max_payload` bounds message payloads; the transport may lower it.
FrameHeader decode_header(std::span<const std::byte> bytes,
                          uint64_t max_payload = kMaxPayloadBytes);

// A frame that owns its payload: the small frames of the handshake and
// goodbyes. Messages go through MessageFrame instead, without copies.
struct Frame {
  FrameHeader header;
  std::vector<std::byte> payload;
};
// Header then payload, ready to write. Throws FrameError if the payload's
// size is not header.length.
std::vector<std::byte> encode_frame(const Frame& frame);

// A goodbye from `sender` carrying `reason`, cut to kMaxGoodbyeBytes.
Frame goodbye_frame(uint32_t sender, std::string_view reason);
// A goodbye's text for a log line: bytes outside printable ASCII become '?'.
std::string goodbye_reason(std::span<const std::byte> payload);

// The offer frame's body: this process, and 16 bytes of its memory that a
// reader must find there to accept.
struct Offer {
  uint32_t pid = 0;
  uint64_t address = 0;
  std::array<std::byte, 16> probe{};
};
Frame offer_frame(uint32_t sender, const Offer& offer);
// Throws FrameError (kBadLength) for a payload of another size.
Offer read_offer(std::span<const std::byte> payload);
// The answer to an offer: whether the sender reads in place from now on.
Frame answer_frame(uint32_t sender, bool reads_in_place);
// Throws FrameError (kBadLength) for a payload of another size or a byte
// other than 0 or 1.
bool read_answer(std::span<const std::byte> payload);

// The message a released frame names.
struct Released {
  strategy::Tag tag = strategy::Tag{0};
  uint64_t sequence = 0;
  friend bool operator==(const Released&, const Released&) = default;
};
Frame released_frame(uint32_t sender, const Released& released);
// Throws FrameError (kBadLength, kUnknownTag).
Released read_released(std::span<const std::byte> payload);

// The 8 bytes after a kFlagInSenderMemory message's header, and back.
std::array<std::byte, kAddressBytes> encode_address(uint64_t address);
uint64_t decode_address(std::span<const std::byte, kAddressBytes> bytes);

// A message ready to write: its header, and its floats' bytes as a view of
// message.values (no copy), valid as long as the message is alive and
// unchanged. With kFlagNoValues, `payload` is empty and the transport writes
// header.length bytes of filler (zeros) in its place.
struct MessageFrame {
  FrameHeader header;
  std::span<const std::byte> payload;
};
// Throws FrameError when the message cannot travel: bytes not a multiple of
// 4 or above `max_payload`, or values present but not bytes / 4 of them.
MessageFrame frame_message(const strategy::Message& message, uint32_t sender,
                           uint64_t max_payload = kMaxPayloadBytes);
// The same for a message whose floats are not its own (a borrowed send,
// Runtime::send_borrowed): `values` stands for message.values, which is
// empty, and must stay alive and unchanged until the frame is written.
MessageFrame frame_message(const strategy::Message& message, std::span<const float> values,
                           uint32_t sender, uint64_t max_payload = kMaxPayloadBytes);

// The message a decoded message header announces, with its values sized
// (header.length / 4 floats) but not yet read: the transport reads the
// payload straight into payload_target(message), without another copy. A
// header with kFlagInSenderMemory is refused (kPayloadMismatch) by these
// and by message_from_frame: its payload is not on the stream, and the
// transport clears the flag once it knows where to read it.
// `from` is left for the caller (see message_from_frame). Throws FrameError
// for a header that is not a valid message's, so that nothing is allocated
// beyond `max_payload`.
strategy::Message begin_message(const FrameHeader& header, uint64_t max_payload = kMaxPayloadBytes);
// The same with the values in a buffer of `storage(count)` floats (a
// recycled one, whose old values the payload overwrites), asked for only
// once the header has passed its checks.
using FloatStorage = std::function<std::vector<float>(std::size_t count)>;
strategy::Message begin_message(const FrameHeader& header, uint64_t max_payload,
                                const FloatStorage& storage);
// The message a header announces, for a payload the transport reads
// elsewhere (into a posted receive's floats): values stays empty and
// `delivered` is set. Throws FrameError as begin_message does, and for a
// kFlagNoValues header (it has no payload to deliver).
strategy::Message begin_delivered_message(const FrameHeader& header,
                                          uint64_t max_payload = kMaxPayloadBytes);
// The bytes of message.values, to read a payload into.
std::span<std::byte> payload_target(strategy::Message& message);

// The message of a decoded header and its payload (header.length bytes; for
// a kFlagNoValues frame, either those bytes or none). `bytes` is
// header.length. Throws FrameError (kPayloadMismatch, or a header that is not
// a message's). The first form leaves `from` at its default: the transport
// sets it from the peer the handshake authenticated. The second sets it from
// header.sender in `cluster` and refuses an ordinal outside it
// (kUnknownSender); the transport should also hold header.sender to the
// authenticated peer's ordinal.
strategy::Message message_from_frame(const FrameHeader& header, std::span<const std::byte> payload,
                                     uint64_t max_payload = kMaxPayloadBytes);
strategy::Message message_from_frame(const FrameHeader& header, std::span<const std::byte> payload,
                                     const strategy::ClusterSpec& cluster,
                                     uint64_t max_payload = kMaxPayloadBytes);

}  // namespace distlab::net
