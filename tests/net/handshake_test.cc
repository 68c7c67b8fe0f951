// The handshake of ./realnet: the MAC is HMAC-SHA256 over the documented
// input, it verifies only for the right secret, nonce, ordinals and role, and
// the two state machines, run against each other in memory through encoded
// frames, connect the right tasks and refuse everything else with a reason.
#include "net/wire/handshake.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

using namespace distlab::net;
using distlab::strategy::ClusterSpec;
using distlab::strategy::Role;
using distlab::strategy::TaskId;

namespace {

const std::string kSecret = "correct horse battery staple";
const ClusterSpec kCluster{
    .chiefs = 1, .workers = 2, .ps = 1};  // ordinals: chief 0, workers 1-2, ps 3
const TaskId kChief{Role::kChief, 0};
const TaskId kWorker1{Role::kWorker, 1};
const TaskId kPs{Role::kPs, 0};
// worker:1 (ordinal 2) dialling the chief (ordinal 0), in its first life.
constexpr HandshakeParties kPair{.connector = 2, .acceptor = 0};

std::string hex(std::span<const std::byte> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (const std::byte b : bytes) {
    out += kDigits[std::to_integer<int>(b) >> 4];
    out += kDigits[std::to_integer<int>(b) & 15];
  }
  return out;
}

Nonce counting_nonce() {
  Nonce nonce;
  for (std::size_t i = 0; i < nonce.size(); ++i) nonce[i] = static_cast<std::byte>(i);
  return nonce;
}

HandshakeConfig config(TaskId self, std::string secret = kSecret, ClusterSpec cluster = kCluster) {
  return {.secret = std::move(secret), .cluster = cluster, .self = self};
}

// A frame as the peer receives it: encoded to bytes, then decoded, as the
// TCP layer will.
struct Received {
  FrameHeader header;
  std::vector<std::byte> payload;
};

Received over_the_wire(const Frame& frame) {
  const std::vector<std::byte> bytes = encode_frame(frame);
  Received received;
  received.header = decode_header(bytes);
  received.payload.assign(bytes.begin() + kHeaderBytes, bytes.end());
  REQUIRE(received.payload.size() == received.header.length);
  return received;
}

std::optional<Frame> deliver(ConnectorHandshake& to, const Frame& frame) {
  const Received r = over_the_wire(frame);
  return to.on_frame(r.header, r.payload);
}

std::optional<Frame> deliver(AcceptorHandshake& to, const Frame& frame) {
  const Received r = over_the_wire(frame);
  return to.on_frame(r.header, r.payload);
}

// Runs `call`, which must throw a HandshakeError of `problem` whose what()
// contains `words`.
template <typename Call>
void require_problem(Call&& call, HandshakeProblem problem, const std::string& words) {
  try {
    call();
    FAIL("no HandshakeError; expected one containing: " << words);
  } catch (const HandshakeError& e) {
    CHECK(e.problem() == problem);
    CHECK_THAT(e.what(), Catch::Contains(words));
  }
}

}  // namespace

TEST_CASE("nonces are 32 random bytes, different every time") {
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) seen.insert(hex(make_nonce()));
  CHECK(seen.size() == 200);
  CHECK_FALSE(seen.contains(std::string(64, '0')));
}

TEST_CASE("the MAC is HMAC-SHA256 over the documented input") {
  // Computed independently with Python's hmac module:
  // hmac.new(secret, b"distlab realnet handshake" + b"C" + bytes(range(32))
  //          + struct.pack("<IIIH", 2, 0, 1, 6), hashlib.sha256)
  // (connector 2, acceptor 0, the connector's incarnation 1, then the
  // protocol version, 6)
  const auto secret = secret_bytes(kSecret);
  const HandshakeParties parties{.connector = 2, .acceptor = 0, .connector_incarnation = 1};
  CHECK(hex(handshake_mac(secret, Prover::kConnector, counting_nonce(), parties)) ==
        "039736a3f6fddc84d0aca734130e354fe3476e16dd66600577bdfd91fe48747a");
  CHECK(hex(handshake_mac(secret, Prover::kAcceptor, counting_nonce(), parties)) ==
        "6e2c1c754756af9491368b50c902713d5fbb9fefe4d795d90115a58dad9cf169");
  CHECK_THROWS_AS(handshake_mac({}, Prover::kConnector, counting_nonce(), parties), distlab::Error);
}

