#include "net/tcp_runtime.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <future>
#include <optional>
#include <utility>
#include <variant>

#include "common/error.h"
#include "net/frame.h"
#include "net/handshake.h"

namespace distlab::realnet {

namespace asio = boost::asio;
using asio::ip::tcp;
using strategy::Message;
using strategy::TaskId;

namespace {

// Handshake frames are small; anything larger before the handshake is done
// is refused before a byte of it is read.
constexpr uint64_t kMaxHandshakePayload = 4096;

// How much of a large payload must have arrived before the io thread is
// woken to read it (see Connection::read_payload).
constexpr std::size_t kWakeBytes = std::size_t{1} << 20;

// Keepalive probes after a second of silence, one a second, four unanswered
// ones end the connection; data unacknowledged for `timeout` ends it too.
void watch_for_dead_peer(tcp::socket& socket, std::chrono::milliseconds timeout) {
  const int fd = socket.native_handle();
  const int on = 1, idle = 1, interval = 1;
  const int probes = std::max(1, static_cast<int>(timeout.count() / 1000) - 1);
  const unsigned user_timeout = static_cast<unsigned>(timeout.count());
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof user_timeout);
}

}  // namespace

// One TCP connection to one peer: the handshake, then frames both ways.
// Everything here runs on the io thread, except send_message(), which the
// task's thread calls: the write side (queue_, writing_, closed_) is shared
// under write_mutex_.
class TcpRuntime::Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(TcpRuntime& runtime, tcp::socket socket, std::optional<int> peer)
      : runtime_(runtime), socket_(std::move(socket)), fd_(socket_.native_handle()), peer_(peer) {}

  // The dialling side: hello first.
  void start_as_connector() {
    ConnectorHandshake handshake(config(), runtime_.cluster().task_at(*peer_));
    write_frame(handshake.hello());
    handshake_ = std::move(handshake);
    read_header();
  }
  void start_as_acceptor() {
    handshake_ = AcceptorHandshake(config());
    read_header();
  }

  // Queues a frame (handshake, goodbye); io thread.
  void write_frame(const Frame& frame) {
    std::unique_lock lock(write_mutex_);
    if (closed_) return;
    queue_.push_back({.bytes = encode_frame(frame)});
    if (writing_) return;
    writing_ = true;
    lock.unlock();
    write_next();
  }

  // Sends a message; the task's thread. When nothing is queued, the task
  // writes what the socket takes at once, itself: the io thread is not
  // woken for it, and the two threads share the work of a busy connection
  // (on loopback, the sender's system call also runs the receiving side of
  // TCP). What the socket does not take, the io thread writes, in order.
  // A borrowed send's payload is `borrowed`, not the message's own floats.
  void send_message(Message message, std::optional<strategy::FloatRange> borrowed = {}) {
    Outgoing out = outgoing(std::move(message), borrowed);
    std::unique_lock lock(write_mutex_);
    if (closed_) return;  // the connection's failure is reported by the io thread
    if (writing_) {
      queue_.push_back(std::move(out));
      return;
    }
    // Under the lock, so that close() never closes the descriptor under a
    // write in progress.
    std::string error;
    const bool ok = write_without_blocking(out, error);
    if (ok && out.written == out.size()) {
      lock.unlock();
      recycle(out);
      return;
    }
    if (!ok) {
      closed_ = true;
      lock.unlock();
      asio::post(socket_.get_executor(),
                 [self = shared_from_this(), error] { self->fail("cannot write: " + error); });
      return;
    }
    writing_ = true;
    queue_.push_back(std::move(out));
    lock.unlock();
    asio::post(socket_.get_executor(), [self = shared_from_this()] { self->write_next(); });
  }

  // io thread. What is still queued is dropped, and with it the loans of
  // borrowed sends (outside the lock: giving one back takes another lock).
  void close() {
    std::deque<Outgoing> dropped;
    std::lock_guard lock(write_mutex_);
    closed_ = true;
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    dropped.swap(queue_);
  }
  // Ends the connection (io thread), as a broken one ends.
  void give_up(const std::string& why) { fail(why); }
  std::optional<int> peer() const { return peer_; }
  // Nothing left to write (a closed connection never writes again).
  bool idle() {
    std::lock_guard lock(write_mutex_);
    return queue_.empty() || closed_;
  }
  std::string peer_name() const {
    return peer_ ? strategy::task_name(runtime_.cluster().task_at(*peer_)) : "a connecting task";
  }

 private:
  struct Outgoing {
    std::vector<std::byte> bytes;      // header (and a small frame's payload)
    std::unique_ptr<Message> message;  // a message's floats, written in place
    std::span<const std::byte> payload;
    std::vector<std::byte> filler;
    std::size_t written = 0;  // of bytes, then payload
    Loan loan;                // a borrowed send's claim on the caller's floats

    std::size_t size() const { return bytes.size() + payload.size(); }
    // What is left to write, as at most two buffers.
    std::array<std::span<const std::byte>, 2> rest() const {
      if (written < bytes.size()) {
        return {std::span<const std::byte>(bytes).subspan(written), payload};
      }
      return {payload.subspan(written - bytes.size()), std::span<const std::byte>()};
    }
  };

  Outgoing outgoing(Message message, std::optional<strategy::FloatRange> borrowed) const {
    Outgoing out;
    out.message = std::make_unique<Message>(std::move(message));
    const auto sender = static_cast<uint32_t>(runtime_.self_ordinal_);
    const MessageFrame frame =
        borrowed
            ? frame_message(*out.message,
                            std::span<const float>(borrowed->data(),
                                                   borrowed->has_values() ? borrowed->size() : 0),
                            sender)
            : frame_message(*out.message, sender);
    if (borrowed) out.loan = Loan(runtime_.loans_);
    const auto header = encode_header(frame.header);
    out.bytes.assign(header.begin(), header.end());
    out.payload = frame.payload;
    if (out.payload.size() < frame.header.length) {
      // A message without values (timing fidelity) still has its size.
      out.filler.resize(frame.header.length);
      out.payload = out.filler;
    }
    return out;
  }

  // Writes as much of `out` as the socket takes now. False, with `error`,
  // when the connection is broken.
  bool write_without_blocking(Outgoing& out, std::string& error) {
    while (out.written < out.size()) {
      const auto rest = out.rest();
      std::array<iovec, 2> parts{};
      std::size_t count = 0;
      for (const auto& part : rest) {
        if (part.empty()) continue;
        parts[count++] = {const_cast<std::byte*>(part.data()), part.size()};
      }
      msghdr header{};
      header.msg_iov = parts.data();
      header.msg_iovlen = count;
      const ssize_t sent = ::sendmsg(fd_, &header, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (sent >= 0) {
        out.written += static_cast<std::size_t>(sent);
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return true;
      } else if (errno != EINTR) {
        error = std::strerror(errno);
        return false;
      }
    }
    return true;
  }

  // A written message's buffer serves the next payload read.
  void recycle(Outgoing& out) {
    if (out.message) runtime_.spare_buffers_.give(std::move(out.message->values));
  }

  HandshakeConfig config() const {
    return {
        .secret = runtime_.options_.secret, .cluster = runtime_.cluster(), .self = runtime_.self()};
  }

  // Writes the queue's front, then the rest of the queue; io thread, while
  // writing_ is set.
  void write_next() {
    std::unique_lock lock(write_mutex_);
    if (queue_.empty() || closed_) {
      writing_ = false;
      return;
    }
    // The front stays where it is while the task's thread pushes behind it.
    const auto rest = queue_.front().rest();
    lock.unlock();
    const std::array<asio::const_buffer, 2> buffers = {
        asio::buffer(rest[0].data(), rest[0].size()), asio::buffer(rest[1].data(), rest[1].size())};
    asio::async_write(socket_, buffers, [self = shared_from_this()](auto error, std::size_t) {
      if (error) return self->fail("cannot write: " + error.message());
      Outgoing done;
      {
        std::lock_guard lock(self->write_mutex_);
        if (self->queue_.empty()) return;  // closed meanwhile
        done = std::move(self->queue_.front());
        self->queue_.pop_front();
      }
      self->recycle(done);
      self->write_next();
    });
  }

  void read_header() {
    asio::async_read(socket_, asio::buffer(header_bytes_),
                     [self = shared_from_this()](auto error, std::size_t) {
                       if (error) return self->on_read_error(error);
                       self->on_header();
                     });
  }

  void on_header() {
    const double arrived = runtime_.now();
    FrameHeader header;
    try {
      header = decode_header(header_bytes_);
      if (!std::holds_alternative<std::monostate>(handshake_) &&
          header.length > kMaxHandshakePayload) {
        throw FrameError(FrameProblem::kTooLong, "a " + std::string(frame_type_name(header.type)) +
                                                     " frame of " + std::to_string(header.length) +
                                                     " bytes during the handshake");
      }
    } catch (const FrameError& e) {
      return fail(e.what());
    }
    if (header.type == FrameType::kMessage) {
      if (!std::holds_alternative<std::monostate>(handshake_)) {
        return fail("a message before the handshake was done");
      }
      if (header.sender != static_cast<uint32_t>(*peer_)) {
        return fail("a message claiming to come from task " + std::to_string(header.sender));
      }
      const bool no_values = (header.flags & kFlagNoValues) != 0;
      // A posted receive waiting for this message takes its payload.
      const std::optional<strategy::FloatRange> into =
          no_values
              ? std::nullopt
              : runtime_.claim_posting(*peer_, header.tag, header.sequence, header.from_incarnation,
                                       header.to_incarnation, header.length);
      try {
        message_ = into ? begin_delivered_message(header)
                        : begin_message(header, kMaxPayloadBytes, [this](std::size_t count) {
                            return runtime_.spare_buffers_.take(count);
                          });
      } catch (const FrameError& e) {
        if (into) runtime_.release_posting({*peer_, header.tag, header.sequence});
        return fail(e.what());
      }
      message_.from = runtime_.cluster().task_at(*peer_);
      message_.available_at = arrived;
      if (into) {
        claimed_ = PostedKey{*peer_, header.tag, header.sequence};
        return read_payload(asio::buffer(into->data(), header.length), [](Connection& c) {
          c.runtime_.release_posting(*std::exchange(c.claimed_, std::nullopt));
          c.runtime_.on_message(std::move(c.message_));
        });
      }
      if (no_values) {
        // Timing fidelity's filler: read and drop it.
        payload_.resize(header.length);
        return read_payload(asio::buffer(payload_),
                            [](Connection& c) { c.runtime_.on_message(std::move(c.message_)); });
      }
      return read_payload(asio::buffer(payload_target(message_).data(), header.length),
                          [](Connection& c) { c.runtime_.on_message(std::move(c.message_)); });
    }
    current_ = header;
    payload_.resize(header.length);
    read_payload(asio::buffer(payload_), [](Connection& c) { c.on_control_frame(); });
  }

  // Reads a payload into `target`, then hands it to `done` and goes on with
  // the next header. Most of a large payload is read with the socket's low
  // watermark raised, so that the kernel wakes this thread once per
  // kWakeBytes rather than for every 64 KiB that loopback delivers: fewer
  // wake-ups, longer copies (bench/RESULTS.md). The watermark never exceeds
  // what the frame still owes, so it is always reached; a closed or failed
  // connection wakes the reader regardless.
  template <typename Done>
  void read_payload(asio::mutable_buffer target, Done done) {
    if (target.size() >= kWakeBytes / 2) {
      set_wake_bytes(std::min(target.size(), kWakeBytes));
      socket_.async_read_some(target,
                              [self = shared_from_this(), target, done](auto error, std::size_t n) {
                                if (error) return self->on_read_error(error);
                                self->read_payload(target + n, done);
                              });
      return;
    }
    set_wake_bytes(1);
    asio::async_read(socket_, target, [self = shared_from_this(), done](auto error, std::size_t) {
      if (error) return self->on_read_error(error);
      done(*self);
      self->read_header();
    });
  }

  void set_wake_bytes(std::size_t bytes) {
    if (bytes == wake_bytes_) return;
    wake_bytes_ = bytes;
    // Where the platform refuses, reads merely wake more often.
    boost::system::error_code ignored;
    socket_.set_option(asio::socket_base::receive_low_watermark(static_cast<int>(bytes)), ignored);
  }

  void on_control_frame() {
    if (current_.type == FrameType::kGoodbye) {
      const std::string reason = goodbye_reason(payload_);
      goodbye_received_ = true;
      if (peer_) runtime_.on_goodbye(*peer_, reason);
      return;
    }
    try {
      std::optional<Frame> reply;
      bool done = false;
      if (auto* connector = std::get_if<ConnectorHandshake>(&handshake_)) {
        reply = connector->on_frame(current_, payload_);
        done = connector->done();
      } else if (auto* acceptor = std::get_if<AcceptorHandshake>(&handshake_)) {
        reply = acceptor->on_frame(current_, payload_);
        done = acceptor->done();
        if (done) peer_ = runtime_.cluster().ordinal(*acceptor->peer());
      } else {
        return fail(std::string("an unexpected ") + frame_type_name(current_.type) + " frame");
      }
      if (reply) write_frame(*reply);
      if (done) {
        handshake_ = std::monostate{};
        runtime_.on_connected(shared_from_this());
      }
    } catch (const HandshakeError& e) {
      write_frame(goodbye_frame(static_cast<uint32_t>(runtime_.self_ordinal_), e.what()));
      fail(e.what());
    }
  }

  void on_read_error(const boost::system::error_code& error) {
    if (goodbye_received_ || error == asio::error::operation_aborted) return;
    fail(error == asio::error::eof ? "closed the connection without a goodbye"
                                   : "connection lost: " + error.message());
  }

  void fail(const std::string& what) {
    // A read into a posted receive's floats is over: its task may go on.
    if (claimed_) runtime_.release_posting(*std::exchange(claimed_, std::nullopt));
    if (failed_) return;
    failed_ = true;
    const std::string line = "connection with " + peer_name() + ": " + what;
    // A stranger that fails its handshake is turned away; a known peer
    // that fails ends the run, unless it may come back.
    if (peer_ && runtime_.survives_loss_of(*peer_)) {
      runtime_.on_peer_lost(shared_from_this(), line);
    } else if (peer_) {
      runtime_.on_failure(line);
    } else {
      runtime_.log_event(line);
    }
    close();
  }

  TcpRuntime& runtime_;
  tcp::socket socket_;
  const int fd_;  // socket_'s descriptor, for the task thread's writes
  std::optional<int> peer_;
  std::variant<std::monostate, ConnectorHandshake, AcceptorHandshake> handshake_;
  std::array<std::byte, kHeaderBytes> header_bytes_{};
  FrameHeader current_;
  std::vector<std::byte> payload_;
  Message message_;
  std::optional<PostedKey> claimed_;  // the posted receive a payload is read into
  bool failed_ = false;
  bool goodbye_received_ = false;
  std::size_t wake_bytes_ = 1;  // the socket's receive low watermark

  std::mutex write_mutex_;
  std::deque<Outgoing> queue_;  // what the io thread writes, in order
  bool writing_ = false;        // the io thread is writing: the task queues
  bool closed_ = false;         // failed or closed: nothing more is written
};

