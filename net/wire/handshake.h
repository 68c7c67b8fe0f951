// The first frames of every realnet connection: who is on either end, and,
// with a shared cluster secret, proof that both hold it. Pure code over
// frames and bytes (HMAC-SHA256 and random nonces from OpenSSL); the TCP
// layer only carries the frames it returns.
//
// Roles: the connector is the task that dialled, the acceptor the task that
// listened. Ordinals are ClusterSpec::ordinal values.
//
// With a secret (mutual challenge-response, 4 frames):
//
//   connector                                    acceptor
//   HELLO     [authenticated] sender = c,
//             body: acceptor ordinal a it means
//             to reach, its cluster shape, its
//             incarnation Ic                  -->
//                                                 checks a, the cluster shape,
//                                                 that c is another task and
//                                                 that both hold a secret
//                                             <-- CHALLENGE  sender = a, body: Na
//                                                 (32 random bytes)
//   checks the sender is a
//   RESPONSE  body: Mc = HMAC(secret, "C" ...Na..), then Nc
//             (32 random bytes of its own)    -->
//                                                 verifies Mc (constant time)
//                                             <-- WELCOME [authenticated]
//                                                 sender = a, body:
//                                                 Ma = HMAC(secret, "A" ...Nc..)
//   verifies Ma: connected.                       connected.
//
// where the MAC input (see handshake_mac) is a fixed label, the prover's
// role ("C" connector, "A" acceptor), the challenge nonce, then the
// connector's and the acceptor's ordinals (u32), the connector's
// incarnation Ic (u32) and kProtocolVersion (u16), all little-endian. The
// role byte keeps a task's answer as acceptor from serving as its answer as
// connector (a reflection attack); the ordinals keep an answer for one pair
// of tasks from serving another. The acceptor proves nothing before the
// connector has: it is no oracle for strangers.
//
// The incarnation (the connector's life: 0 until it is restarted after a
// failure) tells a restarted task's acceptor whether a connection comes
// from a newer life of its peer or is a dial retrying from a life it has
// already met (TcpRuntime::is_stale_dial).
//
// Without a secret (identity only, 2 frames): HELLO (not authenticated)
// -->, <-- WELCOME (not authenticated, no body). A task with a secret refuses
// a peer without one and the reverse, so a cluster cannot half-authenticate.
//
// Either side may send a GOODBYE instead of its next frame, with a reason
// (goodbye_frame): on a HandshakeError the TCP layer sends one and closes.
// A GOODBYE received ends the handshake with HandshakeProblem::kRefused and
// the peer's reason. Any other frame out of order is kUnexpectedFrame; no
// MESSAGE frame is accepted before the handshake is done.
//
// What the TCP layer must add: a deadline on every read of the handshake (a
// peer that never answers), decode_header on every frame before on_frame,
// and the refusal to listen on anything but loopback without a secret: the
// handshake without one proves no identity, so it is only for tasks on one
// machine. With one, the handshake authenticates the start of the
// connection only: the frames after it are neither signed nor encrypted,
// so someone who can rewrite the TCP stream can still take it over. Use a
// private network (a VPC, a VPN) across machines.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "common/error.h"
#include "net/wire/frame.h"
#include "strategy/task.h"

