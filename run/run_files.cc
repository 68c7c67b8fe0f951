// The run directory: summary.json, steps.csv, curve.csv, timeline.json.
//
// communication_fraction, for a task and for the run, is
//   (communication_seconds + waiting_seconds)
//     / (compute_seconds + communication_seconds + waiting_seconds),
// the share of a task's busy time (checkpoints aside) that went to the
// network: moving bytes, or waiting for a peer that had not sent yet. For
// the run the four sums run over all tasks; it is 0 when the denominator is.
//
// simulation_speed is simulated seconds per wall second of the simulation
// itself (simulation_wall_seconds; wall_seconds, which includes loading the
// data, where that is not known).
//
// JSON never holds NaN or infinity: such a number is written as null. CSV
// cells with a NaN, an infinity or a staleness of -1 are left empty.
#include "run/run_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <system_error>

#include "common/atomic_file.h"
#include "common/error.h"
#include "run/run_reader.h"
#include "run/run_segments.h"
#include "run/steps_csv.h"

namespace distlab::run {
namespace {

// Keys in the order written here, which is the order of the schema.
using json = nlohmann::ordered_json;
using strategy::TaskLog;

// A JSON number, or null where it is not finite.
json number(double x) {
  return std::isfinite(x) ? json(x) : json(nullptr);
}

double fraction(double compute, double communication, double waiting) {
  const double busy = compute + communication + waiting;
  return busy > 0 ? (communication + waiting) / busy : 0.0;
}

double ratio(double numerator, double denominator) {
  return denominator > 0 ? numerator / denominator : std::nan("");
}

// The totals over all tasks.
struct Totals {
  double compute = 0;
  double communication = 0;
  double waiting = 0;
  double hidden_communication = 0;
  double checkpoint = 0;
  double input = 0;
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
  uint64_t messages_sent = 0;
  uint64_t messages_received = 0;