TcpRuntime::TcpRuntime(TaskId self, ClusterAddresses cluster, TcpOptions options)
    : Runtime(self, cluster.spec(), strategy::Fidelity::kFull),
      addresses_(std::move(cluster)),
      options_(std::move(options)),
      self_ordinal_(Runtime::cluster().ordinal(self)),
      peers_(Runtime::cluster().task_count()),
      inbox_(static_cast<int>(strategy::Tag::kLast) + 1) {}

TcpRuntime::~TcpRuntime() {
  keep_running_.reset();
  io_.stop();
  if (io_thread_.joinable()) io_thread_.join();
}

double TcpRuntime::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - options_.epoch).count();
}

void TcpRuntime::recycle(Message message) {
  spare_buffers_.give(std::move(message.values));
}

void TcpRuntime::log_event(const std::string& line) const {
  if (options_.log) options_.log(strategy::task_name(self()) + ": " + line);
}

void TcpRuntime::connect() {
  const Endpoint& own = addresses_.of(self());
  const bool loopback = is_loopback(own.host);
  if (!loopback && options_.secret.empty()) {
    throw InputError("refusing to listen on " + own.to_string() +
                     " without a cluster secret: set --secret or DISTLAB_SECRET, or use loopback");
  }
  deadline_ = std::chrono::steady_clock::now() + options_.connect_deadline;
  const int tasks = cluster().task_count();
  // Tasks with a higher ordinal dial this one; it dials the lower ones. A
  // peer that may restart dials everyone when it comes back: then every
  // task listens.
  if (self_ordinal_ + 1 < tasks || options_.may_restart) {
    const auto address =
        loopback ? asio::ip::make_address(own.host == "localhost" ? "127.0.0.1" : own.host)
                 : asio::ip::address(asio::ip::address_v4::any());
    acceptor_ = std::make_unique<tcp::acceptor>(io_);
    const tcp::endpoint endpoint(address, own.port);
    acceptor_->open(endpoint.protocol());
    acceptor_->set_option(tcp::acceptor::reuse_address(true));
    boost::system::error_code error;
    acceptor_->bind(endpoint, error);
    if (error) throw Error("cannot listen on " + own.to_string() + ": " + error.message());
    acceptor_->listen();
    accept_next();
  }
  for (int peer = 0; peer < tasks; ++peer) {
    if (peer < self_ordinal_ || (options_.dial_everyone && peer != self_ordinal_)) {
      dial(peer, std::chrono::milliseconds(20));
    }
  }
  io_thread_ = std::thread([this] { io_.run(); });

  std::unique_lock lock(mutex_);
  const bool all = changed_.wait_until(
      lock, deadline_, [&] { return connected_ >= tasks - 1 || !failure_.empty(); });
  if (!failure_.empty()) throw_failure();
  if (!all) {
    std::string missing;
    for (int t = 0; t < tasks; ++t) {
      if (t == self_ordinal_ || peers_[t]) continue;
      if (!missing.empty()) missing += ", ";
      missing += strategy::task_name(cluster().task_at(t)) + " at " +
                 addresses_.of(cluster().task_at(t)).to_string();
    }
    throw Error(strategy::task_name(self()) + ": no connection within " +
                std::to_string(options_.connect_deadline.count() / 1000) + " s with: " + missing);
  }
}

