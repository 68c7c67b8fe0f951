#include "net/runtime/tcp_runtime.h"

#include <algorithm>
#include <cstdio>
#include <future>
#include <optional>
#include <utility>

#include "common/cpu_clock.h"
#include "common/error.h"
#include "net/runtime/peer_memory.h"
#include "net/runtime/tcp_connection.h"
#include "net/wire/frame.h"

namespace distlab::net {

namespace asio = boost::asio;
using asio::ip::tcp;
using strategy::Message;
using strategy::TaskId;

TcpRuntime::TcpRuntime(TaskId self, ClusterAddresses cluster, TcpOptions options)
    : Runtime(self, cluster.spec(), strategy::Fidelity::kFull),
      addresses_(std::move(cluster)),
      options_(std::move(options)),
      self_ordinal_(Runtime::cluster().ordinal(self)),
      peers_(Runtime::cluster().task_count()),
      lost_since_(peers_.size()),
      lost_why_(peers_.size()),
      named_gone_(peers_.size(), false),
      inbox_(static_cast<int>(strategy::Tag::kLast) + 1) {
  if (options_.same_host_reads) allow_peer_reads();
}

TcpRuntime::~TcpRuntime() {
  keep_running_.reset();
  io_.stop();
  if (io_thread_.joinable()) io_thread_.join();
}

double TcpRuntime::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - options_.epoch).count();
}

double TcpRuntime::cpu_now() const {
  return process_cpu_seconds();
}

void TcpRuntime::recycle(Message&& message) {
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
  peer_lives_.resize(tasks);
  for (int peer = 0; peer < tasks; ++peer) peer_lives_[peer] = peer_incarnation(peer);
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
  // Every peer, but for one that connected and was lost longer than
  // rejoin_wait ago (a restartable task that finished, or died, while this
  // one still connected): the run goes on without it.
  bool all = false;
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    all = connected_ + gone_count(now) >= tasks - 1;
    if (all || !failure_.empty() || now >= deadline_) break;
    wait_for_change(lock, now, deadline_);
  }
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
  // The answers to this task's offers of its memory, so that its first
  // large payload already goes in place where it can: until the deadline,
  // after which payloads come over TCP until the answer does.
  const auto answered = [this] {
    return std::none_of(peers_.begin(), peers_.end(),
                        [](const auto& peer) { return peer && peer->awaiting_answer(); });
  };
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (answered() || !failure_.empty() || now >= deadline_) break;
    wait_for_change(lock, now, deadline_);
  }
  if (!failure_.empty()) throw_failure();
}

void TcpRuntime::accept_next() {
  acceptor_->async_accept([this](boost::system::error_code error, tcp::socket socket) {
    if (error) {
      if (error != asio::error::operation_aborted) log_event("accept failed: " + error.message());
      return;
    }
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
          {
            // The peer came back and dialled this task: nothing to retry.
            std::lock_guard lock(mutex_);
            if (peers_[peer]) return;
          }
          auto timer = std::make_shared<asio::steady_timer>(io_, backoff);
          timer->async_wait([this, peer, backoff, timer](auto) {
            dial(peer, std::min(backoff * 2, std::chrono::milliseconds(1000)));
          });
        };
        if (error) return retry();
        asio::async_connect(*socket, results, [this, peer, socket, retry](auto error, auto) {
          if (error) return retry();
          std::make_shared<Connection>(*this, std::move(*socket), peer)->start_as_connector();
        });
      });
}

// Two connections with one peer are a restart unless they cross: a peer
// that can restart dials every task when it comes back (dial_everyone),
// while a dial of this task's own, or of a peer's, may still be retrying
// from the start of the run, when the restarted task's earlier life was
// not yet listening. Both ends keep the connection the task that came back
// dialled, and close the other before a message travels on it: the task
// that came back tells a retrying dial by its incarnation (is_stale_dial),
// the other end by its being its own dial.
void TcpRuntime::on_connected(const std::shared_ptr<Connection>& connection) {
  const int peer = *connection->peer();
  std::shared_ptr<Connection> closed;
  bool back = false;
  {
    std::lock_guard lock(mutex_);
    std::shared_ptr<Connection>& current = peers_[peer];
    if (is_stale_dial(peer, *connection)) {
      closed = connection;
    } else if (!current) {
      current = connection;
      ++connected_;
      lost_since_[peer].reset();
    } else if (survives_loss_of(peer) && connection->dialled() && !current->dialled()) {
      closed = connection;  // this task's late dial: the peer's own is the one to keep
    } else if (survives_loss_of(peer)) {
      // The peer restarted before its old connection was seen to close.
      closed = std::exchange(current, connection);
      lost_since_[peer].reset();
      back = true;
    } else {
      failure_ = "two connections from " + connection->peer_name();
    }
    if (closed != connection && !connection->dialled()) {
      peer_lives_[peer] = std::max(peer_lives_[peer], connection->peer_incarnation());
    }
    changed_.notify_all();
  }
  if (back) log_event(connection->peer_name() + " is back on a new connection");
  if (closed) closed->close();
  // A peer that comes back after this task said its goodbyes gets one too.
  if (saying_goodbye_ && closed != connection) {
    connection->write_frame(goodbye_frame(static_cast<uint32_t>(self_ordinal_), ""));
  }
}

