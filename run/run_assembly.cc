#include "run/run_assembly.h"

#include <algorithm>
#include <utility>

#include "common/error.h"

namespace distlab::run {

RunResult assemble_run(const Scenario& scenario, const strategy::ClusterSpec& cluster,
                       std::vector<TaskReport> reports, RunAssembly assembly) {
  if (static_cast<int>(reports.size()) != cluster.task_count()) {
    throw Error("a run of " + std::to_string(cluster.task_count()) + " tasks given " +
                std::to_string(reports.size()) + " task reports");
  }
  RunResult result;
  result.scenario = scenario.name;
  result.description = scenario.description;
  result.strategy = strategy_label(scenario);
  result.backend = std::move(assembly.backend);
  result.fidelity = strategy::fidelity_name(scenario.fidelity);
  result.seed = scenario.seed;
  result.replicas = cluster.replicas();
  result.checkpoint = scenario.checkpoint;

  const int replica0 = cluster.replicas() > 0 ? cluster.ordinal(cluster.replica(0)) : -1;
  // Without replica 0's report, the steps are the furthest another replica
  // reached; its loss, accuracy and weights are unknown.
  const bool replica0_missing =
      replica0 >= 0 &&
      std::any_of(assembly.missing_reports.begin(), assembly.missing_reports.end(),
                  [&](const MissingReport& m) {
                    return m.task == strategy::task_name(cluster.task_at(replica0));
                  });
  for (int t = 0; t < cluster.task_count(); ++t) {
    TaskReport& r = reports[static_cast<std::size_t>(t)];
    result.run_seconds = std::max(result.run_seconds, r.log.finished_at);
    result.examples += r.log.examples;
    result.spans_dropped += r.spans_dropped;
    result.task_updates.push_back(r.outcome.updates);
    result.task_gradients_dropped.push_back(r.outcome.dropped);
    result.task_weights_sha256.push_back(r.outcome.weights_sha256);
    if (t == replica0) {
      result.final_loss = r.outcome.final_loss;
      result.final_accuracy = r.outcome.final_accuracy;
      result.weights_sha256 = r.outcome.weights_sha256;
      // The step it reached (a resumed run's first step is not 0).
      result.steps = r.log.steps.empty() ? 0 : r.log.steps.back().step + 1;
    } else if (replica0_missing && cluster.replica_rank(cluster.task_at(t)) >= 0 &&
               !r.log.steps.empty()) {
      result.steps = std::max(result.steps, r.log.steps.back().step + 1);
    }
    result.tasks.push_back(std::move(r.log));
  }
  if (assembly.resumed_from) {
    result.resumed_from = std::move(assembly.resumed_from->path);
    result.start_step = assembly.resumed_from->step;
    result.steps = std::max(result.steps, result.start_step);
  }
  result.failures = std::move(assembly.failures);
  result.missing_reports = std::move(assembly.missing_reports);
  result.model_bytes = assembly.model_bytes;
  result.provenance = std::move(assembly.provenance);
  // The scenario as it ran, overrides applied: scenario.yaml.
  result.provenance.scenario_text = scenario.text;
  return result;
}

}  // namespace distlab::run