void TcpRuntime::accept_next() {
  acceptor_->async_accept([this](boost::system::error_code error, tcp::socket socket) {
    if (error) {
      if (error != asio::error::operation_aborted) log_event("accept failed: " + error.message());
      return;
    }
    socket.set_option(tcp::no_delay(true));
    watch_for_dead_peer(socket, options_.dead_peer_timeout);
    std::make_shared<Connection>(*this, std::move(socket), std::nullopt)->start_as_acceptor();
    accept_next();
  });
}

void TcpRuntime::dial(int peer, std::chrono::milliseconds backoff) {
  const Endpoint& endpoint = addresses_.of(cluster().task_at(peer));
  auto resolver = std::make_shared<tcp::resolver>(io_);
  auto socket = std::make_shared<tcp::socket>(io_);
  resolver->async_resolve(
      endpoint.host, std::to_string(endpoint.port),
      [this, peer, backoff, resolver, socket](auto error, tcp::resolver::results_type results) {
        auto retry = [this, peer, backoff] {
          if (std::chrono::steady_clock::now() + backoff > deadline_)
            return;  // connect() reports it
          auto timer = std::make_shared<asio::steady_timer>(io_, backoff);
          timer->async_wait([this, peer, backoff, timer](auto) {
            dial(peer, std::min(backoff * 2, std::chrono::milliseconds(1000)));
          });
        };
        if (error) return retry();
        asio::async_connect(*socket, results, [this, peer, socket, retry](auto error, auto) {
          if (error) return retry();
          socket->set_option(tcp::no_delay(true));
          watch_for_dead_peer(*socket, options_.dead_peer_timeout);
          std::make_shared<Connection>(*this, std::move(*socket), peer)->start_as_connector();
        });
      });
}

