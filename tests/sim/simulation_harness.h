// Runs scenarios written by tests through sim::simulate, each in a child
// process, and hands back what the tests check, as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "run/checkpoint_plan.h"
#include "sim/measured_costs.h"
#include "support/temp_files.h"

namespace distlab::testing {

// A test's scratch folder, removed when it goes, with a tiny model spec
// (`tiny.yaml`: input [6], one hidden layer of `hidden` units, 3 classes,
// SGD) for scenarios to name.
class TinyModelFolder {
 public:
  explicit TinyModelFolder(int hidden);
  const std::string& path() const { return path_; }

 private:
  test::TempDir temp_;
  std::string path_;
};

// The task of a simulate_yaml() result by its name ("worker:1"); fails
// the test when there is none.
const nlohmann::json& task_named(const nlohmann::json& run, const std::string& name);

// Adds `bn.yaml` to a folder: a model with what a checkpoint must carry
// beyond the weights (BatchNorm moving statistics, Adam's moments and step
// count, dropout's randomness).
void write_bn_model(const std::string& folder);

// Writes `yaml` to `folder/name.yaml` and simulates it (catalog: the
// shipped one unless `catalog` names another file). The JSON holds
// run_seconds, final_loss, final_accuracy, weights_sha256, model_bytes,
// replicas, and per task (cluster order) in "tasks": name, steps,
// compute_seconds, slowdown_seconds, bytes_sent, bytes_received, updates,
// gradients_dropped, waiting_seconds, hidden_communication_seconds,
// weights_sha256, staleness (list), step_starts (list), compute (list of
// per-step compute seconds),
// input_seconds and step_input (waiting for the input pipeline),
// step_ends, step_phases and step_phase_cpu (each step's seconds and CPU
// seconds by phase), and
// for checkpoints: start_step, resumed_from, and per task checkpoints,
// checkpoint_bytes, checkpoint_seconds, step_numbers and step_checkpoint
// (per-step checkpoint seconds); and "failures" (at, task, cause,
// recovery, restored_step, lost_steps, recovery_seconds).
nlohmann::json simulate_yaml(const std::string& folder, const std::string& name,
                             const std::string& yaml, const std::string& catalog = "",
                             const run::CheckpointRequest& checkpoints = {},
                             const std::optional<sim::MeasuredCosts>& measured = std::nullopt);

}  // namespace distlab::testing