  void add(const TaskLog& t) {
    compute += t.compute_seconds;
    communication += t.communication_seconds;
    waiting += t.waiting_seconds;
    hidden_communication += t.hidden_communication_seconds;
    checkpoint += t.checkpoint_seconds;
    input += t.input_seconds;
    bytes_sent += t.bytes_sent;
    bytes_received += t.bytes_received;
    messages_sent += t.messages_sent;
    messages_received += t.messages_received;
  }
  double communication_fraction() const { return fraction(compute, communication, waiting); }
};

// When training began on the run's clock: the earliest step start of any
// task. Before it, a real run starts processes, loads data and connects;
// a simulation starts at its first step.
double training_start(const std::vector<TaskLog>& tasks) {
  double start = std::numeric_limits<double>::infinity();
  for (const TaskLog& t : tasks) {
    for (const strategy::StepRecord& s : t.steps) start = std::min(start, s.start);
  }
  return std::isfinite(start) ? start : 0.0;
}

// The median step of replica 0 (the first task with steps: the chief, or
// worker 0): the step time a user reads off a profile.
double median_step_seconds(const std::vector<TaskLog>& tasks) {
  for (const TaskLog& t : tasks) {
    if (t.steps.empty()) continue;
    std::vector<double> durations;
    durations.reserve(t.steps.size());
    for (const strategy::StepRecord& s : t.steps) durations.push_back(s.end - s.start);
    std::sort(durations.begin(), durations.end());
    const std::size_t n = durations.size();
    return n % 2 == 1 ? durations[n / 2] : (durations[n / 2 - 1] + durations[n / 2]) / 2;
  }
  return std::nan("");
}

Totals totals_of(const std::vector<TaskLog>& tasks) {
  Totals totals;
  for (const TaskLog& t : tasks) totals.add(t);
  return totals;
}

double task_fraction(const TaskLog& t) {
  return fraction(t.compute_seconds, t.communication_seconds, t.waiting_seconds);
}

bool is_simulated(const RunResult& r) {
  return r.backend == "simulate";
}

double simulation_speed(const RunResult& r) {
  return ratio(r.run_seconds,
               r.simulation_wall_seconds > 0 ? r.simulation_wall_seconds : r.wall_seconds);
}

// ---- files ----------------------------------------------------------------

[[noreturn]] void fail(const std::filesystem::path& path, const char* what, int error) {
  throw Error(fmt::format("{}: {}: {}", path.string(), what, std::strerror(error)));
}

// Writes `content` to `dir/name` through a temporary file in `dir`, so that a
// reader never sees half a file.
void write_file(const std::filesystem::path& dir, const std::string& name,
                const std::string& content) {
  const std::filesystem::path path = dir / name;
  const std::filesystem::path temporary = dir / ("." + name + ".tmp");
  std::FILE* file = std::fopen(temporary.c_str(), "wb");
  if (file == nullptr) fail(path, "cannot write", errno);
  const bool written = std::fwrite(content.data(), 1, content.size(), file) == content.size();
  int error = written ? 0 : errno;
  if (std::fclose(file) != 0 && error == 0) error = errno;
  if (!written && error == 0) error = EIO;
  if (error != 0) {
    std::remove(temporary.c_str());
    fail(path, "cannot write", error);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    error = errno;
    std::remove(temporary.c_str());
    fail(path, "cannot write", error);
  }
}

// ---- summary.json -----------------------------------------------------------

// {"input": seconds, ..., "other": seconds}
json phase_json(const strategy::PhaseSeconds& seconds) {
  json phases = json::object();
  for (int p = 0; p < strategy::kPhases; ++p) {
    phases[std::string(strategy::phase_name(static_cast<strategy::Phase>(p)))] = number(seconds[p]);
  }
  return phases;
}

json task_summary(const TaskLog& t, const int64_t* updates, int64_t gradients_dropped) {
  json task = {
      {"task", strategy::task_name(t.task)},
      {"role", strategy::role_name(t.task.role)},
      {"index", t.task.index},
      {"host", t.host},
      {"isa", t.isa},
      {"steps", t.steps.size()},
      {"examples", t.examples},
      {"compute_seconds", number(t.compute_seconds)},
      {"communication_seconds", number(t.communication_seconds)},
      {"waiting_seconds", number(t.waiting_seconds)},
      {"checkpoint_seconds", number(t.checkpoint_seconds)},
      {"input_seconds", number(t.input_seconds)},
      {"slowdown_seconds", number(t.slowdown_seconds)},
      {"hidden_communication_seconds", number(t.hidden_communication_seconds)},
      {"checkpoints", t.checkpoints},
      {"checkpoint_bytes", t.checkpoint_bytes},
      {"communication_fraction", number(task_fraction(t))},
      {"bytes_sent", t.bytes_sent},
      {"bytes_received", t.bytes_received},
      {"messages_sent", t.messages_sent},
      {"messages_received", t.messages_received},
      {"finished_at", number(t.finished_at)},
  };
  task["phase_seconds"] = phase_json(t.phases);
  task["phase_cpu_seconds"] = phase_json(t.phase_cpu);
  if (updates != nullptr) task["updates"] = *updates;
  if (t.task.role == strategy::Role::kPs) task["gradients_dropped"] = gradients_dropped;
  int64_t count = 0;
  int64_t sum = 0;
  int64_t max = 0;
  for (const strategy::StepRecord& s : t.steps) {
    if (s.staleness < 0) continue;
    ++count;
    sum += s.staleness;
    max = std::max(max, s.staleness);
  }
  if (count > 0) {
    task["mean_staleness"] = number(static_cast<double>(sum) / static_cast<double>(count));
    task["max_staleness"] = max;
  }
  return task;
}

// The restarts and what they cost; the reports a --role chief never got.
void add_failures(json& summary, const RunResult& r) {
  summary["restarts"] = r.failures.size();
  int64_t lost_steps = 0;
  double recovery_seconds = 0;
  json failures = json::array();
  for (const Failure& f : r.failures) {
    lost_steps += f.lost_steps;
    recovery_seconds += f.recovery_seconds;
    failures.push_back({{"at", number(f.at)},
                        {"task", f.task},
                        {"cause", f.cause},
                        {"recovery", f.recovery},
                        {"restored_step", f.restored_step},
                        {"lost_steps", f.lost_steps},
                        {"recovery_seconds", number(f.recovery_seconds)}});
  }
  summary["lost_steps"] = lost_steps;
  summary["recovery_seconds"] = number(recovery_seconds);
  summary["failures"] = std::move(failures);
  if (!r.missing_reports.empty()) {
    json missing = json::array();
    for (const MissingReport& m : r.missing_reports) {
      missing.push_back({{"task", m.task}, {"reason", m.reason}});
    }
    summary["missing_reports"] = std::move(missing);
  }
}

// The checkpoint settings and what the tasks wrote and read back.
json checkpoints_json(const RunResult& r) {
  uint64_t files = 0, bytes = 0;
  for (const TaskLog& t : r.tasks) {
    files += t.checkpoints;
    bytes += t.checkpoint_bytes;
  }
  return {{"every_steps", r.checkpoint.every_steps},
          {"every_seconds", number(r.checkpoint.every_seconds)},
          {"keep", r.checkpoint.keep},
          {"files", files},
          {"bytes", bytes}};
}

// The ISA level every task's kernels ran, or "mixed: ..." when tasks ran on
// different levels (their replicas' weights then differ in the last bits).
std::string run_isa(const std::vector<TaskLog>& tasks) {
  std::vector<std::string> levels;
  for (const TaskLog& t : tasks) {
    if (std::find(levels.begin(), levels.end(), t.isa) == levels.end()) levels.push_back(t.isa);
  }
  if (levels.size() <= 1) return levels.empty() ? "" : levels.front();
  return fmt::format("mixed: {}", fmt::join(levels, ", "));
}

// Each segment of the run (run_result.h): its command and where it ran.
json segments_json(const RunResult& r) {
  json segments = json::array();
  for (const Segment& g : segments_of(r)) {
    segments.push_back(
        {{"command", g.command},
         {"version", g.version},
         {"resumed_from", g.resumed_from.empty() ? json(nullptr) : json(g.resumed_from)},
         {"start_step", g.start_step},
         {"steps", g.steps},
         {"started_at", number(g.started_at)},
         {"run_seconds", number(g.run_seconds)},
         {"wall_seconds", number(g.wall_seconds)}});
  }
  return segments;
}

std::string summary_json(const RunResult& r) {
  const Totals totals = totals_of(r.tasks);
  json summary;
  summary["scenario"] = r.scenario;
  summary["description"] = r.description;
  summary["strategy"] = r.strategy;
  summary["backend"] = r.backend;
  summary["fidelity"] = r.fidelity;
  summary["seed"] = r.seed;
  summary["isa"] = run_isa(r.tasks);
  if (!r.placement.kind.empty()) {
    json placement{{"kind", r.placement.kind}};
    if (r.placement.host_cores > 0) placement["host_cores"] = r.placement.host_cores;
    if (r.placement.threads_per_task > 0) {
      placement["threads_per_task"] = r.placement.threads_per_task;
    }
    summary["placement"] = placement;
  }
  if (!r.calibrated_from.empty()) summary["calibrated_from"] = json::parse(r.calibrated_from);
  if (is_simulated(r)) summary["simulated_seconds"] = number(r.run_seconds);
  summary["run_seconds"] = number(r.run_seconds);
  summary["wall_seconds"] = number(r.wall_seconds);
  if (is_simulated(r)) {
    summary["simulation_wall_seconds"] =
        r.simulation_wall_seconds > 0 ? json(r.simulation_wall_seconds) : json(nullptr);
    summary["simulation_speed"] = number(simulation_speed(r));
  }
  summary["model_bytes"] = r.model_bytes;
  summary["replicas"] = r.replicas;
  summary["steps"] = r.steps;
  summary["examples"] = r.examples;
  summary["examples_per_second"] = number(ratio(static_cast<double>(r.examples), r.run_seconds));
  // The same, from the first step on: what a simulation, which starts at
  // its first step, predicts of a real run.
  const double startup = training_start(r.tasks);
  summary["startup_seconds"] = number(startup);
  summary["training_examples_per_second"] =
      number(ratio(static_cast<double>(r.examples), r.run_seconds - startup));
  summary["median_step_seconds"] = number(median_step_seconds(r.tasks));
  summary["compute_seconds"] = number(totals.compute);
  summary["communication_seconds"] = number(totals.communication);
  summary["waiting_seconds"] = number(totals.waiting);
  // Communication behind a computation that overlaps it (strategy.overlap):
  // in neither of the two above, nor in communication_fraction.
  summary["hidden_communication_seconds"] = number(totals.hidden_communication);
  summary["checkpoint_seconds"] = number(totals.checkpoint);
  summary["input_seconds"] = number(totals.input);
  summary["checkpoints"] = checkpoints_json(r);
  summary["resumed_from"] = r.resumed_from.empty() ? json(nullptr) : json(r.resumed_from);
  add_failures(summary, r);
  summary["start_step"] = r.start_step;
  summary["segments"] = segments_json(r);
  summary["communication_fraction"] = number(totals.communication_fraction());
  // Of that, the share spent waiting for a peer rather than transferring.
  summary["waiting_fraction"] =
      number(fraction(totals.compute + totals.communication, 0, totals.waiting));
  summary["bytes_sent"] = totals.bytes_sent;
  summary["bytes_received"] = totals.bytes_received;
  // Bytes per role: what the chief, the workers and the parameter servers
  // sent and received, each role's tasks together.
  json by_role = json::object();
  for (const TaskLog& t : r.tasks) {
    json& role = by_role[strategy::role_name(t.task.role)];
    if (role.is_null()) role = {{"bytes_sent", uint64_t{0}}, {"bytes_received", uint64_t{0}}};
    role["bytes_sent"] = role["bytes_sent"].get<uint64_t>() + t.bytes_sent;
    role["bytes_received"] = role["bytes_received"].get<uint64_t>() + t.bytes_received;
  }
  summary["bytes_by_role"] = std::move(by_role);
  summary["final_loss"] = number(r.final_loss);
  summary["final_accuracy"] = number(r.final_accuracy);
  summary["weights_sha256"] = r.weights_sha256.empty() ? json(nullptr) : json(r.weights_sha256);
  summary["timeline_spans_dropped"] = r.spans_dropped;
  summary["command"] = r.provenance.command;
  summary["version"] = r.provenance.version;
  json machines = json::object();
  for (const MachineFacts& m : r.provenance.machines) {
    json& entry = machines[m.name];
    entry["description"] = m.description;
    for (const auto& [key, value] : m.figures) {
      // Counts (vCPUs, GPUs) as integers, figures as they are.
      const bool whole =
          std::isfinite(value) && value == std::floor(value) && std::abs(value) < 1e15;
      entry[key] = whole ? json(static_cast<int64_t>(value)) : number(value);
    }
  }
  summary["machines"] = std::move(machines);
  json tasks = json::array();
  for (size_t i = 0; i < r.tasks.size(); ++i) {
    tasks.push_back(
        task_summary(r.tasks[i], i < r.task_updates.size() ? &r.task_updates[i] : nullptr,
                     i < r.task_gradients_dropped.size() ? r.task_gradients_dropped[i] : 0));
  }
  summary["tasks"] = std::move(tasks);
  return summary.dump(2) + "\n";
}

// ---- CSV --------------------------------------------------------------------

// The shortest text that reads back as the same double; empty if not finite.

// The columns phase_input_seconds ... phase_other_seconds split each step
// by phase (strategy/phase.h); they add up to end - start. The columns
// phase_input_cpu_seconds ... phase_other_cpu_seconds are the CPU time of
// each phase.
std::string steps_csv(const RunResult& r) {
  std::string out = steps_csv_header() + "\n";
  for (const TaskLog& t : r.tasks) {
    const std::string name = strategy::task_name(t.task);
    for (const strategy::StepRecord& s : t.steps) {
      fmt::format_to(std::back_inserter(out), "{},{},{}\n", name, s.step, step_cells(s));
    }
  }
  return out;
}

std::string curve_csv(const RunResult& r) {
  std::string out = "seconds,step,train_loss,test_loss,test_accuracy\n";
  // The chief evaluates; should another task ever log a curve, the first
  // task (in cluster order) that has one is taken.
  const auto with_curve = std::find_if(r.tasks.begin(), r.tasks.end(),
                                       [](const TaskLog& t) { return !t.curve.empty(); });
  if (with_curve == r.tasks.end()) return out;
  for (const strategy::CurvePoint& p : with_curve->curve) {
    fmt::format_to(std::back_inserter(out), "{},{},{},{},{}\n", number_cell(p.seconds), p.step,
                   number_cell(p.train_loss), number_cell(p.test_loss),
                   number_cell(p.test_accuracy));
  }
  return out;
}

// ---- timeline.json ----------------------------------------------------------

// Seconds to microseconds, rounded to the nanosecond.
double microseconds(double seconds) {
  return std::round(seconds * 1e9) / 1e3;
}

constexpr std::string_view kTimelineEnd = "\n]}\n";

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
void append_span_events(std::string& out, const RunResult& r, double offset) {
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
                     tid, json(s.label.empty() ? std::string(kind) : s.label).dump(), kind,
                     microseconds(offset + s.start), microseconds(std::max(0.0, s.end - s.start)));
    }
  }
}