void TcpRuntime::on_connected(const std::shared_ptr<Connection>& connection) {
  const int peer = *connection->peer();
  std::shared_ptr<Connection> replaced;
  {
    std::lock_guard lock(mutex_);
    if (!peers_[peer]) {
      peers_[peer] = connection;
      ++connected_;
    } else if (survives_loss_of(peer)) {
      // The peer restarted before its old connection was seen to close.
      replaced = std::exchange(peers_[peer], connection);
    } else {
      failure_ = "two connections from " + connection->peer_name();
    }
    changed_.notify_all();
  }
  if (replaced) {
    log_event(connection->peer_name() + " is back on a new connection");
    replaced->close();
  }
  // A peer that comes back after this task said its goodbyes gets one too.
  if (saying_goodbye_) {
    connection->write_frame(goodbye_frame(static_cast<uint32_t>(self_ordinal_), ""));
  }
}

bool TcpRuntime::survives_loss_of(int peer) const {
  return options_.may_restart && options_.may_restart(cluster().task_at(peer));
}

void TcpRuntime::on_peer_lost(const std::shared_ptr<Connection>& connection,
                              const std::string& what) {
  log_event(what + "; the run goes on, it may come back");
  std::lock_guard lock(mutex_);
  auto& current = peers_[*connection->peer()];
  if (current == connection) {
    current.reset();
    --connected_;
  }
  changed_.notify_all();
}

