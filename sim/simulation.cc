#include "sim/simulation.h"

#include <xbt/log.h>

#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>

#include "common/error.h"
#include "nn/kernels/kernels.h"
#include "nn/threads.h"
#include "run/training_inputs.h"
#include "sim/platform.h"
#include "sim/sim_runtime.h"
#include "sim/task_supervisor.h"
#include "strategy/strategy.h"

namespace distlab::sim {

using strategy::Fidelity;
using strategy::TaskId;

run::RunResult simulate(const run::Scenario& scenario, const MachineCatalog& catalog,
                        const SimulationOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  const ClusterPlan plan = plan_cluster(scenario, catalog);
  nn::set_compute_threads(options.compute_threads);

  run::TrainingInputs inputs(scenario);
  strategy::TrainingSetup& setup = inputs.setup();
  run::CheckpointRequest checkpoints = options.checkpoints;
  checkpoints.backend = "simulate";
  setup.set_checkpoints(
      run::plan_checkpoints(scenario, setup, plan.cluster.replicas(), checkpoints));
  const int64_t chief_steps = setup.steps_per_replica(plan.cluster.replicas());
  if (options.on_progress) {
    setup.on_chief_step = [&](int64_t done, int64_t total) {
      options.on_progress(done, total, simgrid::s4u::Engine::get_clock());
    };
  }

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
  const auto simulation_start = std::chrono::steady_clock::now();
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
  mailboxes.release_receivers();
  SupervisedRun run = supervisor.finish();
  const int tasks = plan.cluster.task_count();
  std::vector<strategy::TaskLog>& logs = run.logs;
  std::vector<strategy::TaskOutcome>& outcomes = run.outcomes;
  const uint64_t spans_dropped = run.spans_dropped;

  run::RunResult result;
  result.scenario = scenario.name;
  result.description = scenario.description;
  result.strategy = run::strategy_label(scenario);
  result.backend = "simulate";
  result.fidelity = strategy::fidelity_name(scenario.fidelity);
  result.seed = scenario.seed;
  result.replicas = plan.cluster.replicas();
  result.steps = chief_steps;
  result.checkpoint = scenario.checkpoint;
  if (const auto& resume = setup.checkpoints().resume) {
    result.resumed_from = resume->path;
    // A checkpoint at or beyond the run's end leaves nothing to train.
    result.start_step = resume->info.step;
    result.steps = std::max(result.steps, result.start_step);
  }
  for (int t = 0; t < tasks; ++t) {
    result.run_seconds = std::max(result.run_seconds, logs[t].finished_at);
    result.examples += outcomes[t].examples;
  }
  const strategy::TaskOutcome& chief = outcomes[plan.cluster.ordinal(plan.cluster.replica(0))];
  result.final_loss = chief.final_loss;
  result.final_accuracy = chief.final_accuracy;
  result.weights_sha256 = chief.weights_sha256;
  result.spans_dropped = spans_dropped;
  result.tasks = std::move(logs);
  result.simulation_wall_seconds =
      std::chrono::duration<double>(simulation_end - simulation_start).count();
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  result.model_bytes = static_cast<uint64_t>(setup.parameter_floats()) * sizeof(float);
  for (int t = 0; t < tasks; ++t) {
    result.task_updates.push_back(outcomes[t].updates);
    result.task_weights_sha256.push_back(outcomes[t].weights_sha256);
  }
  for (const FailureRecord& f : run.failures) {
    result.failures.push_back({.at = f.at,
                               .task = f.task,
                               .cause = f.cause,
                               .recovery = f.recovery,
                               .restored_step = f.restored_step,
                               .lost_steps = f.lost_steps,
                               .recovery_seconds = f.recovery_seconds});
  }
  return result;
}

}  // namespace distlab::sim
