#include "net/wire/handshake.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <climits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace distlab::net {
namespace {

// Domain separation: these MACs serve nothing but this handshake.
constexpr std::string_view kMacLabel = "distlab realnet handshake";

void put_u32(std::vector<std::byte>& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::byte>((value >> (8 * i)) & 0xff));
}

uint32_t get_u32(std::span<const std::byte> in, std::size_t at) {
  uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i) value |= static_cast<uint32_t>(in[at + i]) << (8 * i);
  return value;
}

// The ordinal of `task` in `cluster`, or an Error if it is not one of its
// tasks (ClusterSpec::ordinal does not check).
uint32_t checked_ordinal(const strategy::ClusterSpec& cluster, strategy::TaskId task) {
  const int ordinal = cluster.ordinal(task);
  if (ordinal < 0 || ordinal >= cluster.task_count() || !(cluster.task_at(ordinal) == task)) {
    throw Error("handshake: " + strategy::task_name(task) + " is not a task of the cluster");
  }
  return static_cast<uint32_t>(ordinal);
}

bool is_ordinal(const strategy::ClusterSpec& cluster, uint32_t ordinal) {
  return ordinal < static_cast<uint32_t>(std::max(cluster.task_count(), 0));
}

std::string ordinal_name(const strategy::ClusterSpec& cluster, uint32_t ordinal) {
  if (is_ordinal(cluster, ordinal)) {
    return strategy::task_name(cluster.task_at(static_cast<int>(ordinal)));
  }
  return "task ordinal " + std::to_string(ordinal);
}

std::string shape(uint32_t chiefs, uint32_t workers, uint32_t ps) {
  return std::to_string(chiefs) + " chief + " + std::to_string(workers) + " workers + " +
         std::to_string(ps) + " ps";
}

Frame make_frame(FrameType type, uint32_t sender, uint16_t flags, std::vector<std::byte> payload) {
  Frame frame;
  frame.header.type = type;
  frame.header.sender = sender;
  frame.header.flags = flags;
  frame.header.length = payload.size();
  frame.payload = std::move(payload);
  return frame;
}

std::vector<std::byte> concat(std::span<const std::byte> a, std::span<const std::byte> b) {
  std::vector<std::byte> out(a.begin(), a.end());
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

bool authenticated_frame(const FrameHeader& header) {
  return (header.flags & kFlagAuthenticated) != 0;
}

struct Refusal {
  HandshakeProblem problem;
  std::string what;
};

// What both sides refuse before looking at what a frame says: any frame
// once the handshake has `ended`, a payload of another length than its
// header announces, and a goodbye (the other side gave up).
std::optional<Refusal> refused_on_either_side(bool ended, const FrameHeader& header,
                                              std::span<const std::byte> payload) {
  if (ended) {
    return Refusal{HandshakeProblem::kUnexpectedFrame, "a frame after the handshake ended"};
  }
  if (payload.size() != header.length) {
    return Refusal{HandshakeProblem::kUnexpectedFrame,
                   "a payload of " + std::to_string(payload.size()) +
                       " bytes where the header says " + std::to_string(header.length)};
  }
  if (header.type == FrameType::kGoodbye) {
    return Refusal{HandshakeProblem::kRefused, "refused: " + goodbye_reason(payload)};
  }
  return std::nullopt;
}

}  // namespace

Nonce make_nonce() {
  Nonce nonce;
  if (RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), static_cast<int>(nonce.size())) !=
      1) {
    throw Error("OpenSSL could not draw a random nonce (RAND_bytes failed)");
  }
  return nonce;
}

Mac handshake_mac(std::span<const std::byte> secret, Prover prover, const Nonce& nonce,
                  const HandshakeParties& parties) {
  if (secret.empty()) throw Error("handshake: no cluster secret to compute a MAC with");
  if (secret.size() > static_cast<std::size_t>(INT_MAX)) {
    throw Error("handshake: cluster secret too long");
  }
  std::vector<std::byte> input;
  input.reserve(kMacLabel.size() + 1 + nonce.size() + 14);
  for (const char c : kMacLabel) input.push_back(static_cast<std::byte>(c));
  input.push_back(static_cast<std::byte>(prover));
  input.insert(input.end(), nonce.begin(), nonce.end());
  put_u32(input, parties.connector);
  put_u32(input, parties.acceptor);
  put_u32(input, parties.connector_incarnation);
  input.push_back(static_cast<std::byte>(kProtocolVersion & 0xff));
  input.push_back(static_cast<std::byte>(kProtocolVersion >> 8));

  Mac mac;
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
           reinterpret_cast<const unsigned char*>(input.data()), input.size(),
           reinterpret_cast<unsigned char*>(mac.data()), &length) == nullptr ||
      length != mac.size()) {
    throw Error("OpenSSL failed to compute an HMAC-SHA256");
  }
  return mac;
}

