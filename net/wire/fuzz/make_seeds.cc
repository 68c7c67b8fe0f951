// Writes the seed corpora of the fuzz targets, made by the real encoder so
// that they stay valid when the format changes: make_seeds DIR writes
// DIR/frame_fuzz/*.bin (one valid frame of every type) and
// DIR/handshake_fuzz/*.bin (inputs in the format of handshake_input.h).
// tools/fuzz --seeds refreshes net/wire/fuzz/corpus/ with it.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "net/wire/fuzz/handshake_input.h"
#include "net/wire/handshake.h"

using namespace distlab::net;
namespace strategy = distlab::strategy;

namespace {

void write(const std::filesystem::path& path, const std::vector<std::byte>& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::vector<std::byte> message_bytes(const strategy::Message& message, uint32_t sender) {
  const MessageFrame frame = frame_message(message, sender);
  const auto header = encode_header(frame.header);
  std::vector<std::byte> out(header.begin(), header.end());
  if ((frame.header.flags & kFlagNoValues) != 0) {
    out.resize(out.size() + frame.header.length);  // the filler
  } else {
    out.insert(out.end(), frame.payload.begin(), frame.payload.end());
  }
  return out;
}

void append(std::vector<std::byte>& out, const std::vector<std::byte>& more) {
  out.insert(out.end(), more.begin(), more.end());
}

std::vector<std::byte> bytes_of(const std::string& text) {
  std::vector<std::byte> out;
  for (const char c : text) out.push_back(static_cast<std::byte>(c));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_seeds DIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const strategy::ClusterSpec cluster{.chiefs = 1, .workers = 2, .ps = 1};
  const std::string secret = "a cluster secret of the seeds";
  const HandshakeConfig chief{
      .secret = secret, .cluster = cluster, .self = {strategy::Role::kChief, 0}};
  const HandshakeConfig worker{
      .secret = secret, .cluster = cluster, .self = {strategy::Role::kWorker, 1}};
  HandshakeConfig open_chief = chief;
  open_chief.secret.clear();

  // frame_fuzz: one valid frame of every type.
  const auto frames = dir / "frame_fuzz";
  ConnectorHandshake connector(worker, {strategy::Role::kChief, 0});
  const Frame hello = connector.hello();
  write(frames / "hello.bin", encode_frame(hello));
  AcceptorHandshake acceptor(chief);
  const Frame challenge = *acceptor.on_frame(hello.header, hello.payload);
  write(frames / "challenge.bin", encode_frame(challenge));
  const Frame response = *connector.on_frame(challenge.header, challenge.payload);
  write(frames / "response.bin", encode_frame(response));
  const Frame welcome = *acceptor.on_frame(response.header, response.payload);
  write(frames / "welcome.bin", encode_frame(welcome));
  AcceptorHandshake open_acceptor(open_chief);
  HandshakeConfig open_worker = worker;
  open_worker.secret.clear();
  ConnectorHandshake open_connector(open_worker, {strategy::Role::kChief, 0});
  const Frame open_hello = open_connector.hello();
  write(frames / "hello_open.bin", encode_frame(open_hello));
  write(frames / "welcome_open.bin",
        encode_frame(*open_acceptor.on_frame(open_hello.header, open_hello.payload)));
  write(frames / "goodbye.bin", encode_frame(goodbye_frame(2, "end of run")));
  const float values[] = {1.5f, -2.25f, 3.0f};
  strategy::Message ring = strategy::make_message(strategy::Tag::kRing, 7, 3, values);
  ring.sequence = 12;
  write(frames / "message_ring.bin", message_bytes(ring, 1));
  strategy::Message push = strategy::make_message(strategy::Tag::kToParameterServer, 3, 0, nullptr);
  push.op = 2;
  write(frames / "message_empty.bin", message_bytes(push, 2));
  strategy::Message timing = strategy::make_message(strategy::Tag::kParameters, 9, 4, nullptr);
  timing.version = 41;
  write(frames / "message_no_values.bin", message_bytes(timing, 3));
  const strategy::Message report =
      strategy::text_message(strategy::Tag::kTaskReport, R"({"role": "worker", "index": 1})");
  write(frames / "message_task_report.bin", message_bytes(report, 2));
  const float rate = 0.05f;
  const strategy::Message learning_rate =
      strategy::make_message(strategy::Tag::kLearningRate, 39, 1, &rate);
  write(frames / "message_learning_rate.bin", message_bytes(learning_rate, 1));
  Offer offer{.pid = 4242, .address = 0x7ffd'1234'5678};
  for (std::size_t i = 0; i < offer.probe.size(); ++i) offer.probe[i] = std::byte(i * 13);
  write(frames / "offer.bin", encode_frame(offer_frame(1, offer)));
  write(frames / "answer.bin", encode_frame(answer_frame(2, true)));
  write(frames / "released.bin",
        encode_frame(released_frame(1, {.tag = strategy::Tag::kRing, .sequence = 12})));
  {
    // A ring segment read in place: its header, then its address.
    strategy::Message lent = ring;
    lent.values.assign(4096, 0.5f);
    lent.bytes = 4096 * sizeof(float);
    FrameHeader header = frame_message(lent, 1).header;
    header.flags = kFlagInSenderMemory;
    const auto head = encode_header(header);
    std::vector<std::byte> bytes(head.begin(), head.end());
    const auto address = encode_address(0x7ffd'0000'1000);
    bytes.insert(bytes.end(), address.begin(), address.end());
    write(frames / "message_in_sender_memory.bin", bytes);
  }

  // handshake_fuzz: verify with a right MAC, and frames for both sides.
  const auto handshakes = dir / "handshake_fuzz";
  {
    Nonce nonce;
    for (std::size_t i = 0; i < nonce.size(); ++i) nonce[i] = static_cast<std::byte>(i * 7);
    const Mac mac = handshake_mac(secret_bytes(secret), Prover::kConnector, nonce,
                                  {.connector = 2, .acceptor = 0, .connector_incarnation = 1});
    std::vector<std::byte> in = {std::byte{fuzz::kVerify},
                                 static_cast<std::byte>(secret.size()),
                                 static_cast<std::byte>(kNonceBytes),
                                 std::byte{0},
                                 std::byte{2},
                                 std::byte{0},
                                 std::byte{0},
                                 std::byte{0},
                                 std::byte{0},
                                 std::byte{0},
                                 std::byte{0},
                                 std::byte{0},
                                 std::byte{1},
                                 std::byte{0},
                                 std::byte{0},
                                 std::byte{0}};
    append(in, bytes_of(secret));
    in.insert(in.end(), nonce.begin(), nonce.end());
    in.insert(in.end(), mac.begin(), mac.end());
    write(handshakes / "verify.bin", in);
  }
  const auto peer_input = [&](fuzz::Mode mode, const std::string& key, int self, int target) {
    std::vector<std::byte> in = {static_cast<std::byte>(mode),
                                 static_cast<std::byte>(key.size()),
                                 std::byte{1},
                                 std::byte{2},
                                 std::byte{1},
                                 static_cast<std::byte>(self),
                                 static_cast<std::byte>(target)};
    append(in, bytes_of(key));
    return in;
  };
  // The acceptor (chief, ordinal 0) gets the hello and a response (whose MAC
  // answers another nonce: the fuzzer explores the refusal).
  auto acceptor_in = peer_input(fuzz::kAcceptor, secret, 0, 0);
  append(acceptor_in, encode_frame(hello));
  append(acceptor_in, encode_frame(response));
  write(handshakes / "acceptor.bin", acceptor_in);
  auto open_acceptor_in = peer_input(fuzz::kAcceptor, "", 0, 0);
  append(open_acceptor_in, encode_frame(open_hello));
  write(handshakes / "acceptor_open.bin", open_acceptor_in);
  // The connector (worker:1, ordinal 2) dials the chief and gets its
  // challenge and welcome.
  auto connector_in = peer_input(fuzz::kConnector, secret, 2, 0);
  append(connector_in, encode_frame(challenge));
  append(connector_in, encode_frame(welcome));
  write(handshakes / "connector.bin", connector_in);
  auto refused_in = peer_input(fuzz::kConnector, secret, 2, 0);
  append(refused_in, encode_frame(goodbye_frame(0, "no entry")));
  write(handshakes / "connector_refused.bin", refused_in);
  std::cout << "wrote seeds under " << dir.string() << "\n";
  return 0;
}