// Written as text, event by event: a large run has a million spans, and a
// JSON document of them in memory would take gigabytes.
std::string timeline_json(const RunResult& r) {
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
  }
  append_span_events(out, r, 0);
  out += kTimelineEnd;
  return out;
}

// The earlier segments' timeline (its text), with the spans of `segment`
// after them from `offset` on, behind a mark where the segment begins.
// Earlier spans are kept as they were written, not read back: a timeline
// may hold a million of them.
std::string continued_timeline(std::string earlier, const RunResult& segment, double offset,
                               int number) {
  if (earlier.size() < kTimelineEnd.size() ||
      earlier.compare(earlier.size() - kTimelineEnd.size(), kTimelineEnd.size(), kTimelineEnd) !=
          0) {
    // Not a timeline that distlab finished writing: the new segment's own.
    return timeline_json(segment);
  }
  earlier.resize(earlier.size() - kTimelineEnd.size());
  std::string mark = fmt::format("segment {}", number);
  if (!segment.resumed_from.empty()) {
    mark += fmt::format(": resumed at step {}", segment.start_step);
  }
  fmt::format_to(std::back_inserter(earlier),
                 ",\n{{\"ph\":\"i\",\"s\":\"g\",\"pid\":1,\"tid\":0,\"name\":{},\"ts\":{}}}",
                 json(mark).dump(), microseconds(offset));
  append_span_events(earlier, segment, offset);
  earlier += kTimelineEnd;
  return earlier;
}