bool verify(std::span<const std::byte> secret, Prover prover, std::span<const std::byte> nonce,
            const HandshakeParties& parties, std::span<const std::byte> mac) {
  if (secret.empty() || secret.size() > static_cast<std::size_t>(INT_MAX) ||
      nonce.size() != kNonceBytes || mac.size() != kMacBytes) {
    return false;
  }
  Nonce fixed;
  std::copy(nonce.begin(), nonce.end(), fixed.begin());
  const Mac expected = handshake_mac(secret, prover, fixed, parties);
  return CRYPTO_memcmp(expected.data(), mac.data(), kMacBytes) == 0;
}

std::span<const std::byte> secret_bytes(const std::string& secret) {
  return std::as_bytes(std::span(secret.data(), secret.size()));
}

void validate_secret(const std::string& secret) {
  if (!secret.empty() && secret.size() < kMinSecretBytes) {
    throw InputError("the cluster secret has " + std::to_string(secret.size()) +
                     " bytes; use at least " + std::to_string(kMinSecretBytes) +
                     " (e.g. openssl rand -hex 32)");
  }
}

// ---------------------------------------------------------------------------
// Connector

ConnectorHandshake::ConnectorHandshake(HandshakeConfig config, strategy::TaskId acceptor)
    : config_(std::move(config)),
      self_(checked_ordinal(config_.cluster, config_.self)),
      acceptor_(checked_ordinal(config_.cluster, acceptor)),
      peer_name_(strategy::task_name(acceptor)) {
  if (self_ == acceptor_) {
    throw Error("handshake: " + peer_name_ + " cannot connect to itself");
  }
}

void ConnectorHandshake::fail(HandshakeProblem problem, const std::string& what) {
  state_ = State::kFailed;
  throw HandshakeError(problem, "handshake with " + peer_name_ + ": " + what);
}

Frame ConnectorHandshake::hello() {
  if (state_ != State::kStart) throw Error("handshake: hello() called out of turn");
  std::vector<std::byte> body;
  body.reserve(kHelloBytes);
  put_u32(body, acceptor_);
  put_u32(body, static_cast<uint32_t>(config_.cluster.chiefs));
  put_u32(body, static_cast<uint32_t>(config_.cluster.workers));
  put_u32(body, static_cast<uint32_t>(config_.cluster.ps));
  put_u32(body, config_.incarnation);
  state_ = authenticated() ? State::kAwaitChallenge : State::kAwaitWelcome;
  return make_frame(FrameType::kHello, self_, authenticated() ? kFlagAuthenticated : 0,
                    std::move(body));
}

