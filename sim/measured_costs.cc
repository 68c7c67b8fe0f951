#include "sim/measured_costs.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/atomic_file.h"
#include "common/csv_table.h"
#include "common/error.h"

namespace distlab::sim {

using nlohmann::json;
using strategy::Phase;

namespace {

// The phases whose CPU is work the model times, and which the fit scales.
constexpr Phase kScaled[] = {Phase::kInput,     Phase::kForward, Phase::kBackward,
                             Phase::kOptimizer, Phase::kPacking, Phase::kCommunication,
                             Phase::kEvaluation};

// A phase that runs one piece of work a step (on replicas), which the model
// may give no time: its real CPU per step is the CPU of each piece.
bool one_work_a_step(Phase phase) {
  return phase == Phase::kInput;
}

// The work of every step, whose time varies from one to the next;
// evaluations are few, and a message's CPU is the model's per byte.
bool varies_by_step(Phase phase) {
  return phase == Phase::kInput || phase == Phase::kForward || phase == Phase::kBackward ||
         phase == Phase::kOptimizer || phase == Phase::kPacking;
}

const char* class_name(TaskClass c) {
  return c == TaskClass::kReplica ? "replica" : "server";
}

std::size_t at(TaskClass c) {
  return static_cast<std::size_t>(c);
}

// Adds a run's totals of a class to `sum`; the log-CPU variances weighed
// by their steps.
void add(ClassTotals& sum, const ClassTotals& t) {
  for (std::size_t p = 0; p < sum.cpu_seconds.size(); ++p) {
    sum.cpu_seconds[p] += t.cpu_seconds[p];
    sum.first_cpu_seconds[p] += t.first_cpu_seconds[p];
    sum.firsts[p] += t.firsts[p];
    const int64_t steps = sum.log_cpu_steps[p] + t.log_cpu_steps[p];
    if (steps > 0) {
      sum.log_cpu_variance[p] =
          (sum.log_cpu_variance[p] * static_cast<double>(sum.log_cpu_steps[p]) +
           t.log_cpu_variance[p] * static_cast<double>(t.log_cpu_steps[p])) /
          static_cast<double>(steps);
    }
    sum.log_cpu_steps[p] = steps;
  }
  sum.steps += t.steps;
  sum.tasks += t.tasks;
}

// Phase p's real CPU over its simulated CPU: after each task's first step
// (of_rest) where both sides have steps after it, else of the whole; none
// where the simulation gave the phase no CPU.
struct Scale {
  double value = 1;
  bool of_rest = false;
};
std::optional<Scale> scale_of(const ClassTotals& real, const ClassTotals& simulated,
                              std::size_t p) {
  const double real_rest = real.cpu_seconds[p] - real.first_cpu_seconds[p];
  const double simulated_rest = simulated.cpu_seconds[p] - simulated.first_cpu_seconds[p];
  if (real_rest > 0 && simulated_rest > 0 && real.firsts[p] > 0) {
    return Scale{real_rest / simulated_rest, true};
  }
  if (simulated.cpu_seconds[p] > 0) return Scale{real.cpu_seconds[p] / simulated.cpu_seconds[p]};
  return std::nullopt;
}

// Each run's replicas' scale of phase p against their neighbours (the
// other replicas): a least-squares line when the runs differ in them.
void fit_neighbours(const std::vector<RunPair>& runs, std::size_t p, PhaseCost& cost) {
  std::vector<std::pair<double, double>> points;  // (neighbours, scale)
  for (const RunPair& run : runs) {
    const ClassTotals& r = run.real.by_class[at(TaskClass::kReplica)];
    const ClassTotals& s = run.simulated.by_class[at(TaskClass::kReplica)];
    if (r.tasks == 0 || s.tasks == 0) continue;
    if (const std::optional<Scale> scale = scale_of(r, s, p)) {
      points.emplace_back(r.tasks - 1, scale->value);
    }
  }
  double mean_x = 0, mean_y = 0;
  for (const auto& [x, y] : points) {
    mean_x += x / static_cast<double>(points.size());
    mean_y += y / static_cast<double>(points.size());
  }
  double sxx = 0, sxy = 0, most = 0;
  for (const auto& [x, y] : points) {
    sxx += (x - mean_x) * (x - mean_x);
    sxy += (x - mean_x) * (y - mean_y);
    most = std::max(most, x);
  }
  if (!(sxx > 0)) return;  // one number of replicas: the pooled scale
  cost.scale_per_neighbour = sxy / sxx;
  cost.scale = mean_y - cost.scale_per_neighbour * mean_x;
  cost.max_neighbours = static_cast<int>(most);
}

}  // namespace

double scale_beside(const PhaseCost& cost, int neighbours) {
  return cost.scale + cost.scale_per_neighbour * std::min(neighbours, cost.max_neighbours);
}

TaskClass task_class_of(strategy::Role role) {
  return role == strategy::Role::kPs ? TaskClass::kServer : TaskClass::kReplica;
}

const PhaseCosts& MeasuredCosts::of(strategy::Role role) const {
  return by_class[at(task_class_of(role))];
}

namespace {

// Adds each task's first step with CPU in a phase to `totals` (steps.csv's
// rows are in each task's step order).
void add_first_steps(const std::string& steps_path, RunTotals& totals) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(steps_path, error)) {
    throw InputError(steps_path + ": cannot read it");
  }
  const CsvTable steps(read_file_text(steps_path), steps_path);
  auto column = [&](const std::string& name) {
    if (!steps.has_column(name)) {
      throw InputError(steps_path + ": no column " + name +
                       ": the run was made before distlab recorded the CPU time of each phase");
    }
    return steps.column(name);
  };
  const std::size_t task_column = column("task");
  std::array<std::size_t, strategy::kPhases> cpu_column{};
  for (int p = 0; p < strategy::kPhases; ++p) {
    cpu_column[static_cast<std::size_t>(p)] = column(
        "phase_" + std::string(strategy::phase_name(static_cast<Phase>(p))) + "_cpu_seconds");
  }
  std::map<std::string, std::array<bool, strategy::kPhases>> seen;
  // Per task and phase: the steps after the first, the sum of the
  // logarithms of their CPU, and of their squares.
  struct LogSums {
    std::array<int64_t, strategy::kPhases> n{};
    std::array<double, strategy::kPhases> sum{}, squares{};
  };
  std::map<std::string, LogSums> logs;
  for (std::size_t row = 0; row < steps.rows(); ++row) {
    const std::string& task = steps.cell(row, task_column);
    const bool server = task.rfind("ps:", 0) == 0;
    ClassTotals& c = totals.by_class[at(server ? TaskClass::kServer : TaskClass::kReplica)];
    auto& first_seen = seen[task];
    LogSums& log_sums = logs[task];
    for (std::size_t p = 0; p < cpu_column.size(); ++p) {
      const double cpu = steps.real(row, cpu_column[p]);
      if (!(cpu > 0)) continue;
      if (first_seen[p]) {
        log_sums.n[p] += 1;
        log_sums.sum[p] += std::log(cpu);
        log_sums.squares[p] += std::log(cpu) * std::log(cpu);
        continue;
      }
      first_seen[p] = true;
      c.first_cpu_seconds[p] += cpu;
      c.firsts[p] += 1;
    }
  }
  // Each task's variance about its own mean, pooled over the class's tasks.
  std::array<std::array<double, strategy::kPhases>, 2> deviations{};
  for (const auto& [task, sums] : logs) {
    const auto k = at(task.rfind("ps:", 0) == 0 ? TaskClass::kServer : TaskClass::kReplica);
    ClassTotals& c = totals.by_class[k];
    for (std::size_t p = 0; p < sums.n.size(); ++p) {
      if (sums.n[p] < 2) continue;
      const double n = static_cast<double>(sums.n[p]);
      deviations[k][p] += std::max(0.0, sums.squares[p] - sums.sum[p] * sums.sum[p] / n);
      c.log_cpu_steps[p] += sums.n[p];
    }
  }
  for (std::size_t k = 0; k < 2; ++k) {
    for (std::size_t p = 0; p < deviations[k].size(); ++p) {
      const int64_t n = totals.by_class[k].log_cpu_steps[p];
      if (n > 0) totals.by_class[k].log_cpu_variance[p] = deviations[k][p] / n;
    }
  }
}

}  // namespace

