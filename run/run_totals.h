// Figures of a run computed from its tasks' logs, shared by summary.json
// (summary_json.h) and the terminal's table (summary_table.h).
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
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "run/run_result.h"

namespace distlab::run {

double fraction(double compute, double communication, double waiting);
// numerator / denominator; NaN where the denominator is not positive.
double ratio(double numerator, double denominator);

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

  void add(const strategy::TaskLog& t);
  double communication_fraction() const { return fraction(compute, communication, waiting); }
};
Totals totals_of(const std::vector<strategy::TaskLog>& tasks);

// When training began on the run's clock: the earliest step start of any
// task. Before it, a real run starts processes, loads data and connects;
// a simulation starts at its first step.
double training_start(const std::vector<strategy::TaskLog>& tasks);
// The median step of replica 0 (the first task with steps: the chief, or
// worker 0): the step time a user reads off a profile.
double median_step_seconds(const std::vector<strategy::TaskLog>& tasks);
double task_fraction(const strategy::TaskLog& t);
// The ISA level every task's kernels ran, or "mixed: ..." when tasks ran on
// different levels (their replicas' weights then differ in the last bits).
std::string run_isa(const std::vector<strategy::TaskLog>& tasks);
bool is_simulated(const RunResult& r);
double simulation_speed(const RunResult& r);

}  // namespace distlab::run
