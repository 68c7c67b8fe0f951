#include "run/summary_table.h"

#include <fmt/format.h>

#include <cmath>
#include <iterator>
#include <string_view>

#include "run/run_totals.h"

namespace distlab::run {
namespace {

using strategy::TaskLog;

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

// Appends "key        value" to `out`.
class KeyLines {
 public:
  explicit KeyLines(std::string& out) : out_(out) {}
  void operator()(std::string_view key, const std::string& value) {
    fmt::format_to(std::back_inserter(out_), "{:<12}{}\n", key, value);
  }

 private:
  std::string& out_;
};

// What ran, how long, how fast, and how much of it communicated.
void append_run_lines(std::string& out, const RunResult& r, const Totals& totals) {
  KeyLines line(out);
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
}

// What the run ended with, and what happened to it on the way.
void append_outcome_lines(std::string& out, const RunResult& r, const Totals& totals) {
  KeyLines line(out);
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
}

// The tasks: all of them up to 20, else the first 8, the last 4 and a note.
void append_task_table(std::string& out, const RunResult& r, const Totals& totals) {
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
}

}  // namespace

std::string format_summary_table(const RunResult& r) {
  const Totals totals = totals_of(r.tasks);
  std::string out;
  append_run_lines(out, r, totals);
  append_outcome_lines(out, r, totals);
  append_task_table(out, r, totals);
  return out;
}

}  // namespace distlab::run