RunTotals read_run_totals(const std::string& run_dir) {
  const std::string summary_path = run_dir + "/summary.json";
  std::ifstream in(summary_path);
  if (!in) throw InputError(summary_path + ": cannot read it (is its folder a run directory?)");
  json summary;
  try {
    summary = json::parse(in);
  } catch (const json::exception& e) {
    throw InputError(summary_path + ": not JSON: " + e.what());
  }
  if (!summary.is_object() || !summary.contains("tasks") || !summary["tasks"].is_array()) {
    throw InputError(summary_path + ": no \"tasks\": not a run's summary.json");
  }
  RunTotals totals;
  for (const json& task : summary["tasks"]) {
    const std::string name = task.value("task", std::string("?"));
    if (!task.contains("phase_cpu_seconds") || !task["phase_cpu_seconds"].is_object()) {
      throw InputError(summary_path + ": task " + name +
                       " has no phase_cpu_seconds: the run was made before distlab recorded "
                       "the CPU time of each phase; run it again");
    }
    const std::string role = task.value("role", std::string());
    ClassTotals& c = totals.by_class[at(role == "ps" ? TaskClass::kServer : TaskClass::kReplica)];
    const json& cpu = task["phase_cpu_seconds"];
    for (int p = 0; p < strategy::kPhases; ++p) {
      const std::string key(strategy::phase_name(static_cast<Phase>(p)));
      if (cpu.contains(key) && cpu[key].is_number()) {
        c.cpu_seconds[static_cast<std::size_t>(p)] += cpu[key].get<double>();
      }
    }
    c.steps += task.value("steps", int64_t{0});
    c.tasks += 1;
  }
  add_first_steps(run_dir + "/steps.csv", totals);
  return totals;
}

