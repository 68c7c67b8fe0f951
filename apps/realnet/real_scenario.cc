#include "apps/realnet/real_scenario.h"

namespace distlab::realnet {

run::Scenario load_real_scenario(const std::string& path,
                                 const std::vector<run::Override>& overrides) {
  run::Scenario scenario = run::load_scenario(path, overrides);
  // Real tasks compute for real: timing fidelity is the simulator's.
  scenario.fidelity = strategy::Fidelity::kFull;
  if (scenario.training.precision != strategy::Precision::kFloat32) {
    scenario.notes.push_back(std::string("note: training.precision ") +
                             strategy::precision_name(scenario.training.precision) +
                             " changes the simulator's timing only: these tasks compute in "
                             "float32, on this machine's CPU");
  }
  if (scenario.cluster.gpus_per_task > 1) {
    scenario.notes.push_back("note: cluster.gpus_per_task " +
                             std::to_string(scenario.cluster.gpus_per_task) +
                             " changes the simulator's timing only: each task here trains on "
                             "this machine's CPU");
  }
  if (scenario.network.collectives == run::Collectives::kAnalytic) {
    scenario.notes.push_back(
        "note: network.collectives analytic changes the simulator's timing only: these tasks "
        "send every message of the ring");
  }
  return scenario;
}

}  // namespace distlab::realnet