TEST_CASE("a MAC verifies for its secret, nonce, ordinals, incarnation and role only") {
  const auto secret = secret_bytes(kSecret);
  const Nonce nonce = make_nonce();
  const Mac mac = handshake_mac(secret, Prover::kConnector, nonce, kPair);
  CHECK(verify(secret, Prover::kConnector, nonce, kPair, mac));

  const std::string other_secret = kSecret + "!";
  CHECK_FALSE(verify(secret_bytes(other_secret), Prover::kConnector, nonce, kPair, mac));
  Nonce other_nonce = nonce;
  other_nonce[31] ^= std::byte{1};
  CHECK_FALSE(verify(secret, Prover::kConnector, other_nonce, kPair, mac));
  CHECK_FALSE(
      verify(secret, Prover::kConnector, nonce, {.connector = 0, .acceptor = 2}, mac));  // swapped
  CHECK_FALSE(verify(secret, Prover::kConnector, nonce, {.connector = 3, .acceptor = 0}, mac));
  CHECK_FALSE(verify(secret, Prover::kConnector, nonce, {.connector = 2, .acceptor = 1}, mac));
  // Another life of the same connector.
  CHECK_FALSE(verify(secret, Prover::kConnector, nonce,
                     {.connector = 2, .acceptor = 0, .connector_incarnation = 1}, mac));
  CHECK_FALSE(verify(secret, Prover::kAcceptor, nonce, kPair, mac));  // reflected
  for (std::size_t i = 0; i < mac.size(); ++i) {
    Mac flipped = mac;
    flipped[i] ^= std::byte{0x80};
    CHECK_FALSE(verify(secret, Prover::kConnector, nonce, kPair, flipped));
  }
  // Wrong sizes and no secret: false, no exception.
  CHECK_FALSE(verify(secret, Prover::kConnector, nonce, kPair, std::span(mac).first(31)));
  CHECK_FALSE(verify(secret, Prover::kConnector, std::span(nonce).first(16), kPair, mac));
  CHECK_FALSE(verify({}, Prover::kConnector, nonce, kPair, mac));
  CHECK_FALSE(verify(secret, Prover::kConnector, nonce, kPair, {}));
}

TEST_CASE("a cluster secret is either absent or long enough") {
  CHECK_NOTHROW(validate_secret(""));
  CHECK_NOTHROW(validate_secret(std::string(kMinSecretBytes, 'k')));
  CHECK_THROWS_AS(validate_secret("hunter2"), distlab::InputError);
  CHECK_THROWS_WITH(validate_secret(std::string(kMinSecretBytes - 1, 'k')),
                    Catch::Contains("use at least 16"));
}

TEST_CASE("with a secret, four frames authenticate both sides") {
  ConnectorHandshake connector(config(kWorker1), kChief);
  AcceptorHandshake acceptor(config(kChief));
  CHECK(connector.authenticated());

  const Frame hello = connector.hello();
  CHECK(hello.header.type == FrameType::kHello);
  CHECK(hello.header.flags == kFlagAuthenticated);
  CHECK(hello.header.sender == 2);
  const auto challenge = deliver(acceptor, hello);
  REQUIRE(challenge);
  CHECK(challenge->header.type == FrameType::kChallenge);
  CHECK(challenge->header.sender == 0);
  CHECK_FALSE(acceptor.done());
  CHECK_FALSE(acceptor.peer());  // not before the connector has proved itself

  const auto response = deliver(connector, *challenge);
  REQUIRE(response);
  CHECK(response->header.type == FrameType::kResponse);
  CHECK_FALSE(connector.done());

  const auto welcome = deliver(acceptor, *response);
  REQUIRE(welcome);
  CHECK(welcome->header.type == FrameType::kWelcome);
  CHECK(welcome->header.flags == kFlagAuthenticated);
  CHECK(acceptor.done());
  CHECK(acceptor.peer() == kWorker1);

  CHECK_FALSE(deliver(connector, *welcome));
  CHECK(connector.done());

  // The response answered this challenge: its MAC is the documented one.
  const auto answer = std::span(response->payload).first(kMacBytes);
  CHECK(verify(secret_bytes(kSecret), Prover::kConnector, challenge->payload, kPair, answer));
}

