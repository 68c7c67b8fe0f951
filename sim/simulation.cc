#include "sim/simulation.h"

#include <xbt/log.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <exception>
#include <limits>
#include <memory>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>

#include "common/error.h"
#include "nn/kernels/kernels.h"
#include "nn/threads.h"
#include "run/run_assembly.h"
#include "run/training_inputs.h"
#include "sim/platform.h"
#include "sim/sim_runtime.h"
#include "sim/task_supervisor.h"
#include "strategy/strategy.h"

namespace distlab::sim {

using strategy::Fidelity;
using strategy::TaskId;

namespace {

// The checkpoints, and the chief's steps told on the simulated clock.
void prepare_setup(strategy::TrainingSetup& setup, const run::Scenario& scenario,
                   const ClusterPlan& plan, const SimulationOptions& options) {
  run::CheckpointRequest checkpoints = options.checkpoints;
  checkpoints.backend = "simulate";
  setup.set_checkpoints(
      run::plan_checkpoints(scenario, setup, plan.cluster.replicas(), checkpoints));
  if (options.on_progress) {
    setup.on_chief_step = [&options](int64_t done, int64_t total) {
      options.on_progress(done, total, simgrid::s4u::Engine::get_clock());
    };
  }
}

// What running the simulation took on this machine.
struct EngineTimes {
  double wall_seconds = 0;
  double cpu_seconds = 0;
};

// The CPU time of the whole process, every thread's.
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Runs the simulation to its end.
EngineTimes run_engine(simgrid::s4u::Engine& engine, MailboxTable& mailboxes,
                       const TaskSupervisor& supervisor) {
  const auto simulation_start = std::chrono::steady_clock::now();
  const double cpu_start = process_cpu_seconds();
  try {
    engine.run();
  } catch (...) {
    // SimGrid ends a run in which every remaining actor waits for a message
    // that no one will send. That is a bug in a strategy, not bad input.
    mailboxes.release_receivers();
    throw Error("the simulation deadlocked at " +
                std::to_string(simgrid::s4u::Engine::get_clock()) +
                " simulated s; still waiting: " + supervisor.unfinished());
  }
  const auto simulation_end = std::chrono::steady_clock::now();
  const double cpu_end = process_cpu_seconds();
  mailboxes.release_receivers();
  return {std::chrono::duration<double>(simulation_end - simulation_start).count(),
          cpu_end - cpu_start};
}

// One report per task, as a real task would hand over; the supervisor
// counts dropped spans for the run as a whole (the first report has them).
std::vector<run::TaskReport> task_reports(SupervisedRun& run, int task_count) {
  std::vector<run::TaskReport> reports(static_cast<std::size_t>(task_count));
  for (std::size_t t = 0; t < reports.size(); ++t) {
    reports[t].log = std::move(run.logs[t]);
    reports[t].outcome = std::move(run.outcomes[t]);
  }
  if (!reports.empty()) reports[0].spans_dropped = run.spans_dropped;
  return reports;
}

run::RunAssembly assembly_of(const strategy::TrainingSetup& setup, SupervisedRun& run) {
  run::RunAssembly assembly{
      .backend = "simulate",
      .model_bytes = static_cast<uint64_t>(setup.parameter_floats()) * sizeof(float)};
  if (const auto& resume = setup.checkpoints().resume) {
    assembly.resumed_from = run::ResumedFrom{.path = resume->path, .step = resume->info.step};
  }
  assembly.failures = std::move(run.failures);
  return assembly;
}

run::RunPlacement placement_of(const ClusterPlan& plan) {
  if (plan.one_host) {
    return {.kind = "one_host",
            .host_cores = plan.cores,
            .threads_per_task = plan.hosts.front().device.threads};
  }
  return {.kind = "per_task", .host_cores = 0, .threads_per_task = 0};
}

}  // namespace

run::RunResult simulate(const run::Scenario& scenario, const MachineCatalog& catalog,
                        const SimulationOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  const ClusterPlan plan =
      plan_cluster(scenario, catalog, options.measured_costs ? &*options.measured_costs : nullptr);
  nn::set_compute_threads(options.compute_threads);
  run::TrainingInputs inputs(scenario);
  strategy::TrainingSetup& setup = inputs.setup();
  prepare_setup(setup, scenario, plan, options);

  // SimGrid reads its options from a command line; keep it quiet.
  int argc = 2;
  char name[] = "distlab-simulate";
  char log[] = "--log=root.thres:critical";
  char* argv[] = {name, log, nullptr};
  simgrid::s4u::Engine engine(&argc, argv);
  configure_network_model(scenario.network.model);
  const std::vector<simgrid::s4u::Host*> hosts = build_platform(plan);
  MailboxTable mailboxes(plan.cluster.task_count());
  TaskSupervisor supervisor(scenario, plan, hosts, mailboxes, setup, options.span_limit,
                            options.on_event);
  supervisor.start();
  const EngineTimes simulation = run_engine(engine, mailboxes, supervisor);
  SupervisedRun run = supervisor.finish();

  std::vector<run::TaskReport> reports = task_reports(run, plan.cluster.task_count());
  run::RunAssembly assembly = assembly_of(setup, run);
  run::RunResult result =
      run::assemble_run(scenario, plan.cluster, std::move(reports), std::move(assembly));
  result.simulation_wall_seconds = simulation.wall_seconds;
  result.simulation_cpu_seconds = simulation.cpu_seconds;
  result.placement = placement_of(plan);
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace distlab::sim
