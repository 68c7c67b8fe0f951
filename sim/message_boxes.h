// The boxes that carry messages through SimGrid's mailboxes: one for each
// message in flight, filled by its sender and emptied by its receiver (or
// by SimGrid, for a detached message that nobody took).
//
// Kept on a free list of their own rather than handed back to malloc: a
// simulated ring of a thousand members boxes millions of messages, and
// malloc, whose per-thread cache holds only a few boxes of a size, would
// then walk its bins for most of them, a few cache lines each time. Here a
// box is a pointer's push and pop, and the box a sender fills is the one a
// receiver has just emptied, still in the caches.
#pragma once

#include "strategy/message.h"

namespace distlab::sim {

// A box holding `message`, moved in.
strategy::Message* box_message(strategy::Message&& message);
// Destroys the message in `box` and keeps the box for the next one; null
// does nothing.
void free_box(strategy::Message* box) noexcept;

// Owns a box, and frees it when it goes.
class BoxedMessage {
 public:
  explicit BoxedMessage(strategy::Message* box) : box_(box) {}
  BoxedMessage(const BoxedMessage&) = delete;
  BoxedMessage& operator=(const BoxedMessage&) = delete;
  ~BoxedMessage() { free_box(box_); }

  strategy::Message& operator*() const { return *box_; }
  strategy::Message* operator->() const { return box_; }

 private:
  strategy::Message* box_;
};

}  // namespace distlab::sim