TEST_CASE("the acceptor learns the connector's incarnation, which the MAC binds") {
  HandshakeConfig restarted = config(kWorker1);
  restarted.incarnation = 3;
  SECTION("with a secret") {
    ConnectorHandshake connector(restarted, kChief);
    AcceptorHandshake acceptor(config(kChief));
    const auto challenge = deliver(acceptor, connector.hello());
    REQUIRE(deliver(acceptor, *deliver(connector, *challenge)));
    CHECK(acceptor.done());
    CHECK(acceptor.peer_incarnation() == 3);
  }
  SECTION("without one") {
    restarted.secret.clear();
    ConnectorHandshake connector(restarted, kChief);
    AcceptorHandshake acceptor(config(kChief, ""));
    REQUIRE(deliver(acceptor, connector.hello()));
    CHECK(acceptor.done());
    CHECK(acceptor.peer_incarnation() == 3);
  }
  SECTION("a hello whose incarnation was rewritten on the way fails the response") {
    ConnectorHandshake connector(restarted, kChief);
    AcceptorHandshake acceptor(config(kChief));
    Frame hello = connector.hello();
    hello.payload[16] = std::byte{0};  // the incarnation's low byte: an earlier life
    const auto challenge = deliver(acceptor, hello);
    require_problem([&] { deliver(acceptor, *deliver(connector, *challenge)); },
                    HandshakeProblem::kBadMac, "wrong");
  }
}

TEST_CASE("without a secret, hello and welcome carry identities only") {
  ConnectorHandshake connector(config(kPs, ""), kWorker1);
  AcceptorHandshake acceptor(config(kWorker1, ""));
  const Frame hello = connector.hello();
  CHECK(hello.header.flags == 0);
  const auto welcome = deliver(acceptor, hello);
  REQUIRE(welcome);
  CHECK(welcome->header.type == FrameType::kWelcome);
  CHECK(welcome->payload.empty());
  CHECK(acceptor.done());
  CHECK(acceptor.peer() == kPs);
  CHECK_FALSE(deliver(connector, *welcome));
  CHECK(connector.done());
  CHECK_FALSE(connector.authenticated());
}

TEST_CASE("a connector with the wrong secret is refused by the acceptor") {
  ConnectorHandshake connector(config(kWorker1, "not the cluster's secret"), kChief);
  AcceptorHandshake acceptor(config(kChief));
  const auto challenge = deliver(acceptor, connector.hello());
  REQUIRE(challenge);
  const auto response = deliver(connector, *challenge);
  REQUIRE(response);
  require_problem([&] { deliver(acceptor, *response); }, HandshakeProblem::kBadMac,
                  "handshake with worker:1: its answer to the challenge is wrong");
  CHECK_FALSE(acceptor.done());
  CHECK_FALSE(acceptor.peer());
  // A failed handshake stays failed.
  require_problem([&] { deliver(acceptor, *response); }, HandshakeProblem::kUnexpectedFrame,
                  "after the handshake ended");
}

TEST_CASE("an acceptor that does not hold the secret is refused by the connector") {
  ConnectorHandshake connector(config(kWorker1), kChief);
  AcceptorHandshake acceptor(config(kChief));
  const auto challenge = deliver(acceptor, connector.hello());
  const auto response = deliver(connector, *challenge);
  const auto welcome = deliver(acceptor, *response);
  REQUIRE(welcome);
  // An impostor answers with another secret's MAC over the connector's nonce.
  Frame forged = *welcome;
  Nonce nonce;
  std::copy_n(response->payload.begin() + kMacBytes, kNonceBytes, nonce.begin());
  const std::string wrong = "another secret entirely";
  const Mac mac = handshake_mac(secret_bytes(wrong), Prover::kAcceptor, nonce, kPair);
  forged.payload.assign(mac.begin(), mac.end());
  require_problem([&] { deliver(connector, forged); }, HandshakeProblem::kBadMac,
                  "handshake with chief:0: its answer to this task's challenge is wrong");
  CHECK_FALSE(connector.done());
}

