// libFuzzer target: arbitrary bytes into the handshake (input format in
// handshake_input.h). verify() must answer false or true, never crash or
// throw, and must accept exactly the MAC handshake_mac computes; the
// acceptor's and the connector's state machines, fed arbitrary frames, must
// either go on or stop with a HandshakeError or a FrameError. Any other
// exception, a sanitizer report or a trap is a finding.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "net/wire/fuzz/handshake_input.h"
#include "net/wire/handshake.h"

using namespace distlab::net;
namespace strategy = distlab::strategy;

namespace {

uint32_t u32_at(std::span<const std::byte> in, std::size_t at) {
  uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i) value |= static_cast<uint32_t>(in[at + i]) << (8 * i);
  return value;
}

std::span<const std::byte> take(std::span<const std::byte>& in, std::size_t n) {
  const auto part = in.first(std::min(n, in.size()));
  in = in.subspan(part.size());
  return part;
}

void fuzz_verify(std::span<const std::byte> in) {
  if (in.size() < fuzz::kVerifyPreamble) return;
  const auto secret_size = static_cast<std::size_t>(in[1]);
  const auto nonce_size = static_cast<std::size_t>(in[2]);
  const Prover prover =
      (static_cast<unsigned>(in[3]) % 2 == 0) ? Prover::kConnector : Prover::kAcceptor;
  const HandshakeParties parties{.connector = u32_at(in, 4),
                                 .acceptor = u32_at(in, 8),
                                 .connector_incarnation = u32_at(in, 12)};
  auto rest = in.subspan(fuzz::kVerifyPreamble);
  const auto secret = take(rest, secret_size);
  const auto nonce = take(rest, nonce_size);
  const auto mac = rest;
  const bool accepted = verify(secret, prover, nonce, parties, mac);
  if (accepted && (secret.empty() || nonce.size() != kNonceBytes || mac.size() != kMacBytes)) {
    __builtin_trap();
  }
  if (secret.empty() || nonce.size() != kNonceBytes) return;
  Nonce fixed;
  std::copy(nonce.begin(), nonce.end(), fixed.begin());
  const Mac right = handshake_mac(secret, prover, fixed, parties);
  if (!verify(secret, prover, nonce, parties, right)) __builtin_trap();
  if (mac.size() == kMacBytes && accepted != std::equal(right.begin(), right.end(), mac.begin())) {
    __builtin_trap();
  }
  const Prover other = prover == Prover::kConnector ? Prover::kAcceptor : Prover::kConnector;
  if (verify(secret, other, nonce, parties, right)) __builtin_trap();
}

// Feeds the frames of `rest` to `on_frame` until the input ends, the
// handshake fails or it is done.
template <typename Handshake>
void feed(Handshake& handshake, std::span<const std::byte> rest) {
  while (!rest.empty() && !handshake.done()) {
    FrameHeader header;
    try {
      header = decode_header(take(rest, kHeaderBytes));
    } catch (const FrameError&) {
      return;
    }
    const auto payload = take(rest, static_cast<std::size_t>(header.length));
    try {
      const std::optional<Frame> reply = handshake.on_frame(header, payload);
      if (reply) encode_frame(*reply);  // what it sends must be a valid frame
    } catch (const HandshakeError&) {
      return;
    }
  }
}

void fuzz_peer(std::span<const std::byte> in, bool acceptor_side) {
  if (in.size() < fuzz::kPeerPreamble) return;
  const auto secret_size = static_cast<std::size_t>(in[1]);
  const strategy::ClusterSpec cluster{.chiefs = static_cast<int>(in[2]) % 2,
                                      .workers = static_cast<int>(in[3]) % 5,
                                      .ps = static_cast<int>(in[4]) % 3};
  if (cluster.task_count() < 2) return;
  const int self = static_cast<int>(in[5]) % cluster.task_count();
  const int acceptor = static_cast<int>(in[6]) % cluster.task_count();
  auto rest = in.subspan(fuzz::kPeerPreamble);
  const auto secret = take(rest, secret_size);
  HandshakeConfig config{
      .secret = std::string(reinterpret_cast<const char*>(secret.data()), secret.size()),
      .cluster = cluster,
      .self = cluster.task_at(self)};
  if (acceptor_side) {
    AcceptorHandshake handshake(config);
    feed(handshake, rest);
    if (handshake.done() && !handshake.peer()) __builtin_trap();
  } else {
    if (acceptor == self) return;
    ConnectorHandshake handshake(config, cluster.task_at(acceptor));
    encode_frame(handshake.hello());
    feed(handshake, rest);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto in = std::as_bytes(std::span(data, size));
  if (in.empty()) return 0;
  switch (static_cast<unsigned>(in[0]) % 3) {
    case fuzz::kVerify:
      fuzz_verify(in);
      break;
    case fuzz::kAcceptor:
      fuzz_peer(in, true);
      break;
    case fuzz::kConnector:
      fuzz_peer(in, false);
      break;
  }
  return 0;
}
