#include "strategy/runtime.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "common/error.h"

namespace distlab::strategy {

const char* span_kind_name(SpanKind kind) {
  switch (kind) {
    case SpanKind::kCompute:
      return "compute";
    case SpanKind::kSend:
      return "send";
    case SpanKind::kReceive:
      return "receive";
    case SpanKind::kWait:
      return "wait";
    case SpanKind::kCheckpoint:
      return "checkpoint";
    case SpanKind::kBackground:
      return "background";
    case SpanKind::kInput:
      return "input";
  }
  return "?";
}

Runtime::Runtime(TaskId self, ClusterSpec cluster, Fidelity fidelity)
    : self_(self), cluster_(cluster), fidelity_(fidelity) {
  log_.task = self;
}

void Runtime::set_incarnations(uint32_t own,
                               std::shared_ptr<const std::vector<uint32_t>> everyone) {
  incarnation_ = own;
  start_incarnations_ = std::move(everyone);
  learned_incarnations_.clear();
  learned_incarnations_[cluster_.ordinal(self_)] = own;
}

void Runtime::set_incarnations(uint32_t own, std::vector<uint32_t> everyone) {
  set_incarnations(own, std::make_shared<const std::vector<uint32_t>>(std::move(everyone)));
}

uint32_t Runtime::peer_incarnation(int ordinal) const {
  const auto learned = learned_incarnations_.find(ordinal);
  if (learned != learned_incarnations_.end()) return learned->second;
  const auto at = static_cast<std::size_t>(ordinal);
  return start_incarnations_ && at < start_incarnations_->size() ? (*start_incarnations_)[at] : 0;
}

bool Runtime::admit(const Message& message) {
  if (message.to_incarnation < incarnation_) return false;  // to a life of ours that is over
  const int peer = cluster_.ordinal(message.from);
  const uint32_t known = peer_incarnation(peer);
  if (message.from_incarnation < known) return false;  // from a life of theirs that is over
  if (message.from_incarnation > known) {
    // The peer restarted: both directions number from 0 again.
    learned_incarnations_[peer] = message.from_incarnation;
    restart_conversations(peer);
  }
  return true;
}

namespace {
uint64_t conversation_key(int peer, Tag tag) {
  return static_cast<uint64_t>(static_cast<uint32_t>(peer)) << 16 | static_cast<uint16_t>(tag);
}
}  // namespace

Runtime::Conversation& Runtime::conversation(int peer, Tag tag) {
  const uint64_t key = conversation_key(peer, tag);
  if (recent_[0].second && recent_[0].first == key) return *recent_[0].second;
  if (recent_[1].second && recent_[1].first == key) {
    std::swap(recent_[0], recent_[1]);
    return *recent_[0].second;
  }
  Conversation& found = conversations_[key];
  recent_[1] = recent_[0];
  recent_[0] = {key, &found};
  return found;
}

void Runtime::restart_conversations(int peer) {
  for (auto& [key, c] : conversations_) {
    if (static_cast<int>(key >> 16) != peer) continue;
    c.next_send = 0;
    c.next_expected = 0;
    stashed_ -= c.stash.size();
    c.stash.clear();
  }
}

void Runtime::stamp(TaskId to, Message& message) {
  const int peer = cluster_.ordinal(to);
  message.from = self_;
  message.from_incarnation = incarnation_;
  message.to_incarnation = peer_incarnation(peer);
  message.sequence = conversation(peer, message.tag).next_send++;
}

void Runtime::account_send(TaskId to, uint64_t bytes, double start, double end) {
  log_.bytes_sent += bytes;
  ++log_.messages_sent;
  if (step_) step_->bytes_sent += bytes;
  spend(Foreground::kCommunication, Phase::kCommunication, start, end);
  account_cpu(Phase::kCommunication);
  if (end > start && keeps_spans()) add_span(SpanKind::kSend, start, end, task_name(to));
}

void Runtime::send(TaskId to, Message message) {
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

void Runtime::transmit_borrowed(TaskId to, Message message, FloatRange values) {
  if (values.has_values()) message.values.assign(values.data(), values.data() + values.size());
  transmit(to, std::move(message));
}

void Runtime::await_borrowed_sends() {}
void Runtime::recycle(Message) {}
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

Message Runtime::wait(PostedReceive& receive) {
  if (receive.runtime_ != this) throw std::logic_error("Runtime::wait: not a receive posted here");
  const Posting posting = receive.posting_;
  const TaskId from = cluster_.task_at(posting.peer);
  if (conversation(posting.peer, posting.tag).next_expected != posting.sequence) {
    throw Error(task_name(self_) + ": a posted receive from " + task_name(from) +
                " waited for out of turn (or its sender restarted)");
  }
  // Should recv() throw, the handle withdraws the posting as it goes: nothing
  // is written into `into` once the caller has given up on it.
  Message message = recv(from, posting.tag);
  receive.withdraw();
  const int64_t n = posting.into.size();
  if (message.bytes != static_cast<uint64_t>(n) * sizeof(float)) {
    throw Error(task_name(self_) + ": " + task_name(from) + " sent " +
                std::to_string(message.bytes) + " bytes where " +
                std::to_string(n * static_cast<int64_t>(sizeof(float))) + " were expected");
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
  Conversation& c = conversation(cluster_.ordinal(from), tag);
  auto next = c.stash.find(c.next_expected);
  if (next == c.stash.end()) return std::nullopt;
  Message message = std::move(next->second);
  c.stash.erase(next);
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
  for (const auto& [key, c] : conversations_) {
    const int peer = static_cast<int>(key >> 16);
    if (static_cast<Tag>(key & 0xffff) != tag || (first && *first < peer)) continue;
    if (c.stash.contains(c.next_expected)) first = peer;
  }
  if (!first) return std::nullopt;
  return take_stashed(cluster_.task_at(*first), tag);
}

// Every message that arrives is accounted for as it arrives, dropped if it
// belongs to a life that is over, and handed over only in its sender's
// order: one that overtook an earlier message, or that comes from another
// sender than the one asked for, waits in the stash.
Message Runtime::next_in_sequence(Tag tag, std::optional<TaskId> from) {
  if (auto stashed = from ? take_stashed(*from, tag) : take_stashed_any(tag)) {
    return std::move(*stashed);
  }
  double start = now();
  for (;;) {
    Message message = receive(tag);
    const double arrived = now();
    account_receive(message, start, arrived);
    start = arrived;
    if (!admit(message)) continue;
    const TaskId sender = message.from;
    Conversation& c = conversation(cluster_.ordinal(sender), tag);
    if ((!from || sender == *from) && message.sequence == c.next_expected) {
      ++c.next_expected;
      return message;
    }
    if (c.stash.emplace(message.sequence, std::move(message)).second) ++stashed_;
    if (auto stashed = take_stashed(from.value_or(sender), tag)) return std::move(*stashed);
  }
}

// Time blocked before the message began to arrive was spent waiting for the
// peer; the rest was the transfer. Bytes count when a message arrives, even
// one kept in the stash for later.
void Runtime::account_receive(const Message& message, double blocked_from, double blocked_to) {
  const double begin = std::clamp(message.available_at, blocked_from, blocked_to);
  const double waiting = begin - blocked_from;
  const double transfer = blocked_to - begin;
  log_.bytes_received += message.bytes;
  ++log_.messages_received;
  if (step_) step_->bytes_received += message.bytes;
  spend(Foreground::kWaiting, Phase::kWaiting, blocked_from, begin);
  spend(Foreground::kCommunication, Phase::kCommunication, begin, blocked_to);
  // One reading for the whole receive: the CPU of a wait is the process's
  // other threads at work (sends going out), counted with the transfer.
  account_cpu(Phase::kCommunication);
  // Labels are built only for spans that are kept: a large simulation
  // receives millions of messages.
  if (waiting > 0 && keeps_spans()) {
    add_span(SpanKind::kWait, blocked_from, begin, task_name(message.from));
  }
  if (transfer > 0 && keeps_spans()) {
    std::string label = tag_name(message.tag);
    label += " from ";
    label += task_name(message.from);
    add_span(SpanKind::kReceive, begin, blocked_to, label);
  }
}

void Runtime::compute(const Work& work, const std::function<void()>& work_fn) {
  const double start = now();
  execute(work, work_fn);
  if (slowdown_.any()) {
    const double factor = slowdown_.factor(step_ ? step_->step : -1, start);
    if (factor > 1) {
      settle();  // the computation's whole time, before its extra is reckoned
      const double extra = (factor - 1) * (now() - start);
      hold(extra);
      log_.slowdown_seconds += extra;
    }
  }
  const double end = now();
  spend(Foreground::kCompute, work.phase, start, end);
  account_cpu(work.phase);
  if (end > start) add_span(SpanKind::kCompute, start, end, work.label);
}

void Runtime::start_background(std::vector<Work> pieces, BackgroundFn work_fn) {
  if (background_) throw Error(task_name(self_) + ": a background computation is already running");
  if (!step_) throw Error(task_name(self_) + ": a background computation outside a step");
  Background background;
  background.factor = slowdown_.any() ? slowdown_.factor(step_->step, now()) : 1.0;
  background.phase = pieces.empty() ? Phase::kOther : pieces.front().phase;
  for (const Work& piece : pieces) background.labels.push_back(piece.label);
  // Its CPU is the computation's: the marks stop until the join.
  account_cpu(Phase::kOther);
  // From here: a backend that settles what came before first (the forward
  // pass, which on shared cores may take longer than it reckoned) counts
  // the difference as this computation's, as one computation after the
  // other would.
  background.start = now();
  begin_background(pieces, background.factor, work_fn);
  background_ = std::move(background);
}

void Runtime::await_piece(std::size_t piece) {
  if (!background_ || piece >= background_->labels.size()) {
    throw Error(task_name(self_) + ": no background piece " + std::to_string(piece));
  }
  await_background(piece);
}

void Runtime::join_background() {
  if (!background_) throw Error(task_name(self_) + ": no background computation to join");
  std::vector<double> ends;
  for (std::size_t k = 0; k < background_->labels.size(); ++k) ends.push_back(await_background(k));
  const Background background = std::move(*background_);
  background_.reset();
  const double end = ends.empty() ? background.start : ends.back();
  // What the task did meanwhile is hidden where the two overlap.
  for (const Background::Interval& i : background.foreground) {
    const double hidden = std::min(i.end, end) - std::max(i.start, background.start);
    if (hidden <= 0) continue;
    add_seconds(i.what, i.phase, -hidden);
    if (i.what != Foreground::kCompute) log_.hidden_communication_seconds += hidden;
  }
  const double seconds = end - background.start;
  add_seconds(Foreground::kCompute, background.phase, seconds);
  account_cpu(background.phase);
  if (background.factor > 1) {
    log_.slowdown_seconds += seconds * (background.factor - 1) / background.factor;
  }
  double from = background.start;
  for (std::size_t k = 0; k < ends.size(); ++k) {
    if (ends[k] > from && keeps_spans()) {
      add_span(SpanKind::kBackground, from, ends[k], background.labels[k]);
    }
    from = std::max(from, ends[k]);
  }
}

void Runtime::abandon_background() noexcept {
  if (!background_) return;
  try {
    if (!background_->labels.empty()) await_background(background_->labels.size() - 1);
  } catch (...) {
    // Its failure is the caller's to report, if anything.
  }
  background_.reset();
}

void Runtime::closed_form_ring(const std::vector<TaskId>& ring, uint64_t chunk_bytes, int rounds,
                               uint64_t bytes, uint64_t messages) {
  const double start = now();
  const double met = std::max(start, exchange_in_closed_form(ring, chunk_bytes, rounds));
  const double end = now();
  const double waiting = met - start;
  const double transfer = end - met;
  log_.bytes_sent += bytes;
  log_.bytes_received += bytes;
  log_.messages_sent += messages;
  log_.messages_received += messages;
  if (step_) {
    step_->bytes_sent += bytes;
    step_->bytes_received += bytes;
  }
  spend(Foreground::kWaiting, Phase::kWaiting, start, met);
  spend(Foreground::kCommunication, Phase::kCommunication, met, end);
  account_cpu(Phase::kCommunication);
  if (waiting > 0 && keeps_spans()) add_span(SpanKind::kWait, start, met, "ring members");
  if (transfer > 0 && keeps_spans()) {
    add_span(SpanKind::kReceive, met, end, "ring all-reduce (closed form)");
  }
}

double Runtime::exchange_in_closed_form(const std::vector<TaskId>&, uint64_t, int) {
  throw Error(task_name(self_) + ": this backend moves every message; it times no collective " +
              "in closed form");
}

void Runtime::spend(Foreground what, Phase phase, double start, double end) {
  add_seconds(what, phase, end - start);
  // Hidden, once joined, where a background computation ran meanwhile.
  if (background_ && end > start) background_->foreground.push_back({what, phase, start, end});
}

void Runtime::add_seconds(Foreground what, Phase phase, double seconds) {
  double* total = &log_.compute_seconds;
  double* in_step = step_ ? &step_->compute_seconds : nullptr;
  if (what == Foreground::kCommunication) {
    total = &log_.communication_seconds;
    in_step = step_ ? &step_->communication_seconds : nullptr;
  } else if (what == Foreground::kWaiting) {
    total = &log_.waiting_seconds;
    in_step = step_ ? &step_->waiting_seconds : nullptr;
  }
  *total += seconds;
  if (in_step) *in_step += seconds;
  account(phase, seconds);
}

void Runtime::set_devices(int devices) {
  if (devices < 1) throw Error(task_name(self_) + ": " + std::to_string(devices) + " devices");
  devices_ = devices;
}

void Runtime::among_devices(DeviceCollective collective, uint64_t bytes) {
  if (devices_ <= 1) return;
  const double start = now();
  bus_collective(collective, bytes);
  const double end = now();
  spend(Foreground::kCommunication, Phase::kCommunication, start, end);
  account_cpu(Phase::kCommunication);
  if (end > start && keeps_spans()) add_span(SpanKind::kReceive, start, end, "devices");
}

void Runtime::bus_collective(DeviceCollective, uint64_t) {
  throw Error(task_name(self_) + ": this backend has no devices to combine");
}

void Runtime::checkpoint(const std::string& label, uint64_t bytes,
                         const std::function<void()>& io_fn) {
  const double start = now();
  store(bytes, io_fn);
  const double end = now();
  log_.checkpoint_seconds += end - start;
  log_.checkpoint_bytes += bytes;
  ++log_.checkpoints;
  if (step_) step_->checkpoint_seconds += end - start;
  account(Phase::kCheckpoint, end - start);
  account_cpu(Phase::kCheckpoint);
  if (end > start) add_span(SpanKind::kCheckpoint, start, end, label);
}

void Runtime::take_batch(int64_t examples, const InputPipeline& input) {
  if (!input.enabled()) return;
  const double start = now();
  await_input(examples, input);
  const double end = now();
  log_.input_seconds += end - start;
  if (step_) step_->input_seconds += end - start;
  account(Phase::kInput, end - start);
  account_cpu(Phase::kInput);
  if (end > start && keeps_spans()) add_span(SpanKind::kInput, start, end, "waiting for input");
}

void Runtime::await_input(int64_t /*examples*/, const InputPipeline& /*input*/) {}

void Runtime::begin_step(int64_t step) {
  if (step_hook_) step_hook_(step);
  account_cpu(Phase::kOther);  // since the last phase: the run's, not the step's
  step_.emplace();
  step_->step = step;
  step_->start = now();
  examples_at_step_start_ = log_.examples;
  if (step_observer_) step_observer_->began(step);
}

void Runtime::end_step(double loss, int64_t staleness) {
  if (!step_) return;
  if (background_)
    throw Error(task_name(self_) + ": a step ended before its background computation");
  step_->end = now();
  double named = 0;
  for (const double seconds : step_->phases) named += seconds;
  step_->phases[index_of(Phase::kOther)] += (step_->end - step_->start) - named;
  account_cpu(Phase::kOther);
  step_->loss = loss;
  step_->staleness = staleness;
  log_.steps.push_back(*step_);
  if (step_observer_) step_observer_->ended(*step_, log_.examples - examples_at_step_start_);
  step_.reset();
}

void Runtime::account(Phase phase, double seconds) {
  log_.phases[index_of(phase)] += seconds;
  if (step_) step_->phases[index_of(phase)] += seconds;
}

void Runtime::account_cpu(Phase phase) {
  if (background_) return;  // join_background gives it all to the computation
  const double cpu = cpu_now();
  if (cpu_mark_) {
    const double seconds = std::max(0.0, cpu - *cpu_mark_);
    log_.phase_cpu[index_of(phase)] += seconds;
    if (step_) step_->phase_cpu[index_of(phase)] += seconds;
  }
  cpu_mark_ = cpu;
}

bool Runtime::keeps_spans() {
  if (log_.spans.size() < span_limit_) return true;
  ++spans_dropped_;
  return false;
}

void Runtime::add_span(SpanKind kind, double start, double end, const std::string& label) {
  if (keeps_spans()) log_.spans.push_back({kind, start, end, label});
}

void append_log(TaskLog& into, TaskLog&& later) {
  into.steps.insert(into.steps.end(), std::make_move_iterator(later.steps.begin()),
                    std::make_move_iterator(later.steps.end()));
  into.spans.insert(into.spans.end(), std::make_move_iterator(later.spans.begin()),
                    std::make_move_iterator(later.spans.end()));
  into.curve.insert(into.curve.end(), later.curve.begin(), later.curve.end());
  into.compute_seconds += later.compute_seconds;
  into.communication_seconds += later.communication_seconds;
  into.waiting_seconds += later.waiting_seconds;
  into.checkpoint_seconds += later.checkpoint_seconds;
  into.input_seconds += later.input_seconds;
  into.slowdown_seconds += later.slowdown_seconds;
  into.hidden_communication_seconds += later.hidden_communication_seconds;
  for (int p = 0; p < kPhases; ++p) {
    into.phases[p] += later.phases[p];
    into.phase_cpu[p] += later.phase_cpu[p];
  }
  into.examples += later.examples;
  into.checkpoints += later.checkpoints;
  into.checkpoint_bytes += later.checkpoint_bytes;
  into.bytes_sent += later.bytes_sent;
  into.bytes_received += later.bytes_received;
  into.messages_sent += later.messages_sent;
  into.messages_received += later.messages_received;
  into.finished_at = std::max(into.finished_at, later.finished_at);
}

TaskLog Runtime::take_log() {
  log_.finished_at = now();
  account_cpu(Phase::kOther);
  return std::move(log_);
}

}  // namespace distlab::strategy