TEST_CASE("a response cannot be replayed, reflected or moved to another pair of tasks") {
  ConnectorHandshake connector(config(kWorker1), kChief);
  AcceptorHandshake first(config(kChief));
  const Frame hello = connector.hello();
  const auto challenge = deliver(first, hello);
  const auto response = deliver(connector, *challenge);
  REQUIRE(deliver(first, *response));
  REQUIRE(first.done());

  SECTION("replayed to a new session, with a fresh challenge") {
    AcceptorHandshake second(config(kChief));
    REQUIRE(deliver(second, hello));
    require_problem([&] { deliver(second, *response); }, HandshakeProblem::kBadMac, "wrong");
  }
  SECTION("the acceptor's own answer reflected as a response") {
    // A stranger claims to be worker:1, gets the chief's challenge Na, opens a
    // second connection claiming to be the chief's connector with Na as its
    // own nonce... The acceptor's MACs are made for role "A" and never pass
    // as a connector's.
    AcceptorHandshake victim(config(kChief));
    const auto challenge2 = deliver(victim, hello);
    REQUIRE(challenge2);
    Nonce na;
    std::copy(challenge2->payload.begin(), challenge2->payload.end(), na.begin());
    const Mac acceptor_answer = handshake_mac(secret_bytes(kSecret), Prover::kAcceptor, na, kPair);
    Frame reflected = *response;
    std::copy(acceptor_answer.begin(), acceptor_answer.end(), reflected.payload.begin());
    require_problem([&] { deliver(victim, reflected); }, HandshakeProblem::kBadMac, "wrong");
  }
}

TEST_CASE("a task with a secret and a task without refuse each other") {
  SECTION("the acceptor has one, the connector not") {
    ConnectorHandshake connector(config(kWorker1, ""), kChief);
    AcceptorHandshake acceptor(config(kChief));
    require_problem([&] { deliver(acceptor, connector.hello()); },
                    HandshakeProblem::kSecretMismatch, "it has no cluster secret");
  }
  SECTION("the connector has one, the acceptor not") {
    ConnectorHandshake connector(config(kWorker1), kChief);
    AcceptorHandshake acceptor(config(kChief, ""));
    require_problem([&] { deliver(acceptor, connector.hello()); },
                    HandshakeProblem::kSecretMismatch, "this task has none");
  }
  SECTION("the connector has one and is welcomed without") {
    ConnectorHandshake connector(config(kWorker1), kChief);
    ConnectorHandshake open(config(kWorker1, ""), kChief);
    AcceptorHandshake acceptor(config(kChief, ""));
    connector.hello();
    const auto welcome = deliver(acceptor, open.hello());
    REQUIRE(welcome);
    require_problem([&] { deliver(connector, *welcome); }, HandshakeProblem::kSecretMismatch,
                    "without a cluster secret");
  }
}

TEST_CASE("the acceptor refuses a hello for the wrong task or cluster") {
  SECTION("meant for another task: the addresses are mixed up") {
    ConnectorHandshake connector(config(kWorker1), kPs);
    AcceptorHandshake acceptor(config(kChief));
    require_problem([&] { deliver(acceptor, connector.hello()); }, HandshakeProblem::kWrongPeer,
                    "it means to reach ps:0, but this is chief:0");
  }
  SECTION("another cluster shape") {
    ConnectorHandshake connector(config(kWorker1, kSecret, {.chiefs = 1, .workers = 3, .ps = 1}),
                                 kChief);
    AcceptorHandshake acceptor(config(kChief));
    require_problem([&] { deliver(acceptor, connector.hello()); },
                    HandshakeProblem::kClusterMismatch,
                    "its cluster is 1 chief + 3 workers + 1 ps, this task's is 1 chief + 2 "
                    "workers + 1 ps");
  }
  SECTION("a sender outside the cluster, or this very task") {
    ConnectorHandshake connector(config(kWorker1), kChief);
    Frame hello = connector.hello();
    hello.header.sender = 4;
    AcceptorHandshake acceptor(config(kChief));
    require_problem([&] { deliver(acceptor, hello); }, HandshakeProblem::kWrongPeer,
                    "task ordinal 4, outside the cluster");
    hello.header.sender = 0;
    AcceptorHandshake again(config(kChief));
    require_problem([&] { deliver(again, hello); }, HandshakeProblem::kWrongPeer, "this very task");
  }
}

