// The boxes that carry messages through SimGrid's mailboxes: one for each
// message in flight, filled by its sender and emptied by its receiver (or
// by SimGrid, for a detached message that nobody took).
//
// A box is two cache lines: the message's header in the first, its floats
// (full fidelity, or a text message) in the second. A receiver reads the
// second only when the sender put floats there, so that in timing fidelity
// a member of a simulated ring of a thousand, which finds the box out of
// the caches, reads one line a message rather than the 96-byte Message
// across two or three.
//
// Boxes are kept on a free list of their own rather than handed back to
// malloc: a ring of a thousand boxes millions of messages, and malloc,
// whose per-thread cache holds only a few blocks of a size, would then walk
// its bins for most of them, a few cache lines each time. Here a box is a
// pointer's push and pop, and the box a sender fills is the one a receiver
// has just emptied, still in the caches.
#pragma once

#include <cstdint>
#include <vector>

#include "strategy/message.h"

namespace distlab::sim {

class alignas(64) MessageBox {
 public:
  explicit MessageBox(strategy::Message&& message);
  MessageBox(const MessageBox&) = delete;
  MessageBox& operator=(const MessageBox&) = delete;
  ~MessageBox();

  strategy::TaskId from() const { return from_; }
  strategy::Tag tag() const { return tag_; }
  uint64_t bytes() const { return bytes_; }

  // The message, moved out: the box holds no floats after.
  strategy::Message take();

 private:
  // The header: every field of a Message but its floats, in one line.
  strategy::TaskId from_;
  strategy::Tag tag_;
  bool delivered_;
  bool has_values_;  // whether values_ below holds a vector
  int32_t op_;
  int64_t step_;
  int64_t version_;
  uint64_t sequence_;
  uint32_t from_incarnation_;
  uint32_t to_incarnation_;
  uint64_t bytes_;
  double available_at_;
  // The floats, in the second line, made only when there are any: an
  // empty vector would still be three words written and read there.
  alignas(64) unsigned char values_[sizeof(std::vector<float>)];

  std::vector<float>& values();
};
static_assert(sizeof(MessageBox) == 128, "a header line and a floats line");

// A box holding `message`, moved in.
MessageBox* box_message(strategy::Message&& message);
// Destroys the message in `box` and keeps the box for the next one; null
// does nothing.
void free_box(MessageBox* box) noexcept;

// Owns a box, and frees it when it goes.
class BoxedMessage {
 public:
  explicit BoxedMessage(MessageBox* box) : box_(box) {}
  BoxedMessage(const BoxedMessage&) = delete;
  BoxedMessage& operator=(const BoxedMessage&) = delete;
  ~BoxedMessage() { free_box(box_); }

  MessageBox& operator*() const { return *box_; }
  MessageBox* operator->() const { return box_; }

 private:
  MessageBox* box_;
};

}  // namespace distlab::sim