void TcpRuntime::on_message(Message message) {
  {
    std::lock_guard lock(mutex_);
    inbox_[static_cast<int>(message.tag)].push_back(std::move(message));
  }
  // Outside the lock, so that the woken task does not wake only to wait for
  // the mutex (a message is a wake-up; the destructor joins this thread
  // before the condition variable goes).
  changed_.notify_all();
}

void TcpRuntime::on_goodbye(int peer, const std::string& reason) {
  std::lock_guard lock(mutex_);
  if (!reason.empty() && failure_.empty()) {
    failure_ = strategy::task_name(cluster().task_at(peer)) + " stopped: " + reason;
  }
  ++goodbyes_;
  changed_.notify_all();
}

void TcpRuntime::on_failure(const std::string& what) {
  log_event(what);
  {
    std::lock_guard lock(mutex_);
    if (failure_.empty()) failure_ = what;
    changed_.notify_all();
  }
  std::lock_guard lock(loans_->mutex);
  loans_->broken = true;
  loans_->returned.notify_all();
}

void TcpRuntime::throw_failure() {
  throw Error(strategy::task_name(self()) + ": " + failure_);
}

void TcpRuntime::transmit(TaskId to, Message message) {
  send_to(to, std::move(message), std::nullopt);
}

void TcpRuntime::transmit_borrowed(TaskId to, Message message, strategy::FloatRange values) {
  send_to(to, std::move(message), values);
}

