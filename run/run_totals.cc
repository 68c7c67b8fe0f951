#include "run/run_totals.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace distlab::run {

double fraction(double compute, double communication, double waiting) {
  const double busy = compute + communication + waiting;
  return busy > 0 ? (communication + waiting) / busy : 0.0;
}

double ratio(double numerator, double denominator) {
  return denominator > 0 ? numerator / denominator : std::nan("");
}

double training_start(const std::vector<strategy::TaskLog>& tasks) {
  double start = std::numeric_limits<double>::infinity();
  for (const strategy::TaskLog& t : tasks) {
    for (const strategy::StepRecord& s : t.steps) start = std::min(start, s.start);
  }
  return std::isfinite(start) ? start : 0.0;
}

double median_step_seconds(const std::vector<strategy::TaskLog>& tasks) {
  for (const strategy::TaskLog& t : tasks) {
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

Totals totals_of(const std::vector<strategy::TaskLog>& tasks) {
  Totals totals;
  for (const strategy::TaskLog& t : tasks) totals.add(t);
  return totals;
}

double task_fraction(const strategy::TaskLog& t) {
  return fraction(t.compute_seconds, t.communication_seconds, t.waiting_seconds);
}

bool is_simulated(const RunResult& r) {
  return r.backend == "simulate";
}

double simulation_speed(const RunResult& r) {
  return ratio(r.run_seconds,
               r.simulation_wall_seconds > 0 ? r.simulation_wall_seconds : r.wall_seconds);
}

std::string run_isa(const std::vector<strategy::TaskLog>& tasks) {
  std::vector<std::string> levels;
  for (const strategy::TaskLog& t : tasks) {
    if (std::find(levels.begin(), levels.end(), t.isa) == levels.end()) levels.push_back(t.isa);
  }
  if (levels.size() <= 1) return levels.empty() ? "" : levels.front();
  return fmt::format("mixed: {}", fmt::join(levels, ", "));
}

void Totals::add(const strategy::TaskLog& t) {
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

}  // namespace distlab::run
