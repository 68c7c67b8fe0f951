// The wire format of ./realnet: the header's exact bytes, round trips of
// every frame type and of messages, and every reason a frame is refused.
// A peer's bytes must decode to what was sent or be refused with a
// FrameError: never a crash, never a silent misreading.
#include "net/wire/frame.h"

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

using namespace distlab::net;
using distlab::strategy::ClusterSpec;
using distlab::strategy::Message;
using distlab::strategy::Role;
using distlab::strategy::Tag;
using distlab::strategy::TaskId;

namespace {

using Header = std::array<std::byte, kHeaderBytes>;

FrameHeader control(FrameType type, uint16_t flags, uint64_t length, uint32_t sender = 3) {
  FrameHeader header;
  header.type = type;
  header.flags = flags;
  header.sender = sender;
  header.length = length;
  return header;
}

FrameHeader message_header(Tag tag, uint64_t length) {
  FrameHeader header;
  header.type = FrameType::kMessage;
  header.tag = tag;
  header.sender = 2;
  header.op = -3;
  header.step = -1234567890123;
  header.version = int64_t{1} << 40;
  header.sequence = ~uint64_t{0} - 5;
  header.length = length;
  return header;
}

// One valid header of every kind the format allows.
std::vector<FrameHeader> valid_headers() {
  return {
      control(FrameType::kHello, 0, kHelloBytes),
      control(FrameType::kHello, kFlagAuthenticated, kHelloBytes),
      control(FrameType::kChallenge, 0, kChallengeBytes),
      control(FrameType::kResponse, 0, kResponseBytes),
      control(FrameType::kWelcome, 0, 0),
      control(FrameType::kWelcome, kFlagAuthenticated, kAuthenticatedWelcomeBytes),
      control(FrameType::kGoodbye, 0, 0),
      control(FrameType::kGoodbye, 0, kMaxGoodbyeBytes),
      message_header(Tag::kRing, 0),
      message_header(Tag::kToParameterServer, 12),
      message_header(Tag::kParameters, kMaxPayloadBytes),
      [] {
        FrameHeader h = message_header(Tag::kRing, 4096);
        h.flags = kFlagNoValues;
        return h;
      }(),
      [] {
        FrameHeader h = message_header(Tag::kRing, 4096);
        h.flags = kFlagInSenderMemory;
        return h;
      }(),
      control(FrameType::kOffer, 0, kOfferBytes),
      control(FrameType::kAnswer, 0, kAnswerBytes),
      control(FrameType::kReleased, 0, kReleasedBytes),
  };
}

void set_u16(Header& bytes, std::size_t at, uint16_t value) {
  bytes[at] = static_cast<std::byte>(value & 0xff);
  bytes[at + 1] = static_cast<std::byte>(value >> 8);
}

void set_u64(Header& bytes, std::size_t at, uint64_t value) {
  for (int i = 0; i < 8; ++i) bytes[at + i] = static_cast<std::byte>((value >> (8 * i)) & 0xff);
}

// decode_header's refusal of `bytes`: the problem, with what() checked to
// contain `words`.
void require_refused(std::span<const std::byte> bytes, FrameProblem problem, const char* words,
                     uint64_t max_payload = kMaxPayloadBytes) {
  try {
    decode_header(bytes, max_payload);
    FAIL("decoded a header that should be refused: " << words);
  } catch (const FrameError& e) {
    CHECK(e.problem() == problem);
    CHECK_THAT(e.what(), Catch::Contains(words));
  }
}

std::vector<std::byte> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

uint32_t bits(float f) {
  return std::bit_cast<uint32_t>(f);
}

}  // namespace

