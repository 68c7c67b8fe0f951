// A task that came back (restarted alone into a run that went on) dials
// every peer itself. A dial of a peer's that was still retrying from before
// may reach it as well, even once it has seen every peer: it must close
// that one and keep its own, or each end closes the other's and the peer
// waits for it forever (seen under load: a worker killed 0.2 s into a run,
// its peer stuck in connect() for the whole deadline). A newer life of the
// peer, restarted since, is let in and replaces the old connection.
#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <thread>

#include "net/cluster/cluster_config.h"
#include "net/runtime/loopback_ports.h"
#include "net/runtime/tcp_runtime.h"
#include "net/wire/frame.h"
#include "net/wire/handshake.h"

namespace {

using namespace distlab;
using namespace distlab::strategy;
namespace asio = boost::asio;
using asio::ip::tcp;

const ClusterSpec kSpec{.chiefs = 0, .workers = 2, .ps = 0};
const TaskId kPeer{Role::kWorker, 0};      // never restarted
const TaskId kCameBack{Role::kWorker, 1};  // restarted once: incarnation 1

net::TcpOptions options(bool came_back) {
  net::TcpOptions o;
  o.connect_deadline = std::chrono::seconds(10);
  o.receive_timeout = std::chrono::seconds(10);
  o.may_restart = [](TaskId) { return true; };
  o.dial_everyone = came_back;
  return o;
}

// Reads `into` whole. False at the end of the stream or on an error; a
// read that neither ends nor fails within ten seconds fails the test.
bool read_within(tcp::socket& socket, asio::mutable_buffer into) {
  auto& io = static_cast<asio::io_context&>(socket.get_executor().context());
  bool done = false, read = false;
  asio::async_read(socket, into, [&](boost::system::error_code error, std::size_t) {
    done = true;
    read = !error;
  });
  io.restart();
  io.run_for(std::chrono::seconds(10));
  if (!done) {
    socket.cancel();
    io.restart();
    io.run();
    FAIL("nothing came on the connection and it stayed open for 10 s");
  }
  return read;
}

// The next frame on `socket`; nullopt at the end of the stream.
std::optional<net::Frame> read_frame(tcp::socket& socket) {
  std::array<std::byte, net::kHeaderBytes> header{};
  if (!read_within(socket, asio::buffer(header))) return std::nullopt;
  net::Frame frame;
  frame.header = net::decode_header(header);
  frame.payload.resize(frame.header.length);
  if (!read_within(socket, asio::buffer(frame.payload))) return std::nullopt;
  return frame;
}

// Dials `cluster`'s worker:1 as worker:0 in the life `incarnation`, by hand,
// and completes the handshake (loopback: no secret).
tcp::socket dial_as_peer(asio::io_context& io, const net::ClusterAddresses& cluster,
                         uint32_t incarnation) {
  tcp::socket socket(io);
  const net::Endpoint& to = cluster.of(kCameBack);
  socket.connect({asio::ip::make_address(to.host), static_cast<unsigned short>(to.port)});
  net::ConnectorHandshake handshake(
      {.secret = "", .cluster = kSpec, .self = kPeer, .incarnation = incarnation}, kCameBack);
  asio::write(socket, asio::buffer(net::encode_frame(handshake.hello())));
  const std::optional<net::Frame> welcome = read_frame(socket);
  REQUIRE(welcome);
  REQUIRE_FALSE(handshake.on_frame(welcome->header, welcome->payload));
  REQUIRE(handshake.done());
  return socket;
}

// worker:0 (life 0) and worker:1 (life 1, came back), connected.
struct ConnectedPair {
  net::ClusterAddresses cluster = net::loopback_cluster(kSpec, net::free_loopback_ports(2));
  std::atomic<bool> peer_is_back{false};  // worker:1 took a new connection from worker:0
  net::TcpRuntime peer{kPeer, cluster, options(false)};
  net::TcpRuntime came_back{kCameBack, cluster, [this] {
                              net::TcpOptions o = options(true);
                              o.log = [this](const std::string& line) {
                                if (line.find("is back on a new connection") != std::string::npos)
                                  peer_is_back = true;
                              };
                              return o;
                            }()};

  ConnectedPair() {
    for (net::TcpRuntime* runtime : {&peer, &came_back}) {
      runtime->set_span_limit(0);
      runtime->set_incarnations(runtime == &peer ? 0 : 1, std::vector<uint32_t>{0, 1});
    }
    auto connecting = std::async(std::launch::async, [&] { peer.connect(); });
    came_back.connect();
    connecting.get();
  }

  void send_one_message() {
    const float value = 1.0f;
    came_back.send(kPeer, make_message(Tag::kRing, 0, 1, &value));
  }
};

}  // namespace

TEST_CASE("A task that came back closes a retrying dial of a peer's life it knows") {
  ConnectedPair pair;
  asio::io_context io;
  tcp::socket dial = dial_as_peer(io, pair.cluster, 0);
  CHECK_FALSE(read_frame(dial));  // closed, with nothing on it
  pair.send_one_message();
  CHECK_NOTHROW(pair.peer.recv(kCameBack, Tag::kRing));  // on the connection it dialled
  CHECK_FALSE(pair.peer_is_back);
}

TEST_CASE("A task that came back lets in a newer life of its peer, on the new connection") {
  ConnectedPair pair;
  asio::io_context io;
  tcp::socket dial = dial_as_peer(io, pair.cluster, 1);
  // The welcome is written before the connection is judged: wait for the
  // judgement.
  for (int i = 0; i < 1000 && !pair.peer_is_back; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(pair.peer_is_back);
  pair.send_one_message();
  const std::optional<net::Frame> frame = read_frame(dial);
  REQUIRE(frame);
  CHECK(frame->header.type == net::FrameType::kMessage);
  CHECK(frame->header.sender == 1);
}