void TcpRuntime::send_to(TaskId to, Message message, std::optional<strategy::FloatRange> borrowed) {
  // A peer lost for good or for a while (may_restart) takes nothing: its
  // next life starts afresh, as a dead process would have lost it anyway.
  std::shared_ptr<Connection> peer;
  {
    std::lock_guard lock(mutex_);
    peer = peers_[cluster().ordinal(to)];
  }
  if (peer) peer->send_message(std::move(message), borrowed);
}

void TcpRuntime::await_borrowed_sends() {
  std::unique_lock lock(loans_->mutex);
  const bool returned = loans_->returned.wait_for(
      lock, options_.receive_timeout, [&] { return loans_->out == 0 || loans_->broken; });
  // A failed connection hands its loans back unwritten: the floats are
  // free, but the sends did not happen.
  const bool broken = loans_->broken;
  lock.unlock();
  if (broken) {
    std::lock_guard failed(mutex_);
    throw_failure();
  }
  if (!returned) {
    throw Error(strategy::task_name(self()) + ": messages still unwritten after " +
                std::to_string(options_.receive_timeout.count() / 1000) +
                " s; a peer may have stopped reading");
  }
}

TcpRuntime::Loan::Loan(std::shared_ptr<Loans> loans) : loans_(std::move(loans)) {
  std::lock_guard lock(loans_->mutex);
  ++loans_->out;
}

TcpRuntime::Loan& TcpRuntime::Loan::operator=(Loan&& other) noexcept {
  if (this != &other) {
    give_back();
    loans_ = std::move(other.loans_);
  }
  return *this;
}

TcpRuntime::Loan::~Loan() {
  give_back();
}

void TcpRuntime::Loan::give_back() noexcept {
  if (!loans_) return;
  const std::shared_ptr<Loans> loans = std::move(loans_);
  std::lock_guard lock(loans->mutex);
  if (--loans->out == 0) loans->returned.notify_all();
}

void TcpRuntime::expect(const strategy::Posting& posting) {
  if (!posting.into.has_values()) return;  // it keeps a buffer of its own
  std::lock_guard lock(mutex_);
  posted_[{posting.peer, posting.tag, posting.sequence}] = {.posting = posting};
}

