// One TCP connection of a TcpRuntime to one peer: the handshake, then
// frames both ways. Private to the runtime (tcp_runtime.cc and
// tcp_connection.cc include it): a connection reports what it reads and
// how it ends to its runtime, whose private members it uses as a nested
// class.
//
// Everything here runs on the io thread, except send_message(), which the
// task's thread calls: the write side (queue_, writing_, closed_) is shared
// under write_mutex_.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "net/runtime/asio.h"
#include "net/runtime/peer_memory.h"
#include "net/runtime/send_loans.h"
#include "net/runtime/tcp_runtime.h"
#include "net/wire/frame.h"
#include "net/wire/handshake.h"

namespace distlab::net {

class TcpRuntime::Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Takes a connected socket (and sets its options); `peer` is the dialled
  // peer's ordinal, none for an accepted connection until its handshake.
  Connection(TcpRuntime& runtime, boost::asio::ip::tcp::socket socket, std::optional<int> peer);

  // The dialling side: hello first.
  void start_as_connector();
  void start_as_acceptor();

  // Queues a frame (handshake, goodbye); io thread.
  void write_frame(const Frame& frame);

  // Sends a message; the task's thread. When nothing is queued, the task
  // writes what the socket takes at once, itself: the io thread is not
  // woken for it, and the two threads share the work of a busy connection
  // (on loopback, the sender's system call also runs the receiving side of
  // TCP). What the socket does not take, the io thread writes, in order.
  // A borrowed send's payload is `borrowed`, not the message's own floats.
  void send_message(strategy::Message message,
                    std::optional<strategy::FloatRange> borrowed = std::nullopt);

  // io thread. What is still queued is dropped, and with it the loans of
  // borrowed sends.
  void close();
  // Ends the connection (io thread), as a broken one ends.
  void give_up(const std::string& why) { fail(why); }
  std::optional<int> peer() const { return peer_; }
  // Whether this task dialled it (rather than accepted it).
  bool dialled() const { return dialled_; }
  // An accepted connection's peer incarnation, as its hello said (0 for a
  // dialled one: the acceptor does not say).
  uint32_t peer_incarnation() const { return peer_incarnation_; }
  // Nothing left to write, and no payload lent to the peer (a closed
  // connection never writes again).
  bool idle();
  std::string peer_name() const;
  // This task offered the peer its memory and awaits the answer.
  bool awaiting_answer() const { return offer_open_.load(); }

 private:
  struct Outgoing {
    std::vector<std::byte> bytes;                // header (and a small frame's payload)
    std::unique_ptr<strategy::Message> message;  // a message's floats, written in place
    std::span<const std::byte> payload;
    std::vector<std::byte> filler;
    std::size_t written = 0;  // of bytes, then payload
    SendLoan loan;            // a borrowed send's claim on the caller's floats
    bool in_place = false;    // the peer reads the payload in place: bytes end with its address

    std::size_t size() const { return bytes.size() + payload.size(); }
    // What is left to write, as at most two buffers.
    std::array<std::span<const std::byte>, 2> rest() const {
      if (written < bytes.size()) {
        return {std::span<const std::byte>(bytes).subspan(written), payload};
      }
      return {payload.subspan(written - bytes.size()), std::span<const std::byte>()};
    }
  };

  // A payload the peer reads in place, kept (and the caller's floats on
  // loan) until the peer releases it.
  struct Lent {
    std::unique_ptr<strategy::Message> message;
    SendLoan loan;
  };
  using LentKey = std::pair<strategy::Tag, uint64_t>;  // tag, sequence

  Outgoing outgoing(strategy::Message message, std::optional<strategy::FloatRange> borrowed) const;
  bool write_without_blocking(Outgoing& out, std::string& error);
  void recycle(Outgoing& out);
  HandshakeConfig config() const;
  void write_next();
  void read_header();
  void on_header();
  template <typename Done>
  void read_payload(boost::asio::mutable_buffer target, Done done);
  void set_wake_bytes(std::size_t bytes);
  void on_control_frame();
  // The frames after the handshake that are not messages: payloads read
  // in place (frame.h's offer, accept, released).
  void on_frame_between_messages();
  void offer_memory();
  // The offer is answered, or never will be: connect() may return.
  void settle_offer();
  void on_released(const Released& released);
  // Reads the address that follows a kFlagInSenderMemory header, then the
  // payload from there into `target`; releases it, hands it to `done` and
  // goes on with the next header.
  template <typename Done>
  void read_in_place(std::span<std::byte> target, Done done);
  void on_read_error(const boost::system::error_code& error);
  void fail(const std::string& what);

  TcpRuntime& runtime_;
  boost::asio::ip::tcp::socket socket_;
  const int fd_;  // socket_'s descriptor, for the task thread's writes
  std::optional<int> peer_;
  const bool dialled_;
  uint32_t peer_incarnation_ = 0;
  std::variant<std::monostate, ConnectorHandshake, AcceptorHandshake> handshake_;
  std::array<std::byte, kHeaderBytes> header_bytes_{};
  FrameHeader current_;
  std::vector<std::byte> payload_;
  strategy::Message message_;
  std::optional<PostedReceives::Key> claimed_;  // the posted receive a payload is read into
  bool failed_ = false;
  bool goodbye_received_ = false;
  std::size_t wake_bytes_ = 1;  // the socket's receive low watermark

  // Payloads read in place (peer_memory.h): the bytes this task offers the
  // peer to find in its memory; what it reads of the peer's once it has
  // accepted the peer's offer (io thread); whether the peer accepted this
  // task's (the task's thread reads it as it sends).
  std::array<std::byte, 16> probe_{};
  std::atomic<bool> offer_open_{false};  // offered, not yet answered
  std::optional<PeerMemory> peer_memory_;
  std::array<std::byte, kAddressBytes> address_bytes_{};
  std::atomic<bool> peer_reads_in_place_{false};

  std::mutex write_mutex_;
  std::deque<Outgoing> queue_;    // what the io thread writes, in order
  bool writing_ = false;          // the io thread is writing: the task queues
  bool closed_ = false;           // failed or closed: nothing more is written
  std::map<LentKey, Lent> lent_;  // until the peer releases them
};

}  // namespace distlab::net
