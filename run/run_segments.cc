#include "run/run_segments.h"

#include <algorithm>
#include <string>
#include <utility>

namespace distlab::run {
namespace {

// A task's log on a clock that starts `offset` seconds later.
strategy::TaskLog shifted(strategy::TaskLog log, double offset) {
  for (strategy::StepRecord& s : log.steps) {
    s.start += offset;
    s.end += offset;
  }
  for (strategy::Span& s : log.spans) {
    s.start += offset;
    s.end += offset;
  }
  for (strategy::CurvePoint& p : log.curve) p.seconds += offset;
  log.finished_at += offset;
  return log;
}

Segment own_segment(const RunResult& r, double started_at) {
  return Segment{.command = r.provenance.command,
                 .version = r.provenance.version,
                 .resumed_from = r.resumed_from,
                 .start_step = r.start_step,
                 .steps = r.steps,
                 .started_at = started_at,
                 .run_seconds = r.run_seconds,
                 .wall_seconds = r.wall_seconds};
}

}  // namespace

std::vector<Segment> segments_of(const RunResult& r) {
  return r.segments.empty() ? std::vector<Segment>{own_segment(r, 0)} : r.segments;
}

RunResult join_segments(RunResult earlier, const RunResult& later) {
  const double offset = earlier.run_seconds;
  RunResult whole = later;
  whole.segments = segments_of(earlier);
  whole.segments.push_back(own_segment(later, offset));

  whole.run_seconds = earlier.run_seconds + later.run_seconds;
  whole.wall_seconds = earlier.wall_seconds + later.wall_seconds;
  whole.simulation_wall_seconds = earlier.simulation_wall_seconds + later.simulation_wall_seconds;
  whole.simulation_cpu_seconds = earlier.simulation_cpu_seconds + later.simulation_cpu_seconds;
  whole.examples = earlier.examples + later.examples;
  whole.spans_dropped = earlier.spans_dropped + later.spans_dropped;
  whole.start_step = earlier.start_step;
  whole.resumed_from = earlier.resumed_from;

  // Each task: its earlier log, then the later one. A task of one segment
  // alone (the cluster changed between them) keeps its place or goes last.
  std::vector<strategy::TaskLog> tasks = std::move(earlier.tasks);
  std::vector<int64_t> updates = earlier.task_updates;
  updates.resize(tasks.size(), 0);
  std::vector<int64_t> dropped = earlier.task_gradients_dropped;
  dropped.resize(tasks.size(), 0);
  // The weights are the later segment's, where it has the task.
  std::vector<std::string> weights(tasks.size());
  for (size_t i = 0; i < later.tasks.size(); ++i) {
    const strategy::TaskLog& next = later.tasks[i];
    const auto same = std::find_if(tasks.begin(), tasks.end(),
                                   [&](const strategy::TaskLog& t) { return t.task == next.task; });
    const int64_t next_updates = i < later.task_updates.size() ? later.task_updates[i] : 0;
    const int64_t next_dropped =
        i < later.task_gradients_dropped.size() ? later.task_gradients_dropped[i] : 0;
    const std::string next_weights =
        i < later.task_weights_sha256.size() ? later.task_weights_sha256[i] : "";
    if (same == tasks.end()) {
      tasks.push_back(shifted(next, offset));
      updates.push_back(next_updates);
      dropped.push_back(next_dropped);
      weights.push_back(next_weights);
      continue;
    }
    const auto at = static_cast<size_t>(same - tasks.begin());
    strategy::append_log(*same, shifted(next, offset));
    same->host = next.host;
    same->isa = next.isa;
    updates[at] += next_updates;
    dropped[at] += next_dropped;
    weights[at] = next_weights;
  }
  whole.tasks = std::move(tasks);
  whole.task_updates = std::move(updates);
  whole.task_gradients_dropped = std::move(dropped);
  whole.task_weights_sha256 = std::move(weights);

  whole.failures = std::move(earlier.failures);
  for (Failure f : later.failures) {
    f.at += offset;
    whole.failures.push_back(std::move(f));
  }
  whole.missing_reports = std::move(earlier.missing_reports);
  whole.missing_reports.insert(whole.missing_reports.end(), later.missing_reports.begin(),
                               later.missing_reports.end());
  return whole;
}

}  // namespace distlab::run