TEST_CASE("the header's bytes follow the documented little-endian layout") {
  FrameHeader header = message_header(Tag::kParameters, 40);
  header.sender = 0x0a0b0c0d;
  header.op = -2;
  header.step = 0x1122334455667788;
  header.version = -1;
  header.sequence = 0x8877665544332211ull;
  header.from_incarnation = 0x0102;
  header.to_incarnation = 0x0304;
  header.flags = kFlagNoValues;
  const Header bytes = encode_header(header);
  REQUIRE(bytes.size() == 56);
  const auto at = [&](std::size_t i) { return std::to_integer<int>(bytes[i]); };
  CHECK(at(0) == 'D');
  CHECK(at(1) == 'L');
  CHECK(at(2) == 'A');
  CHECK(at(3) == 'B');
  CHECK((at(4) | at(5) << 8) == kProtocolVersion);
  CHECK((at(6) | at(7) << 8) == 5);  // message
  CHECK((at(8) | at(9) << 8) == 3);  // Tag::kParameters
  CHECK((at(10) | at(11) << 8) == kFlagNoValues);
  CHECK(at(12) == 0x0d);
  CHECK(at(15) == 0x0a);
  CHECK(at(16) == 0xfe);  // -2, two's complement
  CHECK(at(19) == 0xff);
  CHECK((at(20) | at(21) << 8) == 0x0102);  // the sender's incarnation
  CHECK((at(22) | at(23) << 8) == 0x0304);  // the receiver's, as the sender knows it
  CHECK(at(24) == 0x88);
  CHECK(at(31) == 0x11);
  for (int i = 32; i < 40; ++i) CHECK(at(i) == 0xff);  // version -1
  CHECK(at(40) == 0x11);
  CHECK(at(47) == 0x88);
  CHECK(at(48) == 40);
  for (int i = 49; i < 56; ++i) CHECK(at(i) == 0);
}

TEST_CASE("every frame type round-trips through its header bytes") {
  for (const FrameHeader& header : valid_headers()) {
    INFO(frame_type_name(header.type) << " flags " << header.flags << " length " << header.length);
    const Header bytes = encode_header(header);
    CHECK(decode_header(bytes) == header);
    // Bytes after the header are not the header's business.
    std::vector<std::byte> longer(bytes.begin(), bytes.end());
    longer.resize(longer.size() + 9, std::byte{0x5a});
    CHECK(decode_header(longer) == header);
  }
  CHECK(std::string(frame_type_name(FrameType::kChallenge)) == "challenge");
  CHECK(std::string(frame_type_name(static_cast<FrameType>(99))) == "?");
}

TEST_CASE("messages round-trip with their fields and floats, bit for bit") {
  const auto count = GENERATE(0, 1, 3, 7, 1001);
  std::vector<float> values(count);
  for (int i = 0; i < count; ++i) values[i] = static_cast<float>(i) * 0.37f - 11.0f;
  if (count >= 7) {
    values[1] = -0.0f;
    values[2] = std::numeric_limits<float>::infinity();
    values[3] = std::numeric_limits<float>::denorm_min();
    values[4] = std::numeric_limits<float>::quiet_NaN();
    values[5] = std::numeric_limits<float>::max();
  }
  Message sent = distlab::strategy::make_message(Tag::kToParameterServer, -7, count, values.data());
  sent.op = 5;
  sent.version = 99;
  sent.sequence = 123456789;
  sent.from_incarnation = 2;
  sent.to_incarnation = 1;

  const MessageFrame frame = frame_message(sent, 4);
  CHECK(frame.header.length == 4 * static_cast<uint64_t>(count));
  CHECK(frame.header.flags == 0);
  CHECK(frame.payload.size() == frame.header.length);
  if (count > 0) {  // a view of the floats, not a copy
    CHECK(static_cast<const void*>(frame.payload.data()) ==
          static_cast<const void*>(sent.values.data()));
  }

  const Header header_bytes = encode_header(frame.header);
  const FrameHeader header = decode_header(header_bytes);
  const ClusterSpec cluster{.chiefs = 1, .workers = 2, .ps = 2};
  const Message got = message_from_frame(header, frame.payload, cluster);
  CHECK(got.from == TaskId{Role::kPs, 1});
  CHECK(got.tag == Tag::kToParameterServer);
  CHECK(got.op == 5);
  CHECK(got.step == -7);
  CHECK(got.version == 99);
  CHECK(got.sequence == 123456789);
  CHECK(got.from_incarnation == 2);
  CHECK(got.to_incarnation == 1);
  CHECK(got.bytes == 4 * static_cast<uint64_t>(count));
  REQUIRE(got.values.size() == values.size());
  for (int i = 0; i < count; ++i) CHECK(bits(got.values[i]) == bits(values[i]));

  // The same through begin_message and a read straight into the values.
  Message direct = begin_message(header);
  const auto target = payload_target(direct);
  REQUIRE(target.size() == frame.payload.size());
  if (!target.empty()) std::memcpy(target.data(), frame.payload.data(), target.size());
  REQUIRE(direct.values.size() == got.values.size());
  for (int i = 0; i < count; ++i) CHECK(bits(direct.values[i]) == bits(values[i]));
  CHECK(direct.bytes == got.bytes);
  CHECK(direct.from == TaskId{});  // left to the transport
}