// ---- the terminal table -----------------------------------------------------

// 850 us, 12.3 ms, 4.56 s, 12m34s, 2h03m04s.
std::string duration(double seconds) {
  if (!std::isfinite(seconds)) return "n/a";
  if (seconds < 1e-3) return fmt::format("{:.0f} us", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.1f} ms", seconds * 1e3);
  if (seconds < 60) return fmt::format("{:.2f} s", seconds);
  const auto whole = static_cast<int64_t>(std::llround(seconds));
  if (whole < 3600) return fmt::format("{}m{:02}s", whole / 60, whole % 60);
  return fmt::format("{}h{:02}m{:02}s", whole / 3600, whole / 60 % 60, whole % 60);
}

// 0.0123, 4.56, 789: three significant digits below 100, whole numbers above.
std::string amount(double x) {
  if (!std::isfinite(x)) return "n/a";
  return std::abs(x) >= 100 ? fmt::format("{:.0f}", x) : fmt::format("{:.3g}", x);
}

std::string megabytes(uint64_t bytes) {
  return fmt::format("{:.2f}", bytes / 1e6);
}

std::string percent(double f) {
  return fmt::format("{:.1f}%", f * 100);
}

std::string clip(const std::string& s, size_t width) {
  return s.size() <= width ? s : s.substr(0, width - 3) + "...";
}

