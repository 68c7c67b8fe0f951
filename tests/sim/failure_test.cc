// Failures in the simulator: a synchronous run rolls back to its last
// checkpoint and still ends with the weights of the run that never failed;
// an asynchronous worker rejoins while the others go on; a parameter
// server's failure rolls back; exponential failures are seeded; and a run
// that keeps failing gives up.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "child_process.h"
#include "common/error.h"
#include "sim/simulation.h"
#include "simulation_harness.h"

namespace {

namespace fs = std::filesystem;
using distlab::testing::simulate_yaml;
using distlab::testing::TinyModelFolder;
using distlab::testing::write_bn_model;
using nlohmann::json;

// 8 examples a replica a step: a parameter server's batch is a worker's,
// an all-reduce's the global one (3 replicas in kRing).
std::string scenario(const std::string& cluster, const std::string& strategy, int steps,
                     const std::string& extra, const std::string& fidelity = "full") {
  const int batch = strategy.find("allreduce") != std::string::npos ? 3 * 8 : 8;
  return "model: bn.yaml\ndata: synthetic:800\nseed: 5\nfidelity: " + fidelity +
         "\ncluster:\n  machine: n1-standard-4\n" + cluster + "strategy:\n" + strategy +
         "training:\n  batch_size: " + std::to_string(batch) +
         "\n  steps: " + std::to_string(steps) + "\n" + extra;
}

const std::string kRing = "  chief: 1\n  workers: 2\n";
const std::string kAllReduce = "  name: allreduce\n";
const std::string kPsCluster = "  chief: 1\n  workers: 3\n  ps: 1\n";
const std::string kAsync = "  name: parameter_server\n  mode: async\n";
const std::string kRecovery = "recovery: {detect_seconds: 2, restart_seconds: 3}\n";

std::vector<int64_t> step_numbers(const json& task) {
  return task["step_numbers"].get<std::vector<int64_t>>();
}

}  // namespace

TEST_CASE(
    "failures: a synchronous run rolls back to its last checkpoint and ends as if it never "
    "failed") {
  const std::string fidelity = GENERATE(as<std::string>{}, "full", "timing");
  INFO(fidelity);
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  write_bn_model(dir);
  const json whole = simulate_yaml(dir, "whole", scenario(kRing, kAllReduce, 12, "", fidelity));
  const std::string faults =
      "checkpoint: {every_steps: 4}\nfaults:\n"
      "  - {task: worker:1, at_step: 6}\n" +
      kRecovery;
  const json failed =
      simulate_yaml(dir, "failed", scenario(kRing, kAllReduce, 12, faults, fidelity), "",
                    {.run_directory = dir + "/failed"});
  REQUIRE(failed["failures"].size() == 1);
  const json& f = failed["failures"][0];
  CHECK(f["task"] == "worker:1");
  CHECK(f["cause"] == "at_step 6");
  CHECK(f["recovery"] == "rollback");
  CHECK(f["restored_step"] == 4);
  // The chief had finished 6 steps (0-5) when worker:1 died beginning step 6.
  CHECK(f["lost_steps"] == 2);
  CHECK(f["recovery_seconds"] == Approx(5.0));
  CHECK(failed["weights_sha256"] == whole["weights_sha256"]);
  // Nothing is lost from the record: steps 4 and 5 were done twice.
  CHECK(step_numbers(failed["tasks"][0]) ==
        std::vector<int64_t>{0, 1, 2, 3, 4, 5, 4, 5, 6, 7, 8, 9, 10, 11});
  // Examples count the work the machines did: steps 4 and 5 again on the 3
  // replicas (batch 8), and the step 6 that the survivors had begun.
  const int64_t redone = failed["examples"].get<int64_t>() - whole["examples"].get<int64_t>();
  CHECK(redone >= 2 * 3 * 8);
  CHECK(redone <= 3 * 3 * 8);
  // The run took the failure's cost: noticed, restarted, steps redone.
  CHECK(failed["run_seconds"].get<double>() > whole["run_seconds"].get<double>() + 5.0);
  fs::remove_all(dir);
}

