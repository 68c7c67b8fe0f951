// One simulated run of a scenario, start to finish: load its model and data,
// lay out the cluster, start one SimGrid actor per task running the
// strategy, run the simulation, and gather what every task logged.
//
// SimGrid allows one engine per process: simulate() may be called once.
#pragma once

#include <functional>
#include <optional>

#include "run/checkpoint_plan.h"
#include "run/run_result.h"
#include "run/scenario.h"
#include "sim/machine.h"
#include "sim/measured_costs.h"

namespace distlab::sim {

struct SimulationOptions {
  int compute_threads = 2;  // OpenMP threads for the real math (full fidelity)
  // Timeline spans kept, all tasks together (each task keeps its share):
  // enough to see every step of a small run, bounded for a large one.
  std::size_t span_limit = 200'000;
  // Where checkpoints go and what to resume from (backend is set here).
  run::CheckpointRequest checkpoints;
  // Called as the chief finishes steps: (done, total, simulated seconds).
  std::function<void(int64_t, int64_t, double)> on_progress;
  // Called as tasks fail and recover, one line each ("worker:1 died (mtbf)
  // at 10.5 s; it rejoins alone").
  std::function<void(const std::string&)> on_event;
  // The costs a real run of the same model measured (./simulate
  // --calibrate-from); none: the model's.
  std::optional<MeasuredCosts> measured_costs;
};

// Throws InputError for a scenario the catalog or the data cannot serve, and
// Error when a task fails (naming it).
run::RunResult simulate(const run::Scenario& scenario, const MachineCatalog& catalog,
                        const SimulationOptions& options);

}  // namespace distlab::sim