namespace distlab::net {

inline constexpr std::size_t kNonceBytes = 32;
inline constexpr std::size_t kMacBytes = 32;  // HMAC-SHA256
// The shortest secret validate_secret accepts.
inline constexpr std::size_t kMinSecretBytes = 16;
using Nonce = std::array<std::byte, kNonceBytes>;
using Mac = std::array<std::byte, kMacBytes>;

// Which side of a connection a MAC proves.
enum class Prover : uint8_t {
  kConnector = 'C',
  kAcceptor = 'A',
};

// 32 bytes from OpenSSL's RAND_bytes. Throws Error if it fails.
Nonce make_nonce();

// The two ends of one connection as the MAC binds them: ordinals, and the
// connector's incarnation.
struct HandshakeParties {
  uint32_t connector = 0;
  uint32_t acceptor = 0;
  uint32_t connector_incarnation = 0;
};

// HMAC-SHA256(secret, label || prover || nonce || connector || acceptor ||
// connector_incarnation || kProtocolVersion). Throws Error for an empty
// secret (there is nothing to prove without one) or if OpenSSL fails.
Mac handshake_mac(std::span<const std::byte> secret, Prover prover, const Nonce& nonce,
                  const HandshakeParties& parties);

// Whether `mac` is handshake_mac(secret, prover, nonce, parties), compared
// in constant time (CRYPTO_memcmp). False, never an exception, for an empty
// secret or a nonce or MAC of the wrong size.
bool verify(std::span<const std::byte> secret, Prover prover, std::span<const std::byte> nonce,
            const HandshakeParties& parties, std::span<const std::byte> mac);

// The secret's bytes.
std::span<const std::byte> secret_bytes(const std::string& secret);
// Throws InputError for a secret that is not empty but shorter than
// kMinSecretBytes: what the command line checks before it starts.
void validate_secret(const std::string& secret);

enum class HandshakeProblem {
  kUnexpectedFrame,  // a frame out of order, or a payload of the wrong size
  kWrongPeer,        // the peer is not the task expected (or claims to be this task)
  kClusterMismatch,  // the peer runs another cluster shape
  kSecretMismatch,   // one side has a cluster secret and the other has not
  kBadMac,           // the peer does not hold this cluster's secret
  kRefused,          // the peer sent a goodbye
};

// what() names the peer where it is known: "handshake with worker:1: ...".
class HandshakeError : public Error {
 public:
  HandshakeError(HandshakeProblem problem, const std::string& what)
      : Error(what), problem_(problem) {}
  HandshakeProblem problem() const { return problem_; }

 private:
  HandshakeProblem problem_;
};

struct HandshakeConfig {
  std::string secret;  // empty: no authentication (loopback only)
  strategy::ClusterSpec cluster;
  strategy::TaskId self;
  uint32_t incarnation = 0;  // this task's life: 0 until it is restarted
};

// The dialling side. Call hello() once, write its frame, then pass every
// frame read to on_frame and write what it returns, until done().
class ConnectorHandshake {
 public:
  // Throws Error if `self` or `acceptor` is not a task of the cluster, or
  // they are the same task.
  ConnectorHandshake(HandshakeConfig config, strategy::TaskId acceptor);

  Frame hello();
  // The next frame to send, if any. Throws HandshakeError.
  std::optional<Frame> on_frame(const FrameHeader& header, std::span<const std::byte> payload);
  bool done() const { return state_ == State::kDone; }
  bool authenticated() const { return !config_.secret.empty(); }

 private:
  enum class State { kStart, kAwaitChallenge, kAwaitWelcome, kDone, kFailed };
  [[noreturn]] void fail(HandshakeProblem problem, const std::string& what);
  HandshakeParties parties() const { return {self_, acceptor_, config_.incarnation}; }

  HandshakeConfig config_;
  uint32_t self_;
  uint32_t acceptor_;
  std::string peer_name_;
  State state_ = State::kStart;
  Nonce nonce_{};  // Nc, sent in the response
};

// The listening side, one per accepted connection. Pass every frame read to
// on_frame and write what it returns, until done(); peer() is then the
// connector's task, and every later frame must carry its ordinal as sender.
class AcceptorHandshake {
 public:
  // Throws Error if `self` is not a task of the cluster.
  explicit AcceptorHandshake(HandshakeConfig config);

  std::optional<Frame> on_frame(const FrameHeader& header, std::span<const std::byte> payload);
  bool done() const { return state_ == State::kDone; }
  bool authenticated() const { return !config_.secret.empty(); }
  // The connector, once the handshake is done (nullopt before).
  std::optional<strategy::TaskId> peer() const;
  // The connector's incarnation, as its hello said (0 before the hello).
  uint32_t peer_incarnation() const { return connector_incarnation_; }

 private:
  enum class State { kAwaitHello, kAwaitResponse, kDone, kFailed };
  [[noreturn]] void fail(HandshakeProblem problem, const std::string& what);
  // Once the hello is in.
  HandshakeParties parties() const { return {*connector_, self_, connector_incarnation_}; }

  HandshakeConfig config_;
  uint32_t self_;
  std::optional<uint32_t> connector_;
  uint32_t connector_incarnation_ = 0;
  State state_ = State::kAwaitHello;
  Nonce nonce_{};  // Na, sent in the challenge
};

}  // namespace distlab::net