struct Row {
  std::string task, host, steps, compute, communication, waiting, share, sent, received;
};

Row task_row(const TaskLog& t) {
  return {strategy::task_name(t.task),
          t.host,
          std::to_string(t.steps.size()),
          fmt::format("{:.3f}", t.compute_seconds),
          fmt::format("{:.3f}", t.communication_seconds),
          fmt::format("{:.3f}", t.waiting_seconds),
          percent(task_fraction(t)),
          megabytes(t.bytes_sent),
          megabytes(t.bytes_received)};
}

}  // namespace

std::string default_run_directory(const std::string& root, const std::string& scenario,
                                  std::time_t when) {
  std::tm utc{};
  gmtime_r(&when, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
  std::string dir = root;
  if (!dir.empty() && dir.back() != '/') dir += '/';
  return dir + scenario + "-" + stamp;
}

void write_run_directory(const std::string& dir, const RunResult& result) {
  const std::filesystem::path path(dir);
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (!error && !std::filesystem::is_directory(path, error) && !error) {
    error = std::make_error_code(std::errc::not_a_directory);
  }
  if (error) {
    throw Error(fmt::format("{}: cannot create directory: {}", dir, error.message()));
  }
  write_file(path, "summary.json", summary_json(result));
  write_file(path, "steps.csv", steps_csv(result));
  write_file(path, "curve.csv", curve_csv(result));
  write_file(path, "timeline.json", timeline_json(result));
  if (!result.provenance.scenario_text.empty()) {
    write_file(path, "scenario.yaml", result.provenance.scenario_text);
  }
}

void write_run_directory(const OutDirectory& out, const RunResult& result) {
  if (out.continued) {
    continue_run_directory(out.path, result, out.earlier_segments);
  } else {
    write_run_directory(out.path, result);
  }
}

void continue_run_directory(const std::string& dir, const RunResult& segment,
                            int earlier_segments) {
  if (earlier_segments == 0) {
    write_run_directory(dir, segment);
    return;
  }
  const std::filesystem::path path(dir);
  const int number = earlier_segments + 1;
  const std::filesystem::path own = path / "segments" / std::to_string(number);
  RunResult earlier;
  try {
    earlier = read_run_directory(dir);
  } catch (const Error& e) {
    // The earlier records changed since the run began (claim_out_directory
    // read them then): the segment's own files go apart, whole.
    write_run_directory(own.string(), segment);
    throw Error(fmt::format("{}; this segment's records are whole in {}", e.what(), own.string()));
  }
  // Each segment's own summary and scenario; the first segment's were the
  // run's own until now.
  const std::filesystem::path first = path / "segments" / "1";
  std::filesystem::create_directories(first);
  for (const char* name : {"summary.json", "scenario.yaml"}) {
    if (std::filesystem::exists(path / name) && !std::filesystem::exists(first / name)) {
      write_file(first, name, read_file_text((path / name).string()));
    }
  }
  std::filesystem::create_directories(own);
  write_file(own, "summary.json", summary_json(segment));
  if (!segment.provenance.scenario_text.empty()) {
    write_file(own, "scenario.yaml", segment.provenance.scenario_text);
  }

  const double offset = earlier.run_seconds;
  std::string timeline;
  if (std::filesystem::exists(path / "timeline.json")) {
    timeline = read_file_text((path / "timeline.json").string());
  }
  const RunResult whole = join_segments(std::move(earlier), segment);
  write_file(path, "steps.csv", steps_csv(whole));
  write_file(path, "curve.csv", curve_csv(whole));
  write_file(path, "timeline.json",
             continued_timeline(std::move(timeline), segment, offset, number));
  if (!segment.provenance.scenario_text.empty()) {
    write_file(path, "scenario.yaml", segment.provenance.scenario_text);
  }
  // Last: the summary says the run holds this segment once its records do.
  write_file(path, "summary.json", summary_json(whole));
}

std::string format_run_written(const std::string& dir, const RunResult& r) {
  // The chief writes the model file in full fidelity, where it has weights.
  const bool model = !r.weights_sha256.empty();
  return format_summary_table(r) +
         fmt::format("wrote {}/{{summary.json,steps.csv,curve.csv,timeline.json{}}}{}\n", dir,
                     model ? ",model.safetensors" : "",
                     r.checkpoint.enabled() ? " and checkpoints/" : "");
}

std::string format_run_written(const OutDirectory& out, const RunResult& r) {
  std::string text = format_run_written(out.path, r);
  if (out.continued && out.earlier_segments > 0) {
    text += fmt::format(
        "continued the run in {} in place: segment {}; its files hold the whole run, each "
        "segment's summary is in segments/\n",
        out.path, out.earlier_segments + 1);
  }
  return text;
}

std::string format_summary_table(const RunResult& r) {
  const Totals totals = totals_of(r.tasks);
  std::string out;
  auto line = [&](std::string_view key, const std::string& value) {
    fmt::format_to(std::back_inserter(out), "{:<12}{}\n", key, value);
  };

  line("scenario",
       r.description.empty() ? r.scenario : fmt::format("{} ({})", r.scenario, r.description));
  line("strategy", r.strategy);
  line("backend", fmt::format("{}, fidelity {}, seed {}, kernels {}", r.backend, r.fidelity, r.seed,
                              run_isa(r.tasks)));
  if (is_simulated(r)) {
    const double speed = simulation_speed(r);
    line("time",
         fmt::format(
             "{} simulated in {}{}, {} wall in all", duration(r.run_seconds),
             duration(r.simulation_wall_seconds > 0 ? r.simulation_wall_seconds : r.wall_seconds),
             std::isfinite(speed) ? " (" + amount(speed) + "x)" : "", duration(r.wall_seconds)));
  } else {
    line("time", fmt::format("{} wall", duration(r.run_seconds)));
  }
  const double throughput = ratio(static_cast<double>(r.examples), r.run_seconds);
  line("throughput", fmt::format("{} examples/s ({} steps, {} examples, {} replicas)",
                                 amount(throughput), r.steps, r.examples, r.replicas));
  if (r.model_bytes > 0) line("model", fmt::format("{:.2f} MB of parameters", r.model_bytes / 1e6));
  line("comm share", fmt::format("{} of busy time in communication and waiting",
                                 percent(totals.communication_fraction())));
  if (totals.hidden_communication > 0) {
    // Exposed (above) and in all, with what overlap hid behind the backward pass.
    const double exposed = totals.communication + totals.waiting;
    line("overlap", fmt::format("{} of communication and waiting hidden behind the backward "
                                "pass, {} exposed",
                                duration(totals.hidden_communication), duration(exposed)));
  }
  const bool timing = r.fidelity == "timing";
  const std::string unknown = timing ? "n/a (timing)" : "n/a";
  line("final loss", std::isfinite(r.final_loss) ? fmt::format("{:.4f}", r.final_loss) : unknown);
  line("accuracy",
       std::isfinite(r.final_accuracy) ? fmt::format("{:.4f}", r.final_accuracy) : unknown);
  line("weights", r.weights_sha256.empty() ? unknown
                                           : "sha256 " + r.weights_sha256.substr(0, 16) +
                                                 (r.weights_sha256.size() > 16 ? "..." : ""));
  if (r.spans_dropped > 0) {
    line("timeline", fmt::format("{} spans dropped beyond the per-task limit", r.spans_dropped));
  }
  if (!r.resumed_from.empty()) {
    line("resumed", fmt::format("from step {}: {}", r.start_step, r.resumed_from));
  }
  uint64_t files = 0;
  for (const TaskLog& t : r.tasks) files += t.checkpoints;
  if (files > 0) {
    line("checkpoint",
         fmt::format("{} files written or read, {} in all", files, duration(totals.checkpoint)));
  }
  if (totals.input > 0) {
    line("input", fmt::format("{} waiting for the input pipeline, {} of the replicas' time",
                              duration(totals.input),
                              percent(ratio(totals.input, r.run_seconds * r.replicas))));
  }
  if (!r.failures.empty()) {
    int64_t lost = 0;
    double recovering = 0;
    for (const Failure& f : r.failures) {
      lost += f.lost_steps;
      recovering += f.recovery_seconds;
    }
    line("failures", fmt::format("{} restarts, {} steps lost, {} recovering", r.failures.size(),
                                 lost, duration(recovering)));
  }
  for (const MissingReport& m : r.missing_reports) {
    line("missing", fmt::format("the report of {}: {}", m.task, m.reason));
  }

  // The tasks: all of them up to 20, else the first 8, the last 4 and a note.
  constexpr size_t kMaxRows = 20, kHead = 8, kTail = 4;
  const size_t n = r.tasks.size();
  std::vector<Row> rows;
  size_t elided_at = n, elided = 0;
  for (size_t i = 0; i < n; ++i) {
    if (n > kMaxRows && i >= kHead && i < n - kTail) {
      if (elided == 0) elided_at = rows.size();
      ++elided;
      continue;
    }
    rows.push_back(task_row(r.tasks[i]));
  }
  const bool with_totals = n > 1;
  Row total{"total",
            "",
            "",
            fmt::format("{:.3f}", totals.compute),
            fmt::format("{:.3f}", totals.communication),
            fmt::format("{:.3f}", totals.waiting),
            percent(totals.communication_fraction()),
            megabytes(totals.bytes_sent),
            megabytes(totals.bytes_received)};

  const Row header{"task",   "host",   "steps",   "compute s", "comm s",
                   "wait s", "comm %", "MB sent", "MB recv"};
  auto widths = [](const Row& row) {
    return std::array<size_t, 9>{row.task.size(),    row.host.size(),          row.steps.size(),
                                 row.compute.size(), row.communication.size(), row.waiting.size(),
                                 row.share.size(),   row.sent.size(),          row.received.size()};
  };
  std::array<size_t, 9> width = widths(header);
  auto widen = [&](const Row& row) {
    const auto w = widths(row);
    for (size_t c = 0; c < w.size(); ++c) width[c] = std::max(width[c], w[c]);
  };
  constexpr size_t kMaxHost = 28;
  for (Row& row : rows) row.host = clip(row.host, kMaxHost);
  for (const Row& row : rows) widen(row);
  if (with_totals) widen(total);

  auto print = [&](const Row& row) {
    fmt::format_to(std::back_inserter(out),
                   "{:<{}}  {:<{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}\n",
                   row.task, width[0], row.host, width[1], row.steps, width[2], row.compute,
                   width[3], row.communication, width[4], row.waiting, width[5], row.share,
                   width[6], row.sent, width[7], row.received, width[8]);
  };
  size_t rule = 2 * 8;
  for (size_t w : width) rule += w;

  out += "\n";
  print(header);
  out += std::string(rule, '-') + "\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i == elided_at) out += fmt::format("... {} more tasks\n", elided);
    print(rows[i]);
  }
  if (with_totals) {
    out += std::string(rule, '-') + "\n";
    print(total);
  }
  return out;
}

}  // namespace distlab::run
