// The Runtime over TCP, with Boost.Asio: one connection between every two
// tasks (the task with the higher ordinal dials), every byte a frame
// (frame.h), every connection opened by the handshake (handshake.h).
//
// The io_context runs on its own thread; the strategy's calls block on the
// runtime's own state, never on a socket:
//   - send() writes what the socket takes at once, from the task's thread,
//     and leaves the rest to the io thread (buffered, as runtime.h
//     requires); one write is in flight per connection, and a message's
//     floats are written from the message itself, without a copy;
//   - payloads are read straight into the floats of a posted receive
//     (Runtime::post_recv) when one waits for the message; others are read
//     into the received message's floats, in buffers of messages already
//     written when there are some (a ring passes on what it receives:
//     buffer_pool.h);
//   - a borrowed send (Runtime::send_borrowed) is written from the
//     caller's floats, which wait_sends() hands back once every one of them
//     is written or dropped with its connection;
//   - receive() waits for the inbox of its tag, with a timeout;
//   - a frame that is malformed, oversized or unexpected closes its
//     connection with a log line naming the peer, and the run fails with
//     that reason rather than hanging.
// Start-up works in any order: a task dials its peers again and again, with
// back-off, until the connect deadline, then names the peers that never came.
// A peer that may restart (TcpOptions::may_restart) may also come back
// later: it dials everyone again, and its new connection replaces the old.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "net/cluster/cluster_config.h"
#include "net/runtime/asio.h"
#include "net/runtime/background_thread.h"
#include "net/runtime/buffer_pool.h"
#include "net/runtime/posted_receives.h"
#include "net/runtime/send_loans.h"
#include "strategy/runtime.h"

