#include "run/timeline_json.h"

#include <fmt/format.h>

#include <cmath>
#include <iterator>
#include <nlohmann/json.hpp>

namespace distlab::run {
namespace {

using json = nlohmann::ordered_json;
using strategy::TaskLog;

// Seconds to microseconds, rounded to the nanosecond.
double microseconds(double seconds) {
  return std::round(seconds * 1e9) / 1e3;
}

constexpr std::string_view kTimelineEnd = "\n]}\n";

// Text gathered up to this size before it goes to the sink.
constexpr std::size_t kPiece = 1 << 16;

// Passes `out` on to the sink once it holds a piece.
void pass_on_full(std::string& out, const TextSink& write) {
  if (out.size() < kPiece) return;
  write(out);
  out.clear();
}

// The metadata of a lane of the timeline: its name, and where it sorts.
void append_lane(std::string& out, int tid, int sort_index, const std::string& name) {
  fmt::format_to(std::back_inserter(out),
                 ",\n{{\"ph\":\"M\",\"pid\":1,\"tid\":{0},\"name\":\"thread_name\","
                 "\"args\":{{\"name\":{1}}}}}"
                 ",\n{{\"ph\":\"M\",\"pid\":1,\"tid\":{0},\"name\":\"thread_sort_index\","
                 "\"args\":{{\"sort_index\":{2}}}}}",
                 tid, json(name).dump(), sort_index);
}

// Task i's lane is i + 1, sorted in task order; what it computed beside
// its communication (the overlapped backward pass), whose spans overlap
// its own, has a lane of its own after every task's, sorted below it.
int task_sort_index(size_t task) {
  return 2 * static_cast<int>(task) + 1;
}

// The span events of every task, each starting ",\n", `offset` seconds
// later than the tasks' clocks say (a continued run's later segment).
void write_span_events(std::string& out, const RunResult& r, double offset, const TextSink& write) {
  auto out_it = std::back_inserter(out);
  const int tasks = static_cast<int>(r.tasks.size());
  for (size_t i = 0; i < r.tasks.size(); ++i) {
    const int task_tid = static_cast<int>(i) + 1;
    const int background_tid = tasks + task_tid;
    bool background_named = false;
    for (const strategy::Span& s : r.tasks[i].spans) {
      if (!std::isfinite(s.start) || !std::isfinite(s.end)) continue;
      const bool background = s.kind == strategy::SpanKind::kBackground;
      if (background && !background_named) {
        append_lane(out, background_tid, task_sort_index(i) + 1,
                    strategy::task_name(r.tasks[i].task) + " (beside its communication)");
        background_named = true;
      }
      const int tid = background ? background_tid : task_tid;
      const char* kind = strategy::span_kind_name(s.kind);
      fmt::format_to(out_it,
                     ",\n{{\"ph\":\"X\",\"pid\":1,\"tid\":{},\"name\":{},\"cat\":\"{}\","
                     "\"ts\":{},\"dur\":{}}}",
                     tid, json(s.label.empty() ? std::string(kind) : s.label.text()).dump(), kind,
                     microseconds(offset + s.start), microseconds(std::max(0.0, s.end - s.start)));
      pass_on_full(out, write);
    }
  }
}

// Written as text, event by event: a large run has a million spans, and a
// JSON document of them in memory would take gigabytes.

}  // namespace

void write_timeline(const RunResult& r, const TextSink& write) {
  std::string out;
  auto out_it = std::back_inserter(out);
  auto quoted = [](const std::string& text) { return json(text).dump(); };
  std::string process = r.scenario;
  if (!r.strategy.empty() || !r.backend.empty()) {
    process += fmt::format(" ({}, {})", r.strategy, r.backend);
  }
  out += "{\"displayTimeUnit\":\"ms\",";
  if (r.spans_dropped > 0) {
    fmt::format_to(out_it, "\"otherData\":{{\"spans_dropped\":{}}},", r.spans_dropped);
  }
  fmt::format_to(out_it,
                 "\"traceEvents\":[\n{{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":"
                 "\"process_name\",\"args\":{{\"name\":{}}}}}",
                 quoted(process));
  for (size_t i = 0; i < r.tasks.size(); ++i) {
    const TaskLog& t = r.tasks[i];
    std::string name = strategy::task_name(t.task);
    if (!t.host.empty()) name += " @ " + t.host;
    append_lane(out, static_cast<int>(i) + 1, task_sort_index(i), name);
    pass_on_full(out, write);
  }
  write_span_events(out, r, 0, write);
  out += kTimelineEnd;
  write(out);
}

// The earlier segments' timeline (its text), with the spans of `segment`
// after them from `offset` on, behind a mark where the segment begins.
// Earlier spans are kept as they were written, not read back: a timeline
// may hold a million of them.
void write_continued_timeline(std::string_view earlier, const RunResult& segment, double offset,
                              int number, const TextSink& write) {
  if (!earlier.ends_with(kTimelineEnd)) {
    // Not a timeline that distlab finished writing: the new segment's own.
    write_timeline(segment, write);
    return;
  }
  earlier.remove_suffix(kTimelineEnd.size());
  write(earlier);
  std::string out;
  std::string mark = fmt::format("segment {}", number);
  if (!segment.resumed_from.empty()) {
    mark += fmt::format(": resumed at step {}", segment.start_step);
  }
  fmt::format_to(std::back_inserter(out),
                 ",\n{{\"ph\":\"i\",\"s\":\"g\",\"pid\":1,\"tid\":0,\"name\":{},\"ts\":{}}}",
                 json(mark).dump(), microseconds(offset));
  write_span_events(out, segment, offset, write);
  out += kTimelineEnd;
  write(out);
}

}  // namespace distlab::run
