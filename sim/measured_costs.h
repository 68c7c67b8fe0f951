// What a real run measured its phases to cost, against what the simulator
// charges for the same run: the fit behind ./simulate --calibrate-from.
//
// Both backends record the CPU time of every phase on the same clock
// (summary.json's phase_cpu_seconds). Simulating the real run's own
// scenario and dividing, phase by phase, the real CPU by the simulated one
// gives how far the model is off for this model on this machine, at the
// real run's load: the forward pass at 1.7 times the model's time, a
// message at 1.1 times its CPU. A simulation of another shape of the same
// model (more workers, another strategy) then charges each phase's work at
// the model's time times its factor. Replicas (chief and workers) and
// parameter servers run different work in the same phases (a replica's
// whole update, a server's shard), so each has its own factors.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "strategy/phase.h"
#include "strategy/task.h"

namespace distlab::sim {

// A phase's cost: the model's time for its work times `scale`, plus
// `cpu_seconds_per_work` of CPU for each piece of work in the phase that
// the model gives no time at all (gathering a batch), plus
// `first_cpu_seconds` for the first piece of work of the phase in a task's
// life: a process touches its buffers for the first time then (measured:
// the CIFAR-10 MLP's first evaluation took 200-310 ms of CPU in a real
// run, the next ones 52 ms).
// And each piece of work's time varies from step to step as a lognormal
// of `spread` (the standard deviation of its logarithm) around that mean:
// the real steps' spread, which makes a synchronous step wait for its
// slowest replica, and an asynchronous one's updates arrive in a varying
// order (measured: 0.09-0.18 in CPU time beside one other task, against
// 0.01 simulated).
// With real runs of different numbers of replicas (the chief alone with
// a server, a ring of two, a ring of four), the scale is a line in the
// other replicas that share the task's machine, up to the most measured:
// a forward pass of the lab CNN costs 0.8 of the model's CPU beside one
// other replica and 1.0 beside three (the cores' caches and memory
// shared).
struct PhaseCost {
  double scale = 1;  // with `scale_per_neighbour`: beside no other replica
  double scale_per_neighbour = 0;
  int max_neighbours = 0;  // the most measured beside; more are charged as these
  double cpu_seconds_per_work = 0;
  double first_cpu_seconds = 0;
  double spread = 0;

  bool operator==(const PhaseCost&) const = default;
};
using PhaseCosts = std::array<PhaseCost, strategy::kPhases>;

// One task's costs, and the seed of its steps' spread (the same seed, the
// same steps).
struct TaskCosts {
  PhaseCosts phases{};
  uint64_t seed = 0;
  // The other replicas on the task's machine (one_host), beside which its
  // work is charged: as the fit set each run's scale against its replicas
  // less one (fit_measured_costs), whatever computes at the moment. (It
  // once took the tasks computing when each piece of work started; a
  // message is mostly sent while few compute, so a ring of five paid its
  // messages at the scale of a ring of two: 2.7 times their real CPU.)
  int neighbours = 0;
};

// A phase's scale beside `neighbours` other replicas.
double scale_beside(const PhaseCost& cost, int neighbours);

// The two kinds of task whose work differs.
enum class TaskClass { kReplica, kServer };
TaskClass task_class_of(strategy::Role role);

struct MeasuredCosts {
  std::vector<std::string> runs;  // the real run directories fitted from
  std::array<PhaseCosts, 2> by_class{};
  // Whether a class's factors came from a measurement (the real run had
  // tasks of the class); an unmeasured class keeps the model's costs.
  std::array<bool, 2> measured{};

  const PhaseCosts& of(strategy::Role role) const;
};

// The totals the fit needs of one run: per class, the CPU seconds by phase
// and the steps, all tasks added up (summary.json); and the CPU of each
// task's first step that had the phase, added up, with the number of tasks
// that had one (steps.csv).
struct ClassTotals {
  std::array<double, strategy::kPhases> cpu_seconds{};
  std::array<double, strategy::kPhases> first_cpu_seconds{};
  std::array<int, strategy::kPhases> firsts{};
  // The variance of the logarithm of a step's CPU in the phase about its
  // task's mean, each task's first step left out, and the steps it is of.
  std::array<double, strategy::kPhases> log_cpu_variance{};
  std::array<int64_t, strategy::kPhases> log_cpu_steps{};
  int64_t steps = 0;
  int tasks = 0;
};
struct RunTotals {
  std::array<ClassTotals, 2> by_class{};
};

// Reads a run directory: summary.json's tasks (role, steps,
// phase_cpu_seconds) and steps.csv's CPU columns. Throws InputError naming
// the file when it is not a run's, or when the run did not record CPU time
// by phase.
RunTotals read_run_totals(const std::string& run_dir);

// Fits the costs from pairs of (real run, the simulation of the same
// scenario), pooled: a phase's scale is the real CPU over the simulated
// CPU, all runs added up, less each task's first step with the phase;
// what the real first steps took beyond the simulated ones at that scale
// is the first work's own cost, per task. Where the runs had different
// numbers of replicas, each run's replicas' scale is set against its
// replicas less one (the neighbours computing beside them, all at once in
// a ring) and a line fitted through them. (With no step after the first,
// the scale takes the whole.) A phase the simulation gave no CPU and the
// real run did gets the real CPU per step as the CPU of each piece of
// work, where a step runs one (input: gathering the batch). A step's
// work's spread is the real variance of its logarithm beyond the
// simulated one, pooled, for the work of every step (input to packing).
// Waiting, checkpoints and "other" are not work: they keep scale 1.
struct RunPair {
  RunTotals real;
  RunTotals simulated;
};
MeasuredCosts fit_measured_costs(const std::vector<RunPair>& runs);

// The fit as summary.json keeps it (calibrated_from): the runs, and per
// class the phases whose costs differ from the model's.
std::string measured_costs_json(const MeasuredCosts& costs);
// The same read back, exactly (a profile's fit is kept so). Throws Error
// for text that is not such an object.
MeasuredCosts parse_measured_costs(const std::string& text);

}  // namespace distlab::sim
