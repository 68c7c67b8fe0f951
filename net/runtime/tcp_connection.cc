#include "net/runtime/tcp_connection.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "common/error.h"

namespace distlab::net {

namespace asio = boost::asio;
using asio::ip::tcp;
using strategy::Message;

namespace {

// Handshake frames are small; anything larger before the handshake is done
// is refused before a byte of it is read.
constexpr uint64_t kMaxHandshakePayload = 4096;

// How much of a large payload must have arrived before the io thread is
// woken to read it (see read_payload).
constexpr std::size_t kWakeBytes = std::size_t{1} << 20;

// Payloads from this size up go in place to a peer that reads them so
// (peer_memory.h); smaller ones cost less as bytes on the stream than a
// system call and a released frame.
constexpr std::size_t kInPlaceBytes = std::size_t{64} << 10;

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

TcpRuntime::Connection::Connection(TcpRuntime& runtime, tcp::socket socket, std::optional<int> peer)
    : runtime_(runtime),
      socket_(std::move(socket)),
      fd_(socket_.native_handle()),
      peer_(peer),
      dialled_(peer.has_value()) {
  socket_.set_option(tcp::no_delay(true));
  watch_for_dead_peer(socket_, runtime_.options_.dead_peer_timeout);
}

void TcpRuntime::Connection::start_as_connector() {
  ConnectorHandshake handshake(config(), runtime_.cluster().task_at(*peer_));
  write_frame(handshake.hello());
  handshake_ = std::move(handshake);
  read_header();
}

void TcpRuntime::Connection::start_as_acceptor() {
  handshake_ = AcceptorHandshake(config());
  read_header();
}

void TcpRuntime::Connection::write_frame(const Frame& frame) {
  std::unique_lock lock(write_mutex_);
  if (closed_) return;
  queue_.push_back({.bytes = encode_frame(frame)});
  if (writing_) return;
  writing_ = true;
  lock.unlock();
  write_next();
}

void TcpRuntime::Connection::send_message(Message message,
                                          std::optional<strategy::FloatRange> borrowed) {
  Outgoing out = outgoing(std::move(message), borrowed);
  std::unique_lock lock(write_mutex_);
  if (closed_) return;  // the connection's failure is reported by the io thread
  if (out.in_place) {
    // Kept before a byte is written: the peer may release it at once.
    const LentKey key{out.message->tag, out.message->sequence};
    lent_.emplace(key, Lent{std::move(out.message), std::move(out.loan)});
  }
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

// What is dropped gives its loans back outside the lock (`dropped` is
// destroyed after `lock` lets go): giving one back takes another lock.
void TcpRuntime::Connection::close() {
  std::deque<Outgoing> dropped;
  std::map<LentKey, Lent> unreleased;
  std::lock_guard lock(write_mutex_);
  closed_ = true;
  boost::system::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  dropped.swap(queue_);
  unreleased.swap(lent_);
}

bool TcpRuntime::Connection::idle() {
  std::lock_guard lock(write_mutex_);
  return (queue_.empty() && lent_.empty()) || closed_;
}

std::string TcpRuntime::Connection::peer_name() const {
  return peer_ ? strategy::task_name(runtime_.cluster().task_at(*peer_)) : "a connecting task";
}

TcpRuntime::Connection::Outgoing TcpRuntime::Connection::outgoing(
    Message message, std::optional<strategy::FloatRange> borrowed) const {
  Outgoing out;
  out.message = std::make_unique<Message>(std::move(message));
  const auto sender = static_cast<uint32_t>(runtime_.self_ordinal_);
  const MessageFrame frame =
      borrowed ? frame_message(*out.message,
                               std::span<const float>(
                                   borrowed->data(), borrowed->has_values() ? borrowed->size() : 0),
                               sender)
               : frame_message(*out.message, sender);
  if (borrowed) out.loan = SendLoan(runtime_.loans_);
  const auto header = encode_header(frame.header);
  out.bytes.assign(header.begin(), header.end());
  out.payload = frame.payload;
  if (peer_reads_in_place_.load(std::memory_order_acquire) &&
      frame.payload.size() >= kInPlaceBytes) {
    // The header, then where the peer finds the payload.
    FrameHeader header = frame.header;
    header.flags |= kFlagInSenderMemory;
    const auto head = encode_header(header);
    const auto address = encode_address(reinterpret_cast<uintptr_t>(frame.payload.data()));
    out.bytes.assign(head.begin(), head.end());
    out.bytes.insert(out.bytes.end(), address.begin(), address.end());
    out.payload = {};
    out.in_place = true;
    return out;
  }
  if (out.payload.size() < frame.header.length) {
    // A message without values (timing fidelity) still has its size.
    out.filler.resize(frame.header.length);
    out.payload = out.filler;
  }
  return out;
}

// Writes as much of `out` as the socket takes now. False, with `error`,
// when the connection is broken.
bool TcpRuntime::Connection::write_without_blocking(Outgoing& out, std::string& error) {
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
void TcpRuntime::Connection::recycle(Outgoing& out) {
  if (out.message) runtime_.spare_buffers_.give(std::move(out.message->values));
}

HandshakeConfig TcpRuntime::Connection::config() const {
  return {.secret = runtime_.options_.secret,
          .cluster = runtime_.cluster(),
          .self = runtime_.self(),
          .incarnation = runtime_.incarnation()};
}

// Writes the queue's front, then the rest of the queue; io thread, while
// writing_ is set.
void TcpRuntime::Connection::write_next() {
  std::unique_lock lock(write_mutex_);
  if (queue_.empty() || closed_) {
    writing_ = false;
    return;
  }
  // The front stays where it is while the task's thread pushes behind it.
  const auto rest = queue_.front().rest();
  lock.unlock();
  const std::array<asio::const_buffer, 2> buffers = {asio::buffer(rest[0].data(), rest[0].size()),
                                                     asio::buffer(rest[1].data(), rest[1].size())};
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

void TcpRuntime::Connection::read_header() {
  asio::async_read(socket_, asio::buffer(header_bytes_),
                   [self = shared_from_this()](auto error, std::size_t) {
                     if (error) return self->on_read_error(error);
                     self->on_header();
                   });
}

void TcpRuntime::Connection::on_header() {
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
    const bool in_place = (header.flags & kFlagInSenderMemory) != 0;
    if (in_place && !peer_memory_) {
      return fail("a payload to read in its memory, which this task did not accept to read");
    }
    // From here on the message is the one whose payload follows.
    header.flags &= static_cast<uint16_t>(~kFlagInSenderMemory);
    // A posted receive waiting for this message takes its payload.
    const std::optional<strategy::FloatRange> into =
        no_values
            ? std::nullopt
            : runtime_.posted_.claim(*peer_, header.tag, header.sequence, header.from_incarnation,
                                     header.to_incarnation, header.length);
    try {
      message_ = into ? begin_delivered_message(header)
                      : begin_message(header, kMaxPayloadBytes, [this](std::size_t count) {
                          return runtime_.spare_buffers_.take(count);
                        });
    } catch (const FrameError& e) {
      if (into) runtime_.posted_.release({*peer_, header.tag, header.sequence});
      return fail(e.what());
    }
    message_.from = runtime_.cluster().task_at(*peer_);
    message_.available_at = arrived;
    if (into) {
      claimed_ = PostedReceives::Key{*peer_, header.tag, header.sequence};
      const auto delivered = [](Connection& c) {
        c.runtime_.posted_.release(*std::exchange(c.claimed_, std::nullopt));
        c.runtime_.on_message(std::move(c.message_));
      };
      if (in_place) {
        return read_in_place(std::as_writable_bytes(std::span(into->data(), into->size())),
                             delivered);
      }
      return read_payload(asio::buffer(into->data(), header.length), delivered);
    }
    if (no_values) {
      // Timing fidelity's filler: read and drop it.
      payload_.resize(header.length);
      return read_payload(asio::buffer(payload_),
                          [](Connection& c) { c.runtime_.on_message(std::move(c.message_)); });
    }
    const auto received = [](Connection& c) { c.runtime_.on_message(std::move(c.message_)); };
    if (in_place) return read_in_place(payload_target(message_), received);
    return read_payload(asio::buffer(payload_target(message_).data(), header.length), received);
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
void TcpRuntime::Connection::read_payload(asio::mutable_buffer target, Done done) {
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

template <typename Done>
void TcpRuntime::Connection::read_in_place(std::span<std::byte> target, Done done) {
  set_wake_bytes(1);
  asio::async_read(socket_, asio::buffer(address_bytes_),
                   [self = shared_from_this(), target, done](auto error, std::size_t) {
                     if (error) return self->on_read_error(error);
                     try {
                       self->peer_memory_->read(decode_address(self->address_bytes_), target);
                     } catch (const Error& e) {
                       return self->fail(e.what());
                     }
                     self->write_frame(released_frame(
                         static_cast<uint32_t>(self->runtime_.self_ordinal_),
                         {.tag = self->message_.tag, .sequence = self->message_.sequence}));
                     self->runtime_.read_in_place_.fetch_add(1, std::memory_order_relaxed);
                     done(*self);
                     self->read_header();
                   });
}

void TcpRuntime::Connection::set_wake_bytes(std::size_t bytes) {
  if (bytes == wake_bytes_) return;
  wake_bytes_ = bytes;
  // Where the platform refuses, reads merely wake more often.
  boost::system::error_code ignored;
  socket_.set_option(asio::socket_base::receive_low_watermark(static_cast<int>(bytes)), ignored);
}

void TcpRuntime::Connection::on_control_frame() {
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
      if (done) {
        peer_ = runtime_.cluster().ordinal(*acceptor->peer());
        peer_incarnation_ = acceptor->peer_incarnation();
      }
    } else {
      return on_frame_between_messages();
    }
    if (reply) write_frame(*reply);
    if (done) {
      handshake_ = std::monostate{};
      // Offered first, so that connect() never finds the connection
      // without its offer and returns before the answer.
      offer_memory();
      runtime_.on_connected(shared_from_this());
    }
  } catch (const HandshakeError& e) {
    write_frame(goodbye_frame(static_cast<uint32_t>(runtime_.self_ordinal_), e.what()));
    fail(e.what());
  }
}

void TcpRuntime::Connection::on_frame_between_messages() {
  const auto self = static_cast<uint32_t>(runtime_.self_ordinal_);
  try {
    switch (current_.type) {
      case FrameType::kOffer: {
        const Offer offer = read_offer(payload_);
        PeerMemory memory(static_cast<pid_t>(offer.pid));
        const bool reads =
            runtime_.options_.same_host_reads && memory.holds(offer.address, offer.probe);
        if (reads) {
          peer_memory_ = memory;
        } else if (runtime_.options_.same_host_reads) {
          runtime_.log_event("cannot read the memory of " + peer_name() + " (process " +
                             std::to_string(offer.pid) + "): its payloads come over TCP");
        }
        write_frame(answer_frame(self, reads));
        return;
      }
      case FrameType::kAnswer: {
        if (!offer_open_.load()) return fail("an answer to an offer this task did not make");
        peer_reads_in_place_.store(read_answer(payload_), std::memory_order_release);
        settle_offer();
        return;
      }
      case FrameType::kReleased:
        return on_released(read_released(payload_));
      default:
        return fail(std::string("an unexpected ") + frame_type_name(current_.type) + " frame");
    }
  } catch (const FrameError& e) {
    fail(e.what());
  }
}

// Only between tasks on one host: the peer's address is loopback's.
void TcpRuntime::Connection::offer_memory() {
  if (!runtime_.options_.same_host_reads) return;
  boost::system::error_code error;
  const tcp::endpoint remote = socket_.remote_endpoint(error);
  if (error || !remote.address().is_loopback()) return;
  const Nonce nonce = make_nonce();
  std::copy_n(nonce.begin(), probe_.size(), probe_.begin());
  offer_open_.store(true);
  write_frame(offer_frame(static_cast<uint32_t>(runtime_.self_ordinal_),
                          {.pid = static_cast<uint32_t>(::getpid()),
                           .address = reinterpret_cast<uintptr_t>(probe_.data()),
                           .probe = probe_}));
}

void TcpRuntime::Connection::settle_offer() {
  if (!offer_open_.exchange(false)) return;
  { std::lock_guard lock(runtime_.mutex_); }
  runtime_.changed_.notify_all();
}

// The payload is this task's again: a message's buffer serves the next
// payload read, a borrowed send's floats go back to the caller.
void TcpRuntime::Connection::on_released(const Released& released) {
  Lent lent;
  {
    std::lock_guard lock(write_mutex_);
    const auto it = lent_.find({released.tag, released.sequence});
    if (it == lent_.end()) {
      if (closed_) return;
      return fail(std::string("a release of ") + strategy::tag_name(released.tag) + " message " +
                  std::to_string(released.sequence) + ", which it was not lent");
    }
    lent = std::move(it->second);
    lent_.erase(it);
  }
  if (lent.message) runtime_.spare_buffers_.give(std::move(lent.message->values));
}

void TcpRuntime::Connection::on_read_error(const boost::system::error_code& error) {
  if (goodbye_received_ || error == asio::error::operation_aborted) return;
  fail(error == asio::error::eof ? "closed the connection without a goodbye"
                                 : "connection lost: " + error.message());
}

void TcpRuntime::Connection::fail(const std::string& what) {
  // A read into a posted receive's floats is over: its task may go on.
  if (claimed_) runtime_.posted_.release(*std::exchange(claimed_, std::nullopt));
  settle_offer();  // no answer will come
  if (failed_) return;
  failed_ = true;
  {
    // Closed on purpose (replaced, or a stale dial): its reads end quietly.
    std::lock_guard lock(write_mutex_);
    if (closed_) return;
  }
  const std::string line = "connection with " + peer_name() + ": " + what;
  // A stranger that fails its handshake is turned away; a known peer
  // that fails ends the run, unless it may come back, or the run is over
  // but for the reports (then it is gone once its grace is: the task
  // gathering reports writes what it has).
  if (peer_ && (runtime_.survives_loss_of(*peer_) || runtime_.reporting_)) {
    runtime_.on_peer_lost(shared_from_this(), line);
  } else if (peer_) {
    runtime_.on_failure(line);
  } else {
    runtime_.log_event(line);
  }
  close();
}

}  // namespace distlab::net