TEST_CASE("a task report travels as text in a message's floats, every byte as sent") {
  // Lengths around a float's four bytes, and bytes whose floats are NaNs
  // (0x7f 0xc0 ...) or denormals: copied, never computed with.
  const auto length = GENERATE(0, 1, 3, 4, 5, 4099);
  std::string text(static_cast<std::size_t>(length), 'x');
  for (std::size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>((i * 37 + 11) % 256);
  if (text.size() >= 4) text.replace(0, 4, std::string("\x01\x00\xc0\x7f", 4));
  Message sent = distlab::strategy::text_message(Tag::kTaskReport, text);
  CHECK(sent.bytes % 4 == 0);
  CHECK(sent.bytes == sent.values.size() * 4);
  const MessageFrame frame = frame_message(sent, 2);
  const FrameHeader header = decode_header(encode_header(frame.header));
  CHECK(header.tag == Tag::kTaskReport);
  const ClusterSpec cluster{.chiefs = 1, .workers = 2, .ps = 0};
  const Message got = message_from_frame(header, frame.payload, cluster);
  CHECK(got.from == TaskId{Role::kWorker, 1});
  CHECK(distlab::strategy::message_text(got) == text);
  CHECK(std::string(distlab::strategy::tag_name(Tag::kTaskReport)) == "task-report");
}

TEST_CASE("a text message's length beyond its payload is refused") {
  Message claim = distlab::strategy::text_message(Tag::kTaskReport, "abc");
  claim.version = 5;  // 4 bytes of payload
  CHECK_THROWS_AS(distlab::strategy::message_text(claim), distlab::Error);
  claim.version = -1;
  CHECK_THROWS_AS(distlab::strategy::message_text(claim), distlab::Error);
}

TEST_CASE("a timing-fidelity message carries its size, not values") {
  Message sent = distlab::strategy::make_message(Tag::kRing, 3, 250, nullptr);
  REQUIRE(sent.values.empty());
  const MessageFrame frame = frame_message(sent, 0);
  CHECK(frame.header.flags == kFlagNoValues);
  CHECK(frame.header.length == 1000);
  CHECK(frame.payload.empty());
  const FrameHeader header = decode_header(encode_header(frame.header));
  CHECK(header == frame.header);
  const std::vector<std::byte> filler(1000);
  for (const auto payload : {std::span<const std::byte>(), std::span<const std::byte>(filler)}) {
    const Message got = message_from_frame(header, payload);
    CHECK(got.values.empty());
    CHECK(got.bytes == 1000);
    CHECK(got.step == 3);
  }
  CHECK(begin_message(header).values.empty());
  // Anything but none or all of the filler is a transport bug.
  try {
    message_from_frame(header, std::span(filler).first(999));
    FAIL("took a short filler");
  } catch (const FrameError& e) {
    CHECK(e.problem() == FrameProblem::kPayloadMismatch);
  }
}

TEST_CASE("a header shorter than 56 bytes is refused as truncated") {
  const Header bytes = encode_header(control(FrameType::kGoodbye, 0, 0));
  for (const std::size_t size :
       {std::size_t{0}, std::size_t{1}, std::size_t{4}, kHeaderBytes - 1}) {
    require_refused(std::span(bytes).first(size), FrameProblem::kTruncated,
                    (std::to_string(size) + " of 56 bytes").c_str());
  }
}

TEST_CASE("each rule of the header refuses what breaks it, with a precise reason") {
  const Header good = encode_header(message_header(Tag::kRing, 64));
  REQUIRE_NOTHROW(decode_header(good));

  SECTION("bad magic") {
    Header bytes = good;
    bytes[0] = std::byte{'G'};
    require_refused(bytes, FrameProblem::kBadMagic, "not \"DLAB\"");
    Header http{};
    const char* get = "GET / HTTP/1.1\r\n";
    std::memcpy(http.data(), get, std::strlen(get));
    require_refused(http, FrameProblem::kBadMagic, "not a distlab peer");
  }
  SECTION("unsupported protocol version") {
    for (const uint16_t version : {uint16_t{0}, uint16_t{5}, uint16_t{7}, uint16_t{0xffff}}) {
      Header bytes = good;
      set_u16(bytes, 4, version);
      require_refused(bytes, FrameProblem::kUnsupportedVersion,
                      ("protocol version " + std::to_string(version)).c_str());
    }
  }
  SECTION("unknown frame type") {
    for (const uint16_t type : {uint16_t{0}, uint16_t{10}, uint16_t{0xffff}}) {
      Header bytes = good;
      set_u16(bytes, 6, type);
      require_refused(bytes, FrameProblem::kUnknownType,
                      ("unknown frame type " + std::to_string(type)).c_str());
    }
  }
  SECTION("unknown message tag") {
    const auto past_last =
        static_cast<uint16_t>(static_cast<int>(distlab::strategy::Tag::kLast) + 1);
    for (const uint16_t tag : {uint16_t{0}, past_last, uint16_t{0x8000}}) {
      Header bytes = good;
      set_u16(bytes, 8, tag);
      require_refused(bytes, FrameProblem::kUnknownTag,
                      ("unknown tag " + std::to_string(tag)).c_str());
    }
  }
  SECTION("flags the type does not define") {
    Header bytes = good;
    set_u16(bytes, 10, 0x0008);
    require_refused(bytes, FrameProblem::kBadFlags, "flags 0x8");
    set_u16(bytes, 10, kFlagAuthenticated);  // a hello's flag on a message
    require_refused(bytes, FrameProblem::kBadFlags, "allowed: 0x6");
    Header hello = encode_header(control(FrameType::kHello, 0, kHelloBytes));
    set_u16(hello, 10, kFlagNoValues);
    require_refused(hello, FrameProblem::kBadFlags, "hello frame with flags 0x2");
    Header empty_timing = encode_header(message_header(Tag::kRing, 0));
    set_u16(empty_timing, 10, kFlagNoValues);
    require_refused(empty_timing, FrameProblem::kBadFlags, "needs a length");
  }
  SECTION("incarnations on a frame that is not a message") {
    Header hello = encode_header(control(FrameType::kHello, 0, kHelloBytes));
    hello[22] = std::byte{1};
    require_refused(hello, FrameProblem::kFieldsOnControl, "incarnations set");
  }
  SECTION("message fields on a frame that is not a message") {
    Header tagged = encode_header(control(FrameType::kChallenge, 0, kChallengeBytes));
    set_u16(tagged, 8, 1);
    require_refused(tagged, FrameProblem::kFieldsOnControl, "challenge frame with tag 1");
    for (const std::size_t at :
         {std::size_t{16}, std::size_t{24}, std::size_t{32}, std::size_t{47}}) {
      Header bytes = encode_header(control(FrameType::kGoodbye, 0, 0));
      bytes[at] = std::byte{1};
      require_refused(bytes, FrameProblem::kFieldsOnControl,
                      "op, step, version, sequence or incarnations");
    }
  }
  SECTION("a payload above the maximum, which the receiver may lower") {
    Header bytes = good;
    set_u64(bytes, 48, kMaxPayloadBytes + 4);
    require_refused(bytes, FrameProblem::kTooLong, "above the maximum of 1073741824");
    set_u64(bytes, 48, ~uint64_t{0} & ~uint64_t{3});
    require_refused(bytes, FrameProblem::kTooLong, "above the maximum");
    set_u64(bytes, 48, 4096);
    CHECK_NOTHROW(decode_header(bytes, 4096));
    require_refused(bytes, FrameProblem::kTooLong, "above the maximum of 4092", 4092);
    Header goodbye = encode_header(control(FrameType::kGoodbye, 0, 0));
    set_u64(goodbye, 48, kMaxGoodbyeBytes + 1);
    require_refused(goodbye, FrameProblem::kTooLong, "goodbye frame of 1025 bytes");
  }
  SECTION("a message length that is not whole floats") {
    for (const uint64_t length : {uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{4097}}) {
      Header bytes = good;
      set_u64(bytes, 48, length);
      require_refused(bytes, FrameProblem::kBadLength, "not a whole number of floats");
    }
  }
  SECTION("a payload on a frame type that carries none, or of the wrong size") {
    Header welcome = encode_header(control(FrameType::kWelcome, 0, 0));
    set_u64(welcome, 48, 8);
    require_refused(welcome, FrameProblem::kBadLength, "unauthenticated welcome frame with a 8");
    const struct {
      FrameType type;
      uint16_t flags;
      uint64_t right;
    } fixed[] = {{FrameType::kHello, 0, kHelloBytes},
                 {FrameType::kChallenge, 0, kChallengeBytes},
                 {FrameType::kResponse, 0, kResponseBytes},
                 {FrameType::kWelcome, kFlagAuthenticated, kAuthenticatedWelcomeBytes}};
    for (const auto& f : fixed) {
      for (const uint64_t wrong : {uint64_t{0}, f.right - 1, f.right + 1, uint64_t{1} << 40}) {
        Header bytes = encode_header(control(f.type, f.flags, f.right));
        set_u64(bytes, 48, wrong);
        require_refused(bytes, FrameProblem::kBadLength,
                        ("carries exactly " + std::to_string(f.right)).c_str());
      }
    }
  }
}

TEST_CASE("the checks run in the order of the fields") {
  // A stream out of step says so, whatever else is wrong.
  Header bytes{};
  set_u16(bytes, 4, 9);
  set_u16(bytes, 6, 77);
  require_refused(bytes, FrameProblem::kBadMagic, "magic 0x0");
  std::copy(kMagic.begin(), kMagic.end(), bytes.begin());
  require_refused(bytes, FrameProblem::kUnsupportedVersion, "version 9");
  set_u16(bytes, 4, kProtocolVersion);
  require_refused(bytes, FrameProblem::kUnknownType, "type 77");
}

TEST_CASE("a corrupted header byte is refused or decodes to another valid header") {
  int refused = 0;
  int decoded = 0;
  for (const FrameHeader& header : valid_headers()) {
    const Header original = encode_header(header);
    for (std::size_t at = 0; at < kHeaderBytes; ++at) {
      for (const int mask : {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xff}) {
        Header bytes = original;
        bytes[at] ^= static_cast<std::byte>(mask);
        try {
          const FrameHeader other = decode_header(bytes);
          ++decoded;
          INFO("byte " << at << " ^ " << mask);
          CHECK_FALSE(other == header);
          CHECK(encode_header(other) == bytes);  // valid: it is what it says
        } catch (const FrameError&) {
          ++refused;
        }
      }
    }
  }
  // Both outcomes happen: the magic, version and type are always refused;
  // a flipped step or sender is a valid header of another message.
  CHECK(refused > 0);
  CHECK(decoded > 0);
}

TEST_CASE("messages that cannot travel are refused at the sender") {
  SECTION("values and size disagree") {
    Message m = distlab::strategy::make_message(Tag::kRing, 0, 2, std::vector<float>{1, 2}.data());
    m.bytes = 12;
    try {
      frame_message(m, 0);
      FAIL("framed a message whose values and size disagree");
    } catch (const FrameError& e) {
      CHECK(e.problem() == FrameProblem::kPayloadMismatch);
      CHECK_THAT(e.what(), Catch::Contains("holding 2 floats but announcing 12 bytes"));
    }
  }
  SECTION("a size that is not whole floats") {
    Message m = distlab::strategy::make_message(Tag::kRing, 0, 0, nullptr);
    m.bytes = 6;
    CHECK_THROWS_MATCHES(
        frame_message(m, 0), FrameError,
        Catch::Predicate<FrameError>(
            [](const FrameError& e) { return e.problem() == FrameProblem::kBadLength; },
            "kBadLength"));
  }
  SECTION("a message above the maximum") {
    Message m = distlab::strategy::make_message(Tag::kRing, 0, 100, nullptr);
    CHECK_NOTHROW(frame_message(m, 0, 400));
    CHECK_THROWS_AS(frame_message(m, 0, 396), FrameError);
  }
  SECTION("a tag outside strategy::Tag") {
    Message m = distlab::strategy::make_message(Tag::kRing, 0, 0, nullptr);
    m.tag = static_cast<Tag>(42);
    CHECK_THROWS_WITH(frame_message(m, 0), Catch::Contains("unknown tag 42"));
  }
  SECTION("a header encode_header would write and decode_header refuse") {
    CHECK_THROWS_AS(encode_header(control(FrameType::kHello, 0, 3)), FrameError);
    CHECK_THROWS_AS(encode_header(control(static_cast<FrameType>(0), 0, 0)), FrameError);
  }
}

TEST_CASE("a payload that does not match its header is refused on receipt") {
  const FrameHeader header = message_header(Tag::kRing, 8);
  const std::vector<std::byte> short_payload(4);
  try {
    message_from_frame(header, short_payload);
    FAIL("took 4 bytes for 8");
  } catch (const FrameError& e) {
    CHECK(e.problem() == FrameProblem::kPayloadMismatch);
    CHECK_THAT(e.what(), Catch::Contains("announcing 8 payload bytes but given 4"));
  }
  const FrameHeader hello = control(FrameType::kHello, 0, kHelloBytes);
  const std::vector<std::byte> body(kHelloBytes);
  CHECK_THROWS_WITH(message_from_frame(hello, body), Catch::Contains("taken for a message"));
  CHECK_THROWS_AS(begin_message(hello), FrameError);
  // begin_message allocates nothing for a header above the maximum, and
  // asks its storage for nothing either.
  CHECK_THROWS_AS(begin_message(message_header(Tag::kRing, uint64_t{1} << 40)), FrameError);
  int asked = 0;
  const FloatStorage counting = [&](std::size_t count) {
    ++asked;
    return std::vector<float>(count);
  };
  CHECK_THROWS_AS(
      begin_message(message_header(Tag::kRing, uint64_t{1} << 40), kMaxPayloadBytes, counting),
      FrameError);
  CHECK_THROWS_AS(begin_message(hello, kMaxPayloadBytes, counting), FrameError);
  CHECK(asked == 0);
}

TEST_CASE("a message's values can live in a recycled buffer") {
  std::vector<float> recycled(6, 7.0f);
  const float* storage = recycled.data();
  std::size_t asked_for = 0;
  Message m =
      begin_message(message_header(Tag::kRing, 24), kMaxPayloadBytes, [&](std::size_t count) {
        asked_for = count;
        return std::move(recycled);
      });
  CHECK(asked_for == 6);
  CHECK(m.values.data() == storage);  // no copy, no new allocation
  CHECK(payload_target(m).size() == 24);
  // A storage that breaks its contract is a bug, not a peer's fault.
  CHECK_THROWS_AS(begin_message(message_header(Tag::kRing, 24), kMaxPayloadBytes,
                                [](std::size_t count) { return std::vector<float>(count + 1); }),
                  std::logic_error);
}

TEST_CASE("a message from an ordinal outside the cluster is refused") {
  const ClusterSpec cluster{.chiefs = 1, .workers = 1, .ps = 0};
  FrameHeader header = message_header(Tag::kRing, 0);
  header.sender = 1;
  CHECK(message_from_frame(header, {}, cluster).from == TaskId{Role::kWorker, 0});
  header.sender = 2;
  try {
    message_from_frame(header, {}, cluster);
    FAIL("took a message from ordinal 2 of a 2-task cluster");
  } catch (const FrameError& e) {
    CHECK(e.problem() == FrameProblem::kUnknownSender);
    CHECK_THAT(e.what(), Catch::Contains("task ordinal 2, outside the cluster's 2 tasks"));
  }
}

TEST_CASE("frames with owned payloads encode header then payload") {
  const Frame goodbye = goodbye_frame(5, "done");
  const std::vector<std::byte> bytes = encode_frame(goodbye);
  REQUIRE(bytes.size() == kHeaderBytes + 4);
  const FrameHeader header = decode_header(bytes);
  CHECK(header.type == FrameType::kGoodbye);
  CHECK(header.sender == 5);
  CHECK(header.length == 4);
  CHECK(goodbye_reason(std::span(bytes).subspan(kHeaderBytes)) == "done");

  Frame broken = goodbye;
  broken.payload.pop_back();
  CHECK_THROWS_WITH(encode_frame(broken), Catch::Contains("announcing 4 payload bytes"));
}

TEST_CASE("goodbye reasons are bounded and printable") {
  const std::string long_reason(3000, 'x');
  const Frame frame = goodbye_frame(0, long_reason);
  CHECK(frame.payload.size() == kMaxGoodbyeBytes);
  CHECK_NOTHROW(decode_header(encode_header(frame.header)));
  const std::vector<std::byte> nasty = {std::byte{'o'},  std::byte{'k'},  std::byte{0x1b},
                                        std::byte{'\n'}, std::byte{0xc3}, std::byte{'!'}};
  CHECK(goodbye_reason(nasty) == "ok" + std::string(3, '?') + "!");
}

TEST_CASE("the frames of payloads read in place carry what they say, and nothing else") {
  Offer offer{.pid = 31337, .address = 0x7ffd'dead'beef};
  for (std::size_t i = 0; i < offer.probe.size(); ++i) offer.probe[i] = std::byte(200 - i);
  const Frame offered = offer_frame(4, offer);
  CHECK(decode_header(encode_frame(offered)).type == FrameType::kOffer);
  CHECK(offered.header.sender == 4);
  const Offer back = read_offer(offered.payload);
  CHECK(back.pid == offer.pid);
  CHECK(back.address == offer.address);
  CHECK(back.probe == offer.probe);
  CHECK_THROWS_AS(read_offer(std::span(offered.payload).first(27)), FrameError);

  for (const bool reads : {true, false}) {
    const Frame answer = answer_frame(2, reads);
    CHECK(decode_header(encode_frame(answer)).type == FrameType::kAnswer);
    CHECK(read_answer(answer.payload) == reads);
  }
  CHECK_THROWS_WITH(read_answer(std::vector<std::byte>{std::byte{2}}), Catch::Contains("saying 2"));
  CHECK_THROWS_AS(read_answer({}), FrameError);

  const Released released{.tag = Tag::kParameters, .sequence = ~uint64_t{0} - 1};
  const Frame frame = released_frame(3, released);
  CHECK(read_released(frame.payload) == released);
  std::vector<std::byte> unknown = frame.payload;
  unknown[0] = std::byte{0};
  unknown[1] = std::byte{0x80};
  CHECK_THROWS_WITH(read_released(unknown), Catch::Contains("unknown tag 32768"));
  CHECK_THROWS_AS(read_released(std::span(frame.payload).first(9)), FrameError);

  CHECK(decode_address(encode_address(0x0123'4567'89ab'cdef)) == 0x0123'4567'89ab'cdef);
  CHECK(encode_address(1)[0] == std::byte{1});  // little-endian, as the header
}

TEST_CASE(
    "a message in the sender's memory has values, and no reader takes it for one on the "
    "stream") {
  FrameHeader lent = message_header(Tag::kRing, 4096);
  lent.flags = kFlagInSenderMemory;
  CHECK(decode_header(encode_header(lent)) == lent);
  CHECK_THROWS_WITH(begin_message(lent), Catch::Contains("in the sender's memory"));
  CHECK_THROWS_WITH(begin_delivered_message(lent), Catch::Contains("in the sender's memory"));
  CHECK_THROWS_AS(message_from_frame(lent, std::vector<std::byte>(4096)), FrameError);

  FrameHeader empty = message_header(Tag::kRing, 0);
  empty.flags = kFlagInSenderMemory;
  CHECK_THROWS_WITH(encode_header(empty), Catch::Contains("nothing to read"));
  FrameHeader both = lent;
  both.flags = kFlagInSenderMemory | kFlagNoValues;
  CHECK_THROWS_WITH(encode_header(both), Catch::Contains("nothing to read"));
  FrameHeader huge = lent;
  huge.length = kMaxPayloadBytes + 4;
  CHECK_THROWS_WITH(encode_header(huge), Catch::Contains("above the maximum"));
}

TEST_CASE("the shipped fuzz seeds are valid frames of the current format") {
  const std::filesystem::path dir =
      std::filesystem::path(DISTLAB_SOURCE_DIR) / "net/wire/fuzz/corpus/frame_fuzz";
  REQUIRE(std::filesystem::is_directory(dir));
  int seeds = 0;
  int messages = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    INFO(entry.path().string());
    const std::vector<std::byte> bytes = read_file(entry.path());
    const FrameHeader header = decode_header(bytes);
    if ((header.flags & kFlagInSenderMemory) != 0) {
      CHECK(bytes.size() == kHeaderBytes + kAddressBytes);
      continue;
    }
    CHECK(bytes.size() == kHeaderBytes + header.length);
    if (header.type == FrameType::kMessage) {
      CHECK_NOTHROW(message_from_frame(header, std::span(bytes).subspan(kHeaderBytes)));
      ++messages;
    }
    ++seeds;
  }
  CHECK(seeds >= 8);
  CHECK(messages >= 3);
  CHECK_FALSE(std::filesystem::is_empty(std::filesystem::path(DISTLAB_SOURCE_DIR) /
                                        "net/wire/fuzz/corpus/handshake_fuzz"));
}