TEST_CASE("failures: an overlapped run on shared cores rolls back and ends as if it never failed") {
  // Tasks killed while their backward pass computes beside the ring, on
  // the cores they share (an actor of its own computes it): the run rolls
  // back and ends with the weights of the run that never failed.
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  write_bn_model(dir);
  auto yaml = [](const std::string& extra) {
    return "model: bn.yaml\ndata: synthetic:800\nseed: 5\ncluster:\n  machine: local\n"
           "  placement: one_host\n  chief: 1\n  workers: 2\n"
           "strategy:\n  name: allreduce\n  overlap: true\n  bucket_bytes: 64\n"
           "training:\n  batch_size: 24\n  steps: 16\n" +
           extra;
  };
  const json whole = simulate_yaml(dir, "whole", yaml(""));
  const json failed = simulate_yaml(
      dir, "failed",
      yaml("checkpoint: {every_steps: 2}\nfaults: {mtbf_hours: 0.00001}\n"
           "recovery: {detect_seconds: 0.001, restart_seconds: 0.001, max_restarts: 1000}\n"));
  CHECK(!failed["failures"].empty());
  CHECK(failed["steps"] == 16);
  CHECK(failed["weights_sha256"] == whole["weights_sha256"]);
  fs::remove_all(dir);
}

TEST_CASE("failures: without a checkpoint a rollback starts over from step 0") {
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  write_bn_model(dir);
  const json whole = simulate_yaml(dir, "whole", scenario(kRing, kAllReduce, 6, ""));
  const json failed = simulate_yaml(
      dir, "failed",
      scenario(kRing, kAllReduce, 6, "faults: [{task: chief, at_step: 3}]\n" + kRecovery));
  REQUIRE(failed["failures"].size() == 1);
  CHECK(failed["failures"][0]["restored_step"] == 0);
  CHECK(failed["failures"][0]["lost_steps"] == 3);
  CHECK(failed["weights_sha256"] == whole["weights_sha256"]);
  fs::remove_all(dir);
}

