// The Runtime's messages (runtime.h): each numbered per conversation (one
// peer, one tag) as it is sent, admitted on arrival only if it belongs to
// the current lives of both tasks, and handed over in its sender's order,
// posted receives included. Their time is accounted as waiting until the
// message began to arrive, and as communication after.
#include <algorithm>
#include <stdexcept>
#include <utility>

#include "common/error.h"
#include "strategy/runtime.h"

namespace distlab::strategy {

void Runtime::set_incarnations(uint32_t own,
                               std::shared_ptr<const std::vector<uint32_t>> everyone) {
  incarnation_ = own;
  start_incarnations_ = std::move(everyone);
  start_lives_ = start_incarnations_.get();
  learned_incarnations_.clear();
  peers_restarted_ = false;
}

void Runtime::set_incarnations(uint32_t own, std::vector<uint32_t> everyone) {
  set_incarnations(own, std::make_shared<const std::vector<uint32_t>>(std::move(everyone)));
}

uint32_t Runtime::peer_incarnation(int ordinal) const {
  if (ordinal == cluster_.ordinal(self_)) return incarnation_;
  // Looked up only once a peer has restarted: a simulated task asks for
  // every message it sends and receives, and the map is not touched.
  if (peers_restarted_) {
    const auto learned = learned_incarnations_.find(ordinal);
    if (learned != learned_incarnations_.end()) return learned->second;
  }
  const auto at = static_cast<std::size_t>(ordinal);
  return start_lives_ && at < start_lives_->size() ? (*start_lives_)[at] : 0;
}

bool Runtime::admit(const Message& message) {
  if (message.to_incarnation < incarnation_) return false;  // to a life of ours that is over
  const int peer = cluster_.ordinal(message.from);
  const uint32_t known = peer_incarnation(peer);
  if (message.from_incarnation < known) return false;  // from a life of theirs that is over
  if (message.from_incarnation > known) {
    // The peer restarted: both directions number from 0 again.
    learned_incarnations_[peer] = message.from_incarnation;
    peers_restarted_ = true;
    restart_conversations(peer);
  }
  return true;
}

namespace {
// A conversation's key: the peer's ordinal and the tag, in 32 bits.
static_assert(static_cast<int>(Tag::kLast) < 16);
uint32_t conversation_key(int peer, Tag tag) {
  return static_cast<uint32_t>(peer) << 4 | static_cast<uint32_t>(tag);
}
int peer_of(uint32_t key) {
  return static_cast<int>(key >> 4);
}
Tag tag_of(uint32_t key) {
  return static_cast<Tag>(key & 15);
}
}  // namespace

Runtime::Conversation& Runtime::conversation(int peer, Tag tag) {
  const uint32_t key = conversation_key(peer, tag);
  if (first_conversations_[0].key == key) return first_conversations_[0];
  if (first_conversations_[1].key == key) return first_conversations_[1];
  return conversation_in_table(key);
}

// A new conversation takes a free one of the first two, else its place in
// the table; so one that is in neither is in the table if anywhere.
Runtime::Conversation& Runtime::conversation_in_table(uint32_t key) {
  for (Conversation& c : first_conversations_) {
    if (c.key != kNoConversation) continue;
    c.key = key;
    return c;
  }
  Conversation& c = conversations_[key];
  c.key = key;
  return c;
}

template <class Visit>
void Runtime::for_each_conversation(Visit visit) {
  for (Conversation& c : first_conversations_) {
    if (c.key != kNoConversation) visit(c);
  }
  for (auto& [key, c] : conversations_) visit(c);
}

void Runtime::restart_conversations(int peer) {
  for_each_conversation([peer](Conversation& c) {
    if (peer_of(c.key) != peer) return;
    c.next_send = 0;
    c.next_expected = 0;
  });
  std::erase_if(stashes_, [&](const auto& entry) {
    if (peer_of(entry.first) != peer) return false;
    stashed_ -= static_cast<uint32_t>(entry.second.size());
    return true;
  });
}

void Runtime::stamp(TaskId to, Message& message) {
  const int peer = cluster_.ordinal(to);
  message.from = self_;
  message.from_incarnation = incarnation_;
  message.to_incarnation = peer_incarnation(peer);
  message.sequence = conversation(peer, message.tag).next_send++;
}

void Runtime::account_send(TaskId to, uint64_t bytes, double start, double end) {
  pending_.bytes_sent += bytes;
  ++pending_.messages_sent;
  spend(Foreground::kCommunication, Phase::kCommunication, start, end);
  account_cpu(Phase::kCommunication);
  if (end > start && keeps_spans()) add_span(SpanKind::kSend, start, end, task_name(to));
}

void Runtime::send(TaskId to, Message&& message) {
  stamp(to, message);
  const uint64_t bytes = message.bytes;
  const double start = now();
  transmit(to, std::move(message));
  account_send(to, bytes, start, now());
}

void Runtime::send_borrowed(TaskId to, Message header, FloatRange values) {
  header.values.clear();
  header.bytes = static_cast<uint64_t>(values.size()) * sizeof(float);
  stamp(to, header);
  const uint64_t bytes = header.bytes;
  const double start = now();
  transmit_borrowed(to, std::move(header), values);
  account_send(to, bytes, start, now());
}

void Runtime::wait_sends() {
  const double start = now();
  await_borrowed_sends();
  spend(Foreground::kCommunication, Phase::kCommunication, start, now());
  account_cpu(Phase::kCommunication);
}

void Runtime::transmit_borrowed(TaskId to, Message&& message, FloatRange values) {
  if (values.has_values()) message.values.assign(values.data(), values.data() + values.size());
  transmit(to, std::move(message));
}

void Runtime::await_borrowed_sends() {}
void Runtime::recycle(Message&&) {}
void Runtime::expect(const Posting&) {}
void Runtime::unexpect(const Posting&) {}

PostedReceive Runtime::post_recv(TaskId from, Tag tag, FloatRange into) {
  const int peer = cluster_.ordinal(from);
  Conversation& c = conversation(peer, tag);
  PostedReceive receive;
  receive.runtime_ = this;
  receive.posting_ = {.peer = peer,
                      .tag = tag,
                      .sequence = c.next_expected + c.posted++,
                      .from_incarnation = peer_incarnation(peer),
                      .to_incarnation = incarnation_,
                      .into = into};
  expect(receive.posting_);
  return receive;
}

namespace {
// The errors of wait(), out of its way: a simulated task waits millions of
// times, and their strings would widen every wait's stack frame.
[[noreturn, gnu::cold, gnu::noinline]] void throw_out_of_turn(TaskId self, TaskId from) {
  throw Error(task_name(self) + ": a posted receive from " + task_name(from) +
              " waited for out of turn (or its sender restarted)");
}
[[noreturn, gnu::cold, gnu::noinline]] void throw_wrong_size(TaskId self, TaskId from,
                                                             uint64_t bytes, int64_t floats) {
  throw Error(task_name(self) + ": " + task_name(from) + " sent " + std::to_string(bytes) +
              " bytes where " + std::to_string(floats * static_cast<int64_t>(sizeof(float))) +
              " were expected");
}
}  // namespace

Message Runtime::wait(PostedReceive& receive) {
  if (receive.runtime_ != this) throw std::logic_error("Runtime::wait: not a receive posted here");
  const Posting& posting = receive.posting_;  // kept by the handle once withdrawn
  if (conversation(posting.peer, posting.tag).next_expected != posting.sequence) {
    throw_out_of_turn(self_, cluster_.task_at(posting.peer));
  }
  // Should the receive throw, the handle withdraws the posting as it goes:
  // nothing is written into `into` once the caller has given up on it.
  Message message =
      stashed_ == 0 ? receive_posted(posting) : recv(cluster_.task_at(posting.peer), posting.tag);
  receive.withdraw();
  const int64_t n = posting.into.size();
  if (message.bytes != static_cast<uint64_t>(n) * sizeof(float)) {
    throw_wrong_size(self_, cluster_.task_at(posting.peer), message.bytes, n);
  }
  if (!message.delivered && posting.into.has_values() && !message.values.empty()) {
    std::copy(message.values.begin(), message.values.end(), posting.into.data());
    message.values.clear();
  }
  return message;
}

void Runtime::withdraw(const Posting& posting) noexcept {
  unexpect(posting);
  --conversation(posting.peer, posting.tag).posted;
}

PostedReceive::PostedReceive(PostedReceive&& other) noexcept
    : runtime_(std::exchange(other.runtime_, nullptr)), posting_(other.posting_) {}

PostedReceive& PostedReceive::operator=(PostedReceive&& other) noexcept {
  if (this != &other) {
    withdraw();
    runtime_ = std::exchange(other.runtime_, nullptr);
    posting_ = other.posting_;
  }
  return *this;
}

PostedReceive::~PostedReceive() {
  withdraw();
}

void PostedReceive::withdraw() noexcept {
  if (runtime_ != nullptr) std::exchange(runtime_, nullptr)->withdraw(posting_);
}

std::optional<Message> Runtime::take_stashed(TaskId from, Tag tag) {
  if (stashed_ == 0) return std::nullopt;
  const int peer = cluster_.ordinal(from);
  const auto stash = stashes_.find(conversation_key(peer, tag));
  if (stash == stashes_.end()) return std::nullopt;
  Conversation& c = conversation(peer, tag);
  const auto next = stash->second.find(c.next_expected);
  if (next == stash->second.end()) return std::nullopt;
  Message message = std::move(next->second);
  stash->second.erase(next);
  if (stash->second.empty()) stashes_.erase(stash);
  --stashed_;
  ++c.next_expected;
  return message;
}

Message Runtime::recv(TaskId from, Tag tag) {
  return next_in_sequence(tag, from);
}

Message Runtime::recv_any(Tag tag) {
  return next_in_sequence(tag, std::nullopt);
}

Message Runtime::recv_any_or_gone(Tag tag) {
  names_gone_peers_ = true;
  try {
    Message message = next_in_sequence(tag, std::nullopt);
    names_gone_peers_ = false;
    return message;
  } catch (...) {
    names_gone_peers_ = false;
    throw;
  }
}

std::optional<Message> Runtime::take_stashed_any(Tag tag) {
  if (stashed_ == 0) return std::nullopt;
  std::optional<int> first;  // the first sender by ordinal with its next message here
  for (const auto& [key, stash] : stashes_) {
    const int peer = peer_of(key);
    if (tag_of(key) != tag || (first && *first < peer)) continue;
    if (stash.contains(conversation(peer, tag).next_expected)) first = peer;
  }
  if (!first) return std::nullopt;
  return take_stashed(cluster_.task_at(*first), tag);
}

// Every message that arrives is accounted for as it arrives, dropped if it
// belongs to a life that is over, and handed over only in its sender's
// order: one that overtook an earlier message, or that comes from another
// sender than the one asked for, waits in the stash.
Message Runtime::next_in_sequence(Tag tag, std::optional<TaskId> from) {
  if (stashed_ > 0 && stash_holds_next(tag, from)) return take_stashed_next(tag, from);
  return receive_in_sequence(tag, from);
}

// One return of one local, so that the message is built where the caller
// keeps it: a simulated ring member among a thousand finds each stack line
// a copy writes out of the caches.
Message Runtime::receive_accounted(Tag tag, double& arrived) {
  const double start = now();
  Message message = receive(tag);
  arrived = now();
  account_receive(message, start, arrived);
  return message;
}

Message Runtime::receive_in_sequence(Tag tag, std::optional<TaskId> from) {
  double arrived;
  Message message = receive_accounted(tag, arrived);
  const bool admitted = admit(message);
  if (!admitted || !hand_over(message, tag, from)) {
    receive_until_in_turn(message, admitted, tag, from, arrived);
  }
  return message;
}

Message Runtime::receive_posted(const Posting& posting) {
  double arrived;
  Message message = receive_accounted(posting.tag, arrived);
  const bool admitted = admit(message);
  if (!admitted || !hand_over_posted(message, posting)) {
    receive_posted_until_in_turn(message, admitted, posting, arrived);
  }
  return message;
}

// hand_over() with `from` the posting's peer: ordinals and tasks are one
// to one.
bool Runtime::hand_over_posted(const Message& message, const Posting& posting) {
  const int sender = cluster_.ordinal(message.from);
  if (sender != posting.peer) return false;
  Conversation& c = conversation(sender, posting.tag);
  if (message.sequence != c.next_expected) return false;
  ++c.next_expected;
  return true;
}

void Runtime::receive_posted_until_in_turn(Message& message, bool admitted, const Posting& posting,
                                           double start) {
  receive_until_in_turn(message, admitted, posting.tag, cluster_.task_at(posting.peer), start);
}

bool Runtime::hand_over(const Message& message, Tag tag, std::optional<TaskId> from) {
  Conversation& c = conversation(cluster_.ordinal(message.from), tag);
  if ((from && message.from != *from) || message.sequence != c.next_expected) return false;
  ++c.next_expected;
  return true;
}

void Runtime::receive_until_in_turn(Message& message, bool admitted, Tag tag,
                                    std::optional<TaskId> from, double start) {
  for (;;) {
    if (admitted && stash_out_of_turn(message, tag, from.value_or(message.from))) return;
    message = receive(tag);
    const double arrived = now();
    account_receive(message, start, arrived);
    start = arrived;
    admitted = admit(message);
    if (admitted && hand_over(message, tag, from)) return;
  }
}

// The stash's work is out of the way of next_in_sequence(), which a
// simulated task runs millions of times: its optionals would widen that
// function's stack frame, and every line of it is a cache miss when the
// task runs again among a thousand.
bool Runtime::stash_holds_next(Tag tag, std::optional<TaskId> from) {
  const auto holds_next = [&](uint32_t key, const Stash& stash) {
    return stash.contains(conversation(peer_of(key), tag).next_expected);
  };
  if (from) {
    const uint32_t key = conversation_key(cluster_.ordinal(*from), tag);
    const auto stash = stashes_.find(key);
    return stash != stashes_.end() && holds_next(key, stash->second);
  }
  for (const auto& [key, stash] : stashes_) {
    if (tag_of(key) == tag && holds_next(key, stash)) return true;
  }
  return false;
}

Message Runtime::take_stashed_next(Tag tag, std::optional<TaskId> from) {
  return std::move(*(from ? take_stashed(*from, tag) : take_stashed_any(tag)));
}

bool Runtime::stash_out_of_turn(Message& message, Tag tag, TaskId wanted) {
  const uint32_t key = conversation_key(cluster_.ordinal(message.from), tag);
  if (stashes_[key].emplace(message.sequence, std::move(message)).second) ++stashed_;
  std::optional<Message> stashed = take_stashed(wanted, tag);
  if (!stashed) return false;
  message = std::move(*stashed);
  return true;
}

// Time blocked before the message began to arrive was spent waiting for the
// peer; the rest was the transfer. Bytes count when a message arrives, even
// one kept in the stash for later.
void Runtime::account_receive(const Message& message, double blocked_from, double blocked_to) {
  const double begin = std::clamp(message.available_at, blocked_from, blocked_to);
  const double waiting = begin - blocked_from;
  const double transfer = blocked_to - begin;
  pending_.bytes_received += message.bytes;
  ++pending_.messages_received;
  spend(Foreground::kWaiting, Phase::kWaiting, blocked_from, begin);
  spend(Foreground::kCommunication, Phase::kCommunication, begin, blocked_to);
  // One reading for the whole receive: the CPU of a wait is the process's
  // other threads at work (sends going out), counted with the transfer.
  account_cpu(Phase::kCommunication);
  if (waiting > 0 || transfer > 0) receive_spans(message, blocked_from, begin, blocked_to);
}

// Labels are built only for spans that are kept, and out of the way of
// account_receive(): a large simulation receives millions of messages,
// and their strings would widen its stack frame.
void Runtime::receive_spans(const Message& message, double blocked_from, double begin,
                            double blocked_to) {
  if (begin > blocked_from && keeps_spans()) {
    add_span(SpanKind::kWait, blocked_from, begin, task_name(message.from));
  }
  if (blocked_to > begin && keeps_spans()) {
    std::string label = tag_name(message.tag);
    label += " from ";
    label += task_name(message.from);
    add_span(SpanKind::kReceive, begin, blocked_to, label);
  }
}

}  // namespace distlab::strategy