void TcpRuntime::unexpect(const strategy::Posting& posting) {
  if (!posting.into.has_values()) return;
  const PostedKey key{posting.peer, posting.tag, posting.sequence};
  std::unique_lock lock(mutex_);
  auto found = posted_.find(key);
  if (found == posted_.end()) return;
  if (found->second.reading) {
    // Withdrawn while its payload is being read (a task giving up on an
    // error): the connection ends, which ends the read.
    if (const auto& peer = peers_[posting.peer]) {
      asio::post(io_,
                 [peer] { peer->give_up("a receive was withdrawn while its message arrived"); });
    }
    changed_.wait(lock, [&] {
      const auto now = posted_.find(key);
      return now == posted_.end() || !now->second.reading;
    });
  }
  posted_.erase(key);
}

std::optional<strategy::FloatRange> TcpRuntime::claim_posting(int peer, strategy::Tag tag,
                                                              uint64_t sequence,
                                                              uint32_t from_incarnation,
                                                              uint32_t to_incarnation,
                                                              uint64_t bytes) {
  std::lock_guard lock(mutex_);
  auto found = posted_.find({peer, tag, sequence});
  if (found == posted_.end()) return std::nullopt;
  Posted& posted = found->second;
  const strategy::Posting& p = posted.posting;
  if (posted.reading || p.from_incarnation != from_incarnation ||
      p.to_incarnation != to_incarnation ||
      static_cast<uint64_t>(p.into.size()) * sizeof(float) != bytes) {
    return std::nullopt;  // not the message it waits for: it takes it as it comes
  }
  posted.reading = true;
  return p.into;
}

void TcpRuntime::release_posting(const PostedKey& key) {
  {
    std::lock_guard lock(mutex_);
    posted_.erase(key);
  }
  changed_.notify_all();
}

Message TcpRuntime::receive(strategy::Tag tag) {
  std::unique_lock lock(mutex_);
  auto& inbox = inbox_[static_cast<int>(tag)];
  const bool arrived = changed_.wait_for(lock, options_.receive_timeout,
                                         [&] { return !inbox.empty() || !failure_.empty(); });
  if (!inbox.empty()) {
    Message message = std::move(inbox.front());
    inbox.pop_front();
    return message;
  }
  if (!failure_.empty()) {
    throw Error(strategy::task_name(self()) + ": while waiting for a " + strategy::tag_name(tag) +
                " message: " + failure_);
  }
  (void)arrived;
  throw Error(strategy::task_name(self()) + ": no " + strategy::tag_name(tag) + " message within " +
              std::to_string(options_.receive_timeout.count() / 1000) +
              " s; a peer may have stopped");
}

void TcpRuntime::execute(const strategy::Work&, const std::function<void()>& work_fn) {
  if (work_fn) work_fn();
}

void TcpRuntime::store(uint64_t, const std::function<void()>& io_fn) {
  if (io_fn) io_fn();  // the real write, timed by the caller
}

void TcpRuntime::disconnect() {
  asio::post(io_, [this] {
    saying_goodbye_ = true;
    for (auto& peer : peers_) {
      if (peer) peer->write_frame(goodbye_frame(static_cast<uint32_t>(self_ordinal_), ""));
    }
  });
  std::unique_lock lock(mutex_);
  const int expected = cluster().task_count() - 1;
  changed_.wait_for(lock, options_.receive_timeout,
                    [&] { return goodbyes_ == expected || !failure_.empty(); });
  if (!failure_.empty()) throw_failure();
  lock.unlock();
  // Every peer has said goodbye after its last message. Ours follow our
  // last messages on each connection: once every queue is written, the
  // connections can go.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < until) {
    auto flushed = std::make_shared<std::promise<bool>>();
    asio::post(io_, [this, flushed] {
      flushed->set_value(std::all_of(peers_.begin(), peers_.end(),
                                     [](const auto& peer) { return !peer || peer->idle(); }));
    });
    auto done = flushed->get_future();
    if (done.wait_until(until) != std::future_status::ready) break;
    if (done.get()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  asio::post(io_, [this] {
    if (acceptor_) acceptor_->close();
    for (auto& peer : peers_) {
      if (peer) peer->close();
    }
  });
}

}  // namespace distlab::realnet
