#include "run/summary_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "run/run_segments.h"
#include "run/run_totals.h"

namespace distlab::run {
namespace {

// Keys in the order written here, which is the order of the schema.
using json = nlohmann::ordered_json;
using strategy::TaskLog;

// A JSON number, or null where it is not finite.
json number(double x) {
  return std::isfinite(x) ? json(x) : json(nullptr);
}

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
      {"payloads_read_in_place", t.payloads_read_in_place},
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

// Where the tasks ran (one_host, per_task) and on how many cores.
json placement_json(const RunResult& r) {
  json placement{{"kind", r.placement.kind}};
  if (r.placement.host_cores > 0) placement["host_cores"] = r.placement.host_cores;
  if (r.placement.threads_per_task > 0) {
    placement["threads_per_task"] = r.placement.threads_per_task;
  }
  return placement;
}

// Bytes per role: what the chief, the workers and the parameter servers
// sent and received, each role's tasks together.
json bytes_by_role_json(const RunResult& r) {
  json by_role = json::object();
  for (const TaskLog& t : r.tasks) {
    json& role = by_role[strategy::role_name(t.task.role)];
    if (role.is_null()) role = {{"bytes_sent", uint64_t{0}}, {"bytes_received", uint64_t{0}}};
    role["bytes_sent"] = role["bytes_sent"].get<uint64_t>() + t.bytes_sent;
    role["bytes_received"] = role["bytes_received"].get<uint64_t>() + t.bytes_received;
  }
  return by_role;
}

// The machine types the run used, with their figures.
json machines_json(const RunResult& r) {
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
  return machines;
}

json tasks_json(const RunResult& r) {
  json tasks = json::array();
  for (size_t i = 0; i < r.tasks.size(); ++i) {
    tasks.push_back(
        task_summary(r.tasks[i], i < r.task_updates.size() ? &r.task_updates[i] : nullptr,
                     i < r.task_gradients_dropped.size() ? r.task_gradients_dropped[i] : 0));
  }
  return tasks;
}

}  // namespace

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
  if (!r.placement.kind.empty()) summary["placement"] = placement_json(r);
  if (!r.calibrated_from.empty()) summary["calibrated_from"] = json::parse(r.calibrated_from);
  if (is_simulated(r)) summary["simulated_seconds"] = number(r.run_seconds);
  summary["run_seconds"] = number(r.run_seconds);
  summary["wall_seconds"] = number(r.wall_seconds);
  if (is_simulated(r)) {
    summary["simulation_wall_seconds"] =
        r.simulation_wall_seconds > 0 ? json(r.simulation_wall_seconds) : json(nullptr);
    summary["simulation_cpu_seconds"] =
        r.simulation_cpu_seconds > 0 ? json(r.simulation_cpu_seconds) : json(nullptr);
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
  summary["bytes_by_role"] = bytes_by_role_json(r);
  summary["final_loss"] = number(r.final_loss);
  summary["final_accuracy"] = number(r.final_accuracy);
  summary["weights_sha256"] = r.weights_sha256.empty() ? json(nullptr) : json(r.weights_sha256);
  summary["timeline_spans_dropped"] = r.spans_dropped;
  summary["command"] = r.provenance.command;
  summary["version"] = r.provenance.version;
  summary["machines"] = machines_json(r);
  summary["tasks"] = tasks_json(r);
  return summary.dump(2) + "\n";
}

}  // namespace distlab::run