// A task that came back dials every peer itself. So a connection it
// accepts from a peer that cannot restart (which never dials a task twice),
// or from a life of the peer it already knows, is a dial retrying from
// before this task came back; only a newer life of the peer, restarted
// since, dials it anew. (Whether this task has yet seen every peer says
// nothing: such a dial may be in flight when it has.)
bool TcpRuntime::is_stale_dial(int peer, const Connection& connection) const {
  return options_.dial_everyone && !connection.dialled() &&
         (!survives_loss_of(peer) || connection.peer_incarnation() <= peer_lives_[peer]);
}

bool TcpRuntime::survives_loss_of(int peer) const {
  return options_.may_restart && options_.may_restart(cluster().task_at(peer));
}

void TcpRuntime::on_peer_lost(const std::shared_ptr<Connection>& connection,
                              const std::string& what) {
  std::lock_guard lock(mutex_);
  const int peer = *connection->peer();
  log_event(what + (reporting_ ? "" : "; the run goes on, it may come back"));
  auto& current = peers_[peer];
  if (current == connection) {
    current.reset();
    --connected_;
    lost_since_[peer] = std::chrono::steady_clock::now();
    lost_why_[peer] = what;
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
  loans_->mark_broken();
}

void TcpRuntime::throw_failure() {
  throw Error(strategy::task_name(self()) + ": " + failure_);
}

void TcpRuntime::transmit(TaskId to, Message&& message) {
  send_to(to, std::move(message), std::nullopt);
}

void TcpRuntime::transmit_borrowed(TaskId to, Message&& message, strategy::FloatRange values) {
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
  switch (loans_->wait_until_returned(options_.receive_timeout)) {
    case SendLoans::Wait::kReturned:
      return;
    case SendLoans::Wait::kBroken: {
      // The floats are free, but the sends did not happen.
      std::lock_guard lock(mutex_);
      throw_failure();
    }
    case SendLoans::Wait::kTimedOut:
      break;
  }
  throw Error(strategy::task_name(self()) + ": messages still unwritten after " +
              std::to_string(options_.receive_timeout.count() / 1000) +
              " s; a peer may have stopped reading");
}

void TcpRuntime::expect(const strategy::Posting& posting) {
  posted_.add(posting);
}

void TcpRuntime::unexpect(const strategy::Posting& posting) {
  posted_.withdraw(posting, [&] {
    std::shared_ptr<Connection> peer;
    {
      std::lock_guard lock(mutex_);
      peer = peers_[posting.peer];
    }
    if (peer) {
      asio::post(io_,
                 [peer] { peer->give_up("a receive was withdrawn while its message arrived"); });
    }
  });
}

Message TcpRuntime::receive(strategy::Tag tag) {
  std::unique_lock lock(mutex_);
  auto& inbox = inbox_[static_cast<int>(tag)];
  const auto deadline = std::chrono::steady_clock::now() + options_.receive_timeout;
  for (;;) {
    if (!inbox.empty()) {
      Message message = std::move(inbox.front());
      inbox.pop_front();
      return message;
    }
    if (!failure_.empty()) {
      throw Error(strategy::task_name(self()) + ": while waiting for a " + strategy::tag_name(tag) +
                  " message: " + failure_);
    }
    const auto now = std::chrono::steady_clock::now();
    if (const auto gone = names_gone_peers() ? next_gone(now) : std::nullopt) {
      const strategy::TaskId peer = cluster().task_at(*gone);
      char grace[32];
      std::snprintf(grace, sizeof grace, "%.3g s", options_.rejoin_wait.count() / 1000.0);
      throw strategy::PeerGone(peer, strategy::task_name(peer) + " left the run before its " +
                                         strategy::tag_name(tag) + " message came (" +
                                         lost_why_[*gone] + "; it did not come back within " +
                                         grace + ")");
    }
    if (now >= deadline) {
      throw Error(strategy::task_name(self()) + ": no " + strategy::tag_name(tag) +
                  " message within " + std::to_string(options_.receive_timeout.count() / 1000) +
                  " s; a peer may have stopped");
    }
    wait_for_change(lock, now, deadline);
  }
}

void TcpRuntime::await_reports_only() {
  asio::post(io_, [this] { reporting_ = true; });
}

void TcpRuntime::wait_for_change(std::unique_lock<std::mutex>& lock,
                                 std::chrono::steady_clock::time_point now,
                                 std::chrono::steady_clock::time_point deadline) {
  changed_.wait_until(lock, std::min(deadline, next_grace_end(now).value_or(deadline)));
}

std::optional<int> TcpRuntime::next_gone(std::chrono::steady_clock::time_point now) {
  for (std::size_t p = 0; p < lost_since_.size(); ++p) {
    if (lost_since_[p] && !named_gone_[p] && *lost_since_[p] + options_.rejoin_wait <= now) {
      named_gone_[p] = true;
      return static_cast<int>(p);
    }
  }
  return std::nullopt;
}

std::optional<std::chrono::steady_clock::time_point> TcpRuntime::next_grace_end(
    std::chrono::steady_clock::time_point now) const {
  std::optional<std::chrono::steady_clock::time_point> next;
  for (const auto& since : lost_since_) {
    if (!since) continue;
    const auto end = *since + options_.rejoin_wait;
    if (end > now && (!next || end < *next)) next = end;
  }
  return next;
}

int TcpRuntime::gone_count(std::chrono::steady_clock::time_point now) const {
  return static_cast<int>(std::count_if(
      lost_since_.begin(), lost_since_.end(),
      [&](const auto& since) { return since && *since + options_.rejoin_wait <= now; }));
}

void TcpRuntime::execute(const strategy::Work&, const std::function<void()>& work_fn) {
  if (work_fn) work_fn();
}

void TcpRuntime::begin_background(const std::vector<strategy::Work>& pieces, double factor,
                                  const BackgroundFn& work_fn) {
  if (!background_) {
    background_ = std::make_unique<BackgroundThread>(options_.prepare_background_thread,
                                                     [this] { return now(); });
  }
  background_->start(pieces.size(), factor, work_fn);
}

double TcpRuntime::await_background(std::size_t piece) {
  return background_->await(piece);
}

// A slow machine's extra time, spent as one: this thread keeps its core
// busy until the time is up (a sleep would hand the core to the others).
void TcpRuntime::hold(double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
  }
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
  // Every peer's goodbye, but for peers lost longer than rejoin_wait: no
  // goodbye comes from them.
  const int expected = cluster().task_count() - 1;
  const auto deadline = std::chrono::steady_clock::now() + options_.receive_timeout;
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (!failure_.empty() || goodbyes_ + gone_count(now) >= expected || now >= deadline) break;
    wait_for_change(lock, now, deadline);
  }
  if (!failure_.empty()) throw_failure();
  lock.unlock();
  // Every peer has said goodbye after its last message. Ours follow our
  // last messages on each connection: once every queue is written, the
  // connections can go.
  wait_until_written(std::chrono::steady_clock::now() + std::chrono::seconds(30));
  close_connections();
}

void TcpRuntime::abandon(const std::string& reason) noexcept {
  try {
    // The peers name this task themselves ("worker:1 stopped: ...").
    const std::string own = strategy::task_name(self()) + ": ";
    std::string why = reason.starts_with(own) ? reason.substr(own.size()) : reason;
    if (why.empty()) why = "an error";
    asio::post(io_, [this, why = std::move(why)] {
      saying_goodbye_ = true;
      for (auto& peer : peers_) {
        if (peer) peer->write_frame(goodbye_frame(static_cast<uint32_t>(self_ordinal_), why));
      }
    });
    wait_until_written(std::chrono::steady_clock::now() + std::chrono::seconds(1));
    close_connections();
  } catch (...) {
    // The task is failing already; its own error is the one to report.
  }
}

void TcpRuntime::wait_until_written(std::chrono::steady_clock::time_point until) {
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
}

void TcpRuntime::close_connections() {
  asio::post(io_, [this] {
    if (acceptor_) acceptor_->close();
    for (auto& peer : peers_) {
      if (peer) peer->close();
    }
  });
}

}  // namespace distlab::net