std::optional<Frame> ConnectorHandshake::on_frame(const FrameHeader& header,
                                                  std::span<const std::byte> payload) {
  if (state_ == State::kStart) fail(HandshakeProblem::kUnexpectedFrame, "a frame before hello");
  const bool ended = state_ == State::kDone || state_ == State::kFailed;
  if (auto refusal = refused_on_either_side(ended, header, payload)) {
    fail(refusal->problem, refusal->what);
  }
  if (header.sender != acceptor_) {
    fail(HandshakeProblem::kWrongPeer, "the task at its address is " +
                                           ordinal_name(config_.cluster, header.sender) +
                                           " (check the cluster's addresses)");
  }
  const auto secret = secret_bytes(config_.secret);
  if (state_ == State::kAwaitChallenge) {
    if (header.type == FrameType::kWelcome && !authenticated_frame(header)) {
      fail(HandshakeProblem::kSecretMismatch,
           "it welcomed this task without a cluster secret, but this task has one");
    }
    if (header.type != FrameType::kChallenge || payload.size() != kChallengeBytes) {
      fail(HandshakeProblem::kUnexpectedFrame, std::string("a ") + frame_type_name(header.type) +
                                                   " frame of " + std::to_string(payload.size()) +
                                                   " bytes where a challenge was due");
    }
    Nonce challenge;
    std::copy(payload.begin(), payload.end(), challenge.begin());
    nonce_ = make_nonce();
    const Mac answer = handshake_mac(secret, Prover::kConnector, challenge, parties());
    state_ = State::kAwaitWelcome;
    return make_frame(FrameType::kResponse, self_, 0, concat(answer, nonce_));
  }
  // kAwaitWelcome
  if (header.type != FrameType::kWelcome) {
    fail(HandshakeProblem::kUnexpectedFrame,
         std::string("a ") + frame_type_name(header.type) + " frame where a welcome was due");
  }
  if (authenticated_frame(header) != authenticated()) {
    fail(HandshakeProblem::kSecretMismatch,
         authenticated() ? "it welcomed this task without a cluster secret, but this task has one"
                         : "it holds a cluster secret and this task has none");
  }
  if (authenticated()) {
    if (!verify(secret, Prover::kAcceptor, nonce_, parties(), payload)) {
      fail(HandshakeProblem::kBadMac,
           "its answer to this task's challenge is wrong: it does not hold this cluster's secret");
    }
  } else if (!payload.empty()) {
    fail(HandshakeProblem::kUnexpectedFrame, "an unauthenticated welcome with a payload");
  }
  state_ = State::kDone;
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Acceptor

AcceptorHandshake::AcceptorHandshake(HandshakeConfig config)
    : config_(std::move(config)), self_(checked_ordinal(config_.cluster, config_.self)) {}

void AcceptorHandshake::fail(HandshakeProblem problem, const std::string& what) {
  state_ = State::kFailed;
  const std::string peer =
      connector_ ? ordinal_name(config_.cluster, *connector_) : std::string("a connecting task");
  throw HandshakeError(problem, "handshake with " + peer + ": " + what);
}

std::optional<strategy::TaskId> AcceptorHandshake::peer() const {
  if (state_ != State::kDone || !connector_) return std::nullopt;
  return config_.cluster.task_at(static_cast<int>(*connector_));
}

std::optional<Frame> AcceptorHandshake::on_frame(const FrameHeader& header,
                                                 std::span<const std::byte> payload) {
  const bool ended = state_ == State::kDone || state_ == State::kFailed;
  if (auto refusal = refused_on_either_side(ended, header, payload)) {
    fail(refusal->problem, refusal->what);
  }
  const auto secret = secret_bytes(config_.secret);
  if (state_ == State::kAwaitHello) {
    if (header.type != FrameType::kHello || payload.size() != kHelloBytes) {
      fail(HandshakeProblem::kUnexpectedFrame, std::string("a ") + frame_type_name(header.type) +
                                                   " frame of " + std::to_string(payload.size()) +
                                                   " bytes where a hello was due");
    }
    const uint32_t target = get_u32(payload, 0);
    const uint32_t chiefs = get_u32(payload, 4);
    const uint32_t workers = get_u32(payload, 8);
    const uint32_t ps = get_u32(payload, 12);
    const uint32_t incarnation = get_u32(payload, 16);
    const auto& cluster = config_.cluster;
    if (chiefs != static_cast<uint32_t>(cluster.chiefs) ||
        workers != static_cast<uint32_t>(cluster.workers) ||
        ps != static_cast<uint32_t>(cluster.ps)) {
      fail(HandshakeProblem::kClusterMismatch,
           "its cluster is " + shape(chiefs, workers, ps) + ", this task's is " +
               shape(cluster.chiefs, cluster.workers, cluster.ps));
    }
    if (!is_ordinal(cluster, header.sender)) {
      fail(HandshakeProblem::kWrongPeer,
           "it claims " + ordinal_name(cluster, header.sender) + ", outside the cluster");
    }
    if (header.sender == self_) {
      fail(HandshakeProblem::kWrongPeer,
           "it claims to be " + ordinal_name(cluster, self_) + ", this very task");
    }
    if (target != self_) {
      fail(HandshakeProblem::kWrongPeer, "it means to reach " + ordinal_name(cluster, target) +
                                             ", but this is " + ordinal_name(cluster, self_) +
                                             " (check the cluster's addresses)");
    }
    if (authenticated_frame(header) != authenticated()) {
      fail(HandshakeProblem::kSecretMismatch,
           authenticated() ? "it has no cluster secret, and this task requires one"
                           : "it holds a cluster secret and this task has none");
    }
    connector_ = header.sender;
    connector_incarnation_ = incarnation;
    if (!authenticated()) {
      state_ = State::kDone;
      return make_frame(FrameType::kWelcome, self_, 0, {});
    }
    nonce_ = make_nonce();
    state_ = State::kAwaitResponse;
    return make_frame(FrameType::kChallenge, self_, 0,
                      std::vector<std::byte>(nonce_.begin(), nonce_.end()));
  }
  // kAwaitResponse
  if (header.type != FrameType::kResponse || payload.size() != kResponseBytes) {
    fail(HandshakeProblem::kUnexpectedFrame, std::string("a ") + frame_type_name(header.type) +
                                                 " frame of " + std::to_string(payload.size()) +
                                                 " bytes where a response was due");
  }
  if (header.sender != *connector_) {
    fail(HandshakeProblem::kWrongPeer,
         "its response comes from " + ordinal_name(config_.cluster, header.sender));
  }
  if (!verify(secret, Prover::kConnector, nonce_, parties(), payload.first(kMacBytes))) {
    fail(HandshakeProblem::kBadMac,
         "its answer to the challenge is wrong: it does not hold this cluster's secret");
  }
  Nonce theirs;
  const auto their_nonce = payload.subspan(kMacBytes, kNonceBytes);
  std::copy(their_nonce.begin(), their_nonce.end(), theirs.begin());
  const Mac answer = handshake_mac(secret, Prover::kAcceptor, theirs, parties());
  state_ = State::kDone;
  return make_frame(FrameType::kWelcome, self_, kFlagAuthenticated,
                    std::vector<std::byte>(answer.begin(), answer.end()));
}

}  // namespace distlab::net
