// Backup workers (strategy.replicas_to_aggregate, TensorFlow's
// SyncReplicasOptimizer): a sync step applies the first k pushes computed
// on the current weights and drops the late ones. Held against a run
// worked out by hand: beside a straggler so slow that its first step ends
// after the others' last, the two fast replicas' every push is taken, the
// straggler's first push is dropped, and its other steps, alone, are
// each a step of their own.
#include <catch2/catch.hpp>
#include <string>

#include "simulation_harness.h"

namespace {

using distlab::testing::simulate_yaml;
using distlab::testing::task_named;
using distlab::testing::TinyModelFolder;
using nlohmann::json;

constexpr int kSteps = 8;

std::string scenario(int servers, const std::string& aggregate) {
  return "model: tiny.yaml\ndata: synthetic:600\nseed: 7\nfidelity: timing\n"
         "cluster:\n  machine: n1-standard-4\n  chief: 1\n  workers: 2\n  ps: " +
         std::to_string(servers) + "\nstrategy:\n  name: parameter_server\n  mode: sync\n" +
         aggregate + "training:\n  batch_size: 32\n  steps: " + std::to_string(kSteps) +
         "\nslowdowns:\n  - {task: worker:1, factor: 1000}\n";
}

double last_step_end(const json& task) {
  return task["step_ends"].back().get<double>();
}

}  // namespace

TEST_CASE("backup workers: a sync step takes the first pushes and drops the late ones") {
  const TinyModelFolder scratch(4000);
  const int servers = GENERATE(1, 2);
  INFO(servers << " parameter servers");
  const json all = simulate_yaml(scratch.path(), "all", scenario(servers, ""));
  const json backup =
      simulate_yaml(scratch.path(), "backup", scenario(servers, "  replicas_to_aggregate: 2\n"));
  for (int j = 0; j < servers; ++j) {
    const std::string ps = "ps:" + std::to_string(j);
    // Without backups every step waits for the straggler.
    CHECK(task_named(all, ps)["steps"] == kSteps);
    CHECK(task_named(all, ps)["updates"] == 3 * kSteps);
    CHECK(task_named(all, ps)["gradients_dropped"] == 0);
    // With one: kSteps steps of the fast pair, then the straggler's first
    // push dropped (its weights are kSteps updates old) and its other
    // kSteps - 1 pushes applied alone, the fast replicas having stopped.
    CHECK(task_named(backup, ps)["steps"] == 2 * kSteps - 1);
    CHECK(task_named(backup, ps)["updates"] == 2 * kSteps + kSteps - 1);
    CHECK(task_named(backup, ps)["gradients_dropped"] == 1);
  }
  // Every replica still trains its steps; the fast ones no longer wait.
  for (const std::string task : {"chief:0", "worker:0", "worker:1"}) {
    CHECK(task_named(backup, task)["steps"] == kSteps);
  }
  const double straggler_first = task_named(backup, "worker:1")["step_ends"][0].get<double>();
  CHECK(last_step_end(task_named(backup, "chief:0")) < straggler_first);
  CHECK(last_step_end(task_named(all, "chief:0")) > straggler_first);
}

TEST_CASE("backup workers: aggregating every replica is the sync server as it was") {
  const TinyModelFolder scratch(4000);
  auto in_full = [](std::string yaml) {
    return yaml.replace(yaml.find("fidelity: timing"), 16, "fidelity: full");
  };
  const json all = simulate_yaml(scratch.path(), "all", in_full(scenario(1, "")));
  const json three =
      simulate_yaml(scratch.path(), "three", in_full(scenario(1, "  replicas_to_aggregate: 3\n")));
  CHECK(all["weights_sha256"] == three["weights_sha256"]);
  CHECK(all["run_seconds"] == three["run_seconds"]);
  // Two of three: other weights, as the straggler's gradients count later.
  const json two =
      simulate_yaml(scratch.path(), "two", in_full(scenario(1, "  replicas_to_aggregate: 2\n")));
  CHECK(two["weights_sha256"] != all["weights_sha256"]);
}