TEST_CASE("failures: an asynchronous worker that fails rejoins while the others go on") {
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  write_bn_model(dir);
  const json run = simulate_yaml(
      dir, "async",
      scenario(kPsCluster, kAsync, 10, "faults: [{task: worker:1, at_step: 4}]\n" + kRecovery));
  REQUIRE(run["failures"].size() == 1);
  const json& f = run["failures"][0];
  CHECK(f["recovery"] == "rejoin");
  CHECK(f["lost_steps"] == 0);  // it died between two steps
  // The failed worker goes on from where its pushes stopped, 5 s later.
  const json& worker1 = run["tasks"][2];
  REQUIRE(worker1["name"] == "worker:1");
  CHECK(step_numbers(worker1) == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  const auto starts = worker1["step_starts"].get<std::vector<double>>();
  CHECK(starts[4] - starts[3] > 5.0);
  // Nobody else waited for it: no step of theirs spans the outage.
  for (const int t : {0, 1, 3}) {
    const json& other = run["tasks"][t];
    CHECK(step_numbers(other).size() == 10);
    const auto s = other["step_starts"].get<std::vector<double>>();
    for (std::size_t i = 1; i < s.size(); ++i) CHECK(s[i] - s[i - 1] < 1.0);
  }
  // Every step of every worker reached the server once.
  CHECK(run["tasks"][4]["updates"] == 40);
  fs::remove_all(dir);
}

TEST_CASE("failures: a parameter server that fails rolls every task back") {
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  write_bn_model(dir);
  const json run = simulate_yaml(
      dir, "ps",
      scenario(kPsCluster, kAsync, 10,
               "checkpoint: {every_steps: 3}\nfaults: [{task: ps:0, at_step: 30}]\n" + kRecovery),
      "", {.run_directory = dir + "/ps"});
  REQUIRE(run["failures"].size() == 1);
  const json& f = run["failures"][0];
  CHECK(f["task"] == "ps:0");
  CHECK(f["recovery"] == "rollback");
  CHECK(f["cause"] == "at_step 30");  // a server's steps are the updates it applies
  CHECK(f["restored_step"].get<int64_t>() % 3 == 0);
  CHECK(f["restored_step"].get<int64_t>() > 0);
  // Every worker goes back to the checkpoint's step and on to the end:
  // those that had gone further did their steps since again.
  int redone = 0;
  for (const int t : {0, 1, 2, 3}) {
    const auto steps = step_numbers(run["tasks"][t]);
    CHECK(steps.back() == 9);
    redone += static_cast<int>(steps.size()) - 10;
  }
  CHECK(redone > 0);
  fs::remove_all(dir);
}

TEST_CASE("failures: failures at exponential times are drawn from the scenario's seed") {
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  write_bn_model(dir);
  // A mean time between failures of a few steps' time, on every task.
  const std::string faults =
      "checkpoint: {every_steps: 2}\nfaults: {mtbf_hours: 0.00002}\n"
      "recovery: {detect_seconds: 0.01, restart_seconds: 0.01, "
      "max_restarts: 1000}\n";
  auto times = [&](const json& run) {
    std::vector<double> at;
    for (const json& f : run["failures"]) at.push_back(f["at"].get<double>());
    return at;
  };
  const json a = simulate_yaml(dir, "a", scenario(kRing, kAllReduce, 40, faults, "timing"));
  const json b = simulate_yaml(dir, "b", scenario(kRing, kAllReduce, 40, faults, "timing"));
  CHECK(!a["failures"].empty());
  CHECK(times(a) == times(b));
  CHECK(a["steps"] == 40);
  std::set<std::string> tasks;
  for (const json& f : a["failures"]) tasks.insert(f["task"].get<std::string>());
  CHECK(tasks.size() > 1);  // every task has its own process
  fs::remove_all(dir);
}

TEST_CASE("failures: a run that keeps failing gives up after max_restarts") {
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  write_bn_model(dir);
  const std::string path = dir + "/doomed.yaml";
  std::ofstream(path) << scenario(
      kRing, kAllReduce, 20,
      "faults: [{task: worker:0, at_step: 2}, {task: worker:0, at_step: 3},"
      " {task: worker:0, at_step: 4}]\nrecovery: {max_restarts: 2}\n",
      "timing");
  const std::string said = distlab::testing::in_child_process([&] {
    try {
      const auto scenario = distlab::run::load_scenario(path);
      distlab::sim::simulate(scenario, distlab::sim::MachineCatalog::load_default(), {});
      return std::string("finished");
    } catch (const distlab::Error& e) {
      return std::string(e.what());
    }
  });
  CHECK_THAT(said, Catch::Contains("worker:0") && Catch::Contains("after 2 restarts") &&
                       Catch::Contains("recovery.max_restarts"));
  fs::remove_all(dir);
}

TEST_CASE("failures: a rollback while a worker waits to rejoin restarts that worker once") {
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  write_bn_model(dir);
  // worker:1 dies early and would come back 5 s later; ps:0 dies 1 s in,
  // and its rollback restarts every task, worker:1 included.
  const json run =
      simulate_yaml(dir, "both",
                    scenario(kPsCluster, kAsync, 10,
                             "checkpoint: {every_steps: 2}\nfaults: [{task: worker:1, at_step: 3}, "
                             "{task: ps:0, at_seconds: 1}]\n" +
                                 kRecovery),
                    "", {.run_directory = dir + "/both"});
  REQUIRE(run["failures"].size() == 2);
  CHECK(run["failures"][0]["recovery"] == "rejoin");
  CHECK(run["failures"][1]["recovery"] == "rollback");
  // The run ends (a second life of worker:1 beside the rollback's would
  // hang it). Its chief's last checkpoint came after every step: nothing
  // is left to do after the rollback, and worker:1's missed steps stay
  // missed, as an async worker's do when the run goes back to the chief's
  // step.
  CHECK(step_numbers(run["tasks"][0]).back() == 9);
  CHECK(run["failures"][1]["restored_step"] == 10);
  CHECK(step_numbers(run["tasks"][2]).back() == 2);
  fs::remove_all(dir);
}
