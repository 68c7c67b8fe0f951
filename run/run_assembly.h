// The run as a whole from its tasks' reports, by one set of rules for every
// way a run is made: ./simulate's actors, ./realnet --launch's processes,
// and the chief of a cluster whose tasks started on machines of their own.
// What each caller measures itself (wall seconds) it sets afterwards.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "run/provenance.h"
#include "run/run_result.h"
#include "run/scenario.h"
#include "run/task_report.h"
#include "strategy/task.h"

namespace distlab::run {

// The checkpoint a resumed run went on from.
struct ResumedFrom {
  std::string path;
  int64_t step = 0;  // the run's first step
};

// What the reports do not say: how the run was made.
struct RunAssembly {
  std::string backend;  // "simulate" or "realnet"
  std::optional<ResumedFrom> resumed_from;
  std::vector<Failure> failures;               // in the order they happened
  std::vector<MissingReport> missing_reports;  // their tasks' reports are names alone
  uint64_t model_bytes = 0;                    // the parameter buffer on the wire
  Provenance provenance;
};

// `reports`: one per task of `cluster`, in its order (chief, workers, ps).
// Replica 0 as the cluster names it (ClusterSpec::replica(0): the chief, or
// worker 0 without one) gives the final loss, accuracy and weights, and the
// steps: the step it reached, or a resumed run's first step if that is
// further (a checkpoint at or beyond the run's end leaves nothing to train).
// Without replica 0's report (named in missing_reports), the steps are the
// furthest another replica reached.
// The fidelity is the scenario's, and so is the provenance's scenario
// text (scenario.yaml). Throws Error when the reports are not one
// per task.
RunResult assemble_run(const Scenario& scenario, const strategy::ClusterSpec& cluster,
                       std::vector<TaskReport> reports, RunAssembly assembly);

}  // namespace distlab::run
