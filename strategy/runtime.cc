#include "strategy/runtime.h"

#include <algorithm>
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

void Runtime::compute(const Work& work, const std::function<void()>& work_fn) {
  const double start = now();
  execute(work, work_fn);
  if (slowed_) slow_down(start);
  const double end = now();
  spend(Foreground::kCompute, work.phase, start, end);
  account_cpu(work.phase);
  if (end > start) add_span(SpanKind::kCompute, start, end, work.label);
}

void Runtime::slow_down(double start) {
  const double factor = slowdown_.factor(step_ ? step_->step : -1, start);
  if (factor <= 1) return;
  settle();  // the computation's whole time, before its extra is reckoned
  const double extra = (factor - 1) * (now() - start);
  hold(extra);
  log_.slowdown_seconds += extra;
}

void Runtime::start_background(std::vector<Work> pieces, BackgroundFn work_fn) {
  if (background_) throw Error(task_name(self_) + ": a background computation is already running");
  if (!step_) throw Error(task_name(self_) + ": a background computation outside a step");
  Background background;
  background.factor = slowed_ ? slowdown_.factor(step_->step, now()) : 1.0;
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
  background_ = std::make_unique<Background>(std::move(background));
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
  pending_.bytes_sent += bytes;
  pending_.bytes_received += bytes;
  pending_.messages_sent += messages;
  pending_.messages_received += messages;
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
  if (background_ && end > start) note_foreground(what, phase, start, end);
}

void Runtime::note_foreground(Foreground what, Phase phase, double start, double end) {
  background_->foreground.push_back({what, phase, start, end});
}

void Runtime::add_seconds(Foreground what, Phase phase, double seconds) {
  switch (what) {
    case Foreground::kCompute:
      pending_.compute_seconds += seconds;
      account(phase, seconds);
      break;
    case Foreground::kCommunication:  // in Phase::kCommunication (Pending)
      pending_.communication_seconds += seconds;
      break;
    case Foreground::kWaiting:  // in Phase::kWaiting
      pending_.waiting_seconds += seconds;
      break;
  }
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
  post_pending();
  if (prelude_ && prelude_->step == step) {
    step_ = std::move(prelude_);
  } else {
    step_.emplace();
    step_->step = step;
    step_->start = now();
  }
  prelude_.reset();
  examples_at_step_start_ = log_.examples;
  if (step_observer_) step_observer_->began(step);
}

void Runtime::end_step(double loss, int64_t staleness) {
  if (!step_) return;
  if (background_)
    throw Error(task_name(self_) + ": a step ended before its background computation");
  step_->end = now();
  account_cpu(Phase::kOther);
  post_pending();
  double named = 0;
  for (const double seconds : step_->phases) named += seconds;
  step_->phases[index_of(Phase::kOther)] += (step_->end - step_->start) - named;
  step_->loss = loss;
  step_->staleness = staleness;
  log_.steps.push_back(*step_);
  if (step_observer_) step_observer_->ended(*step_, log_.examples - examples_at_step_start_);
  step_.reset();
}

void Runtime::between_steps(int64_t next_step, const std::function<void()>& work) {
  if (step_)
    throw Error(task_name(self_) + ": work between steps inside step " +
                std::to_string(step_->step));
  account_cpu(Phase::kOther);
  post_pending();
  step_.emplace();
  step_->step = next_step;
  step_->start = now();
  // A task that dies in `work` dies in a step (in_step()): the next one.
  work();
  post_pending();
  prelude_ = std::move(step_);
  step_.reset();
}

void Runtime::account(Phase phase, double seconds) {
  pending_.phases[index_of(phase)].seconds += seconds;
}

void Runtime::account_cpu(Phase phase) {
  if (background_) return;  // join_background gives it all to the computation
  const double cpu = cpu_now();
  if (cpu_mark_ >= 0) {
    double& into = phase == Phase::kCommunication ? pending_.communication_cpu
                                                  : pending_.phases[index_of(phase)].cpu;
    into += std::max(0.0, cpu - cpu_mark_);
  }
  cpu_mark_ = cpu;
}

void Runtime::post_pending() {
  const Pending& p = pending_;
  // What the run's totals and a step's record both keep.
  const auto add_to = [&p](auto& record) {
    record.compute_seconds += p.compute_seconds;
    record.communication_seconds += p.communication_seconds;
    record.waiting_seconds += p.waiting_seconds;
    record.bytes_sent += p.bytes_sent;
    record.bytes_received += p.bytes_received;
    for (int i = 0; i < kPhases; ++i) {
      record.phases[i] += p.phases[i].seconds;
      record.phase_cpu[i] += p.phases[i].cpu;
    }
    record.phases[index_of(Phase::kCommunication)] += p.communication_seconds;
    record.phases[index_of(Phase::kWaiting)] += p.waiting_seconds;
    record.phase_cpu[index_of(Phase::kCommunication)] += p.communication_cpu;
  };
  add_to(log_);
  log_.messages_sent += p.messages_sent;
  log_.messages_received += p.messages_received;
  if (step_) add_to(*step_);
  pending_ = {};
}

void Runtime::set_span_limit(std::size_t limit) {
  span_limit_ = limit;
  spans_left_ = limit - std::min(limit, log_.spans.size());
}

bool Runtime::keeps_spans() {
  if (spans_left_ > 0) return true;
  ++spans_dropped_;
  return false;
}

void Runtime::add_span(SpanKind kind, double start, double end, std::string_view label) {
  if (!keeps_spans()) return;
  // Grown no further than the limit: a thousand simulated tasks each a
  // few hundred spans, not the next power of two.
  std::vector<Span>& spans = log_.spans;
  if (spans.size() == spans.capacity()) {
    spans.reserve(std::min(span_limit_, std::max<std::size_t>(16, 2 * spans.size())));
  }
  spans.push_back({kind, start, end, label});
  --spans_left_;
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
  into.payloads_read_in_place += later.payloads_read_in_place;
  into.finished_at = std::max(into.finished_at, later.finished_at);
}

TaskLog Runtime::take_log() {
  log_.finished_at = now();
  account_cpu(Phase::kOther);
  post_pending();
  return std::move(log_);
}

}  // namespace distlab::strategy
