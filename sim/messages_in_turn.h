// The order in which a task on a crowded machine takes messages that have
// arrived from several peers.
//
// ./realnet reads its connections on an I/O thread (Asio). When that
// thread gets a core and finds whole messages waiting on several
// connections, it reads one from each in turn: Asio queues a connection's
// next read behind the other connections' ready reads. Where the threads
// outnumber the cores, the I/O thread waits for a core while the task
// computes, so messages pile up and are taken in turn by sender, not in
// the order they came. A parameter server shows it: having applied one
// push, it takes the pushes waiting from the other workers before the
// pull that its pusher sent 12-18 us after it. In the real
// ps-async-6-wide runs 34-40% of the workers' pulls were taken after
// another worker's push that the server took after their own; simulated
// in arrival order, 1-5%. That order decides the staleness of every
// asynchronous update.
//
// The simulator takes messages in turn on a crowded host: the messages
// that arrived while the task was busy are held here by sender, and each
// receive takes the next sender's after the one last taken. A task that
// waits for a message takes it as it comes.
#pragma once

#include <deque>
#include <map>
#include <optional>

#include "strategy/message.h"

namespace distlab::sim {

class MessagesInTurn {
 public:
  // A message from the sender of cluster ordinal `sender`, arrived and not
  // yet taken.
  void add(int sender, strategy::Message message);
  bool empty() const { return by_sender_.empty(); }
  // The oldest message of the first sender after the one last taken (in
  // ordinal order, wrapping round); nothing when none is waiting.
  std::optional<strategy::Message> take();
  // A message taken as it came, not from here: the turn goes on after its
  // sender.
  void took_from(int sender) { last_sender_ = sender; }

 private:
  // Only senders with a message waiting, each's in the order sent.
  std::map<int, std::deque<strategy::Message>> by_sender_;
  int last_sender_ = -1;
};

}  // namespace distlab::sim