TEST_CASE("the connector refuses frames from a task it did not dial") {
  ConnectorHandshake connector(config(kWorker1), kChief);
  AcceptorHandshake ps(config(kPs));
  Frame hello = connector.hello();
  // The ps answers as itself (its hello check is bypassed here).
  Frame challenge;
  challenge.header.type = FrameType::kChallenge;
  challenge.header.sender = 3;
  challenge.header.length = kChallengeBytes;
  challenge.payload.resize(kChallengeBytes);
  require_problem([&] { deliver(connector, challenge); }, HandshakeProblem::kWrongPeer,
                  "the task at its address is ps:0");
  CHECK_THROWS_AS(deliver(ps, hello), HandshakeError);  // meant for chief:0
}

TEST_CASE("frames out of order, goodbyes and messages end the handshake") {
  SECTION("a goodbye carries the peer's reason") {
    ConnectorHandshake connector(config(kWorker1), kChief);
    connector.hello();
    require_problem([&] { deliver(connector, goodbye_frame(0, "too many connections")); },
                    HandshakeProblem::kRefused, "refused: too many connections");
  }
  SECTION("a message before the handshake is done") {
    AcceptorHandshake acceptor(config(kChief));
    Frame message;
    message.header.type = FrameType::kMessage;
    message.header.tag = distlab::strategy::Tag::kRing;
    message.header.sender = 2;
    require_problem([&] { deliver(acceptor, message); }, HandshakeProblem::kUnexpectedFrame,
                    "a message frame of 0 bytes where a hello was due");
  }
  SECTION("a response where a hello was due, a hello where a welcome was") {
    ConnectorHandshake connector(config(kWorker1), kChief);
    const Frame hello = connector.hello();
    AcceptorHandshake acceptor(config(kChief));
    const auto challenge = deliver(acceptor, hello);
    const auto response = deliver(connector, *challenge);
    AcceptorHandshake fresh(config(kChief));
    require_problem([&] { deliver(fresh, *response); }, HandshakeProblem::kUnexpectedFrame,
                    "where a hello was due");
    Frame impostor = hello;
    impostor.header.sender = 0;  // from the chief, as the connector expects
    require_problem([&] { deliver(connector, impostor); }, HandshakeProblem::kUnexpectedFrame,
                    "where a welcome was due");
  }
  SECTION("a frame before hello() or after the end") {
    ConnectorHandshake connector(config(kWorker1, ""), kChief);
    const Frame goodbye = goodbye_frame(0, "");
    require_problem([&] { deliver(connector, goodbye); }, HandshakeProblem::kUnexpectedFrame,
                    "before hello");
    CHECK_THROWS_WITH(connector.hello(), Catch::Contains("out of turn"));  // failed for good
  }
  SECTION("a payload that does not match its header") {
    AcceptorHandshake acceptor(config(kChief));
    ConnectorHandshake connector(config(kWorker1), kChief);
    const Frame hello = connector.hello();
    const std::span<const std::byte> short_body = std::span(hello.payload).first(8);
    require_problem([&] { acceptor.on_frame(hello.header, short_body); },
                    HandshakeProblem::kUnexpectedFrame, "a payload of 8 bytes where the header");
  }
}

TEST_CASE("handshakes are built only for tasks of the cluster") {
  CHECK_THROWS_AS(AcceptorHandshake(config({Role::kWorker, 2})), distlab::Error);
  CHECK_THROWS_AS(AcceptorHandshake(config({Role::kPs, 1})), distlab::Error);
  CHECK_THROWS_AS(ConnectorHandshake(config(kWorker1), {Role::kWorker, 5}), distlab::Error);
  CHECK_THROWS_WITH(ConnectorHandshake(config(kWorker1), kWorker1),
                    Catch::Contains("cannot connect to itself"));
  const ClusterSpec no_chief{.chiefs = 0, .workers = 2, .ps = 0};
  CHECK_THROWS_AS(AcceptorHandshake(config(kChief, kSecret, no_chief)), distlab::Error);
  CHECK_NOTHROW(AcceptorHandshake(config({Role::kWorker, 1}, kSecret, no_chief)));
}