namespace distlab::net {

struct TcpOptions {
  std::string secret;  // cluster secret; empty: loopback only
  std::chrono::milliseconds connect_deadline{60'000};
  std::chrono::milliseconds receive_timeout{600'000};
  // The origin of now(): all tasks of a launcher share one, so that their
  // timelines line up (steady_clock is one clock for all processes of a
  // machine). Default: when the runtime was made.
  std::chrono::steady_clock::time_point epoch = std::chrono::steady_clock::now();
  std::function<void(const std::string&)> log;  // one line per event worth a log
  // Peers whose loss this task survives because a restart policy brings
  // them back (asynchronous workers): their connection may close without a
  // goodbye, and a new connection from them replaces it. Null: any lost
  // peer ends the run.
  std::function<bool(strategy::TaskId)> may_restart;
  // This task was restarted into a run that went on without it: it dials
  // every peer, since none of them dials it again.
  bool dial_everyone = false;
  // A peer whose machine vanishes (no FIN, no RST) is noticed within about
  // this long: TCP keepalive probes on idle connections, and a user timeout
  // on unacknowledged data. A killed process is noticed at once: its kernel
  // closes its connections.
  std::chrono::milliseconds dead_peer_timeout{5'000};
  // How long a peer whose connection closed without a goodbye may take to
  // come back (restarted) before it counts as gone: connect() and
  // disconnect() wait no longer for it, and recv_any_or_gone() says so
  // (strategy::PeerGone).
  std::chrono::milliseconds rejoin_wait{15'000};
  // Run first on the thread that computes beside the task's communication
  // (strategy::Runtime::start_background): the NN core's thread count is a
  // setting of each thread.
  std::function<void()> prepare_background_thread;
  // Between tasks of one host (peers at loopback addresses), payloads of
  // 64 KiB and more are read straight from the sender's memory, one copy,
  // rather than sent through loopback TCP's two (peer_memory.h), wherever
  // the kernel lets the two processes read each other's memory; elsewhere
  // they keep coming over TCP. Off by default: a run on one host usually
  // stands for a run across hosts, whose payloads can only come over TCP.
  bool same_host_reads = false;
};

class TcpRuntime : public strategy::Runtime {
 public:
  TcpRuntime(strategy::TaskId self, ClusterAddresses cluster, TcpOptions options);
  ~TcpRuntime() override;

  // Listens, dials and handshakes until every peer is connected. Throws
  // Error naming the peers that never came, or InputError for a listening
  // address that needs a secret.
  void connect();
  // Training is over here; what peers send now is their reports and
  // goodbyes. From the call on, any peer whose connection closes without a
  // goodbye is lost rather than failed, as a restartable one always is.
  // A lost peer not back within TcpOptions::rejoin_wait has left for good:
  // recv_any_or_gone() throws strategy::PeerGone naming it, once, rather
  // than waiting out the receive timeout.
  void await_reports_only();
  // Sends a goodbye to every peer after the last message and waits for
  // theirs, so that no task closes while a peer still sends to it.
  void disconnect();
  // Tells every connected peer why this task stops before its end (its own
  // error, `reason`), so that a peer waiting for it fails naming the cause
  // rather than a closed connection. Waits a moment for the goodbyes to be
  // written; never throws.
  void abandon(const std::string& reason) noexcept;

  double now() const override;
  // The process's CPU time: a task of ./realnet is a process of its own
  // (tasks sharing a process, as in tests, share the figure).
  double cpu_now() const override;
  void recycle(strategy::Message&& message) override;
  // A posted receive's payload is read from the socket into its floats.
  bool reads_into_postings() const override { return true; }
  const ClusterAddresses& addresses() const { return addresses_; }
  // Payloads this task has read from its peers' memory
  // (TcpOptions::same_host_reads).
  uint64_t payloads_read_in_place() const { return read_in_place_.load(std::memory_order_relaxed); }

 protected:
  void transmit(strategy::TaskId to, strategy::Message&& message) override;
  strategy::Message receive(strategy::Tag tag) override;
  void execute(const strategy::Work& work, const std::function<void()>& work_fn) override;
  void store(uint64_t bytes, const std::function<void()>& io_fn) override;
  void hold(double seconds) override;
  void transmit_borrowed(strategy::TaskId to, strategy::Message&& message,
                         strategy::FloatRange values) override;
  void await_borrowed_sends() override;
  void expect(const strategy::Posting& posting) override;
  void unexpect(const strategy::Posting& posting) override;
  void begin_background(const std::vector<strategy::Work>& pieces, double factor,
                        const BackgroundFn& work_fn) override;
  double await_background(std::size_t piece) override;

 private:
  class Connection;
  friend class Connection;

  // Hands `message` (with `borrowed` as its payload, if given) to the
  // connection to `to`.
  void send_to(strategy::TaskId to, strategy::Message message,
               std::optional<strategy::FloatRange> borrowed);
  void accept_next();
  void dial(int peer, std::chrono::milliseconds backoff);
  void on_connected(const std::shared_ptr<Connection>& connection);
  // A connection to a peer that may restart was lost: the run goes on.
  void on_peer_lost(const std::shared_ptr<Connection>& connection, const std::string& what);
  bool survives_loss_of(int peer) const;
  // Under mutex_: a lost peer whose rejoin_wait is over and that was not
  // named yet (it is named now); when the next lost peer's rejoin_wait
  // ends; how many peers are gone.
  std::optional<int> next_gone(std::chrono::steady_clock::time_point now);
  // Waits, under mutex_, for a change, the deadline or the end of a lost
  // peer's rejoin_wait, whichever comes first.
  void wait_for_change(std::unique_lock<std::mutex>& lock,
                       std::chrono::steady_clock::time_point now,
                       std::chrono::steady_clock::time_point deadline);
  std::optional<std::chrono::steady_clock::time_point> next_grace_end(
      std::chrono::steady_clock::time_point now) const;
  int gone_count(std::chrono::steady_clock::time_point now) const;
  // Whether an accepted connection is a dial that should never have
  // reached this task (see on_connected). Under mutex_.
  bool is_stale_dial(int peer, const Connection& connection) const;
  void on_message(strategy::Message message);
  void on_goodbye(int peer, const std::string& reason);
  // Waits until every connection has written its queue, or `until`.
  void wait_until_written(std::chrono::steady_clock::time_point until);
  void close_connections();
  void on_failure(const std::string& what);
  [[noreturn]] void throw_failure();
  // One line to options_.log, prefixed with this task's name.
  void log_event(const std::string& line) const;

  ClusterAddresses addresses_;
  TcpOptions options_;
  int self_ordinal_;
  std::chrono::steady_clock::time_point deadline_;

  boost::asio::io_context io_;
  // Keeps io_ running while it has nothing to do (a task without peers, or
  // between messages), so that what is posted to it always runs.
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> keep_running_{
      io_.get_executor()};
  std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor_;
  std::vector<std::shared_ptr<Connection>> peers_;  // by ordinal; null for self
  std::thread io_thread_;
  bool saying_goodbye_ = false;  // io thread only: disconnect() has begun
  bool reporting_ = false;       // io thread only: await_reports_only() was called
  // Buffers of written messages, reused for payloads.
  BufferPool spare_buffers_{std::size_t{64} << 20};

  // Shared with the io thread, under mutex_.
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  int connected_ = 0;
  // Each peer's newest incarnation met: the launcher's as of this task's
  // start, then any newer one an accepted hello names.
  std::vector<uint32_t> peer_lives_;
  int goodbyes_ = 0;
  std::string failure_;
  // Since when each peer has had no connection (lost, not yet back), what
  // was said of it, and whether recv_any_or_gone() has named it gone.
  std::vector<std::optional<std::chrono::steady_clock::time_point>> lost_since_;
  std::vector<std::string> lost_why_;
  std::vector<bool> named_gone_;
  std::vector<std::deque<strategy::Message>> inbox_;  // by tag

  std::atomic<uint64_t> read_in_place_{0};
  PostedReceives posted_;  // under its own lock, as are the loans
  // Shared with the connections' queues, which may outlive this runtime.
  std::shared_ptr<SendLoans> loans_ = std::make_shared<SendLoans>();
  // Made at the first background computation; last, so that it stops first.
  std::unique_ptr<BackgroundThread> background_;
};

}  // namespace distlab::net