MeasuredCosts fit_measured_costs(const std::vector<RunPair>& runs) {
  MeasuredCosts costs;
  for (const TaskClass c : {TaskClass::kReplica, TaskClass::kServer}) {
    ClassTotals real, simulated;
    for (const RunPair& run : runs) {
      // A class the simulation of the same scenario lacks is not a pair.
      if (run.real.by_class[at(c)].tasks == 0 || run.simulated.by_class[at(c)].tasks == 0) continue;
      add(real, run.real.by_class[at(c)]);
      add(simulated, run.simulated.by_class[at(c)]);
    }
    if (real.tasks == 0) continue;
    costs.measured[at(c)] = true;
    for (const Phase phase : kScaled) {
      const auto p = static_cast<std::size_t>(strategy::index_of(phase));
      PhaseCost& cost = costs.by_class[at(c)][p];
      if (const std::optional<Scale> scale = scale_of(real, simulated, p)) {
        cost.scale = scale->value;
        if (scale->of_rest) {
          cost.first_cpu_seconds = std::max(0.0, real.first_cpu_seconds[p] -
                                                     cost.scale * simulated.first_cpu_seconds[p]) /
                                   real.firsts[p];
        }
      } else if (real.cpu_seconds[p] > 0 && one_work_a_step(phase) && real.steps > 0) {
        cost.cpu_seconds_per_work = real.cpu_seconds[p] / static_cast<double>(real.steps);
      }
      if (c == TaskClass::kReplica) fit_neighbours(runs, p, cost);
      if (varies_by_step(phase) && real.log_cpu_steps[p] > 0) {
        // What the simulation already varies is not added again.
        cost.spread =
            std::sqrt(std::max(0.0, real.log_cpu_variance[p] - simulated.log_cpu_variance[p]));
      }
    }
  }
  return costs;
}

MeasuredCosts parse_measured_costs(const std::string& text) {
  MeasuredCosts costs;
  try {
    const json in = json::parse(text);
    costs.runs = in.at("runs").get<std::vector<std::string>>();
    for (const TaskClass c : {TaskClass::kReplica, TaskClass::kServer}) {
      if (!in.contains(class_name(c))) continue;
      costs.measured[at(c)] = true;
      for (const auto& [name, entry] : in.at(class_name(c)).items()) {
        int p = 0;
        while (p < strategy::kPhases && strategy::phase_name(static_cast<Phase>(p)) != name) ++p;
        if (p == strategy::kPhases) throw Error("no phase " + name);
        PhaseCost& cost = costs.by_class[at(c)][static_cast<std::size_t>(p)];
        cost.scale = entry.at("scale").get<double>();
        cost.cpu_seconds_per_work = entry.value("cpu_seconds_per_work", 0.0);
        cost.first_cpu_seconds = entry.value("first_cpu_seconds", 0.0);
        cost.spread = entry.value("spread", 0.0);
        cost.scale_per_neighbour = entry.value("scale_per_neighbour", 0.0);
        cost.max_neighbours = entry.value("max_neighbours", 0);
      }
    }
  } catch (const json::exception& e) {
    throw Error(std::string("not a fit of measured costs: ") + e.what());
  }
  return costs;
}

std::string measured_costs_json(const MeasuredCosts& costs) {
  json out{{"runs", costs.runs}};
  for (const TaskClass c : {TaskClass::kReplica, TaskClass::kServer}) {
    if (!costs.measured[at(c)]) continue;
    json phases = json::object();
    for (int p = 0; p < strategy::kPhases; ++p) {
      const PhaseCost& cost = costs.by_class[at(c)][static_cast<std::size_t>(p)];
      if (cost.scale == 1 && cost.cpu_seconds_per_work == 0 && cost.first_cpu_seconds == 0 &&
          cost.spread == 0 && cost.scale_per_neighbour == 0) {
        continue;
      }
      json entry{{"scale", cost.scale}};
      if (cost.cpu_seconds_per_work > 0) entry["cpu_seconds_per_work"] = cost.cpu_seconds_per_work;
      if (cost.first_cpu_seconds > 0) entry["first_cpu_seconds"] = cost.first_cpu_seconds;
      if (cost.spread > 0) entry["spread"] = cost.spread;
      if (cost.scale_per_neighbour != 0) {
        entry["scale_per_neighbour"] = cost.scale_per_neighbour;
        entry["max_neighbours"] = cost.max_neighbours;
      }
      phases[std::string(strategy::phase_name(static_cast<Phase>(p)))] = entry;
    }
    out[class_name(c)] = phases;
  }
  return out.dump();
}

}  // namespace distlab::sim
