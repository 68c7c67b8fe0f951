// Keras' ReduceLROnPlateau in distributed runs: the chief's schedule
// observes its evaluation at the end of every epoch, and the rate it sets
// reaches whoever applies updates (every replica of a synchronous run, the
// shards of a parameter server) before the next epoch's first update. The
// rate and the schedule's counters are in the run's checkpoints.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "checkpoint/checkpoint_store.h"
#include "common/safetensors.h"
#include "simulation_harness.h"

namespace {

namespace fs = std::filesystem;
using distlab::testing::simulate_yaml;
using distlab::testing::TinyModelFolder;
using nlohmann::json;

// SGD with momentum at 0.1, and as `name`.yaml:
//   plateau: halved when the test loss has not improved by 100 (never, after
//     the first epoch) for 2 epochs: at the ends of epochs 3 and 5 of 5;
//   sensitive: halved after any epoch whose test loss is not 0.01 better
//     than the best, so that when the rate falls depends on the losses;
//   constant: no schedule.
void write_model(const std::string& folder, const std::string& name) {
  const std::string schedule =
      name == "plateau"     ? "reduce_lr_on_plateau: {factor: 0.5, patience: 2, min_delta: 100}\n"
      : name == "sensitive" ? "reduce_lr_on_plateau: {factor: 0.5, patience: 1, min_delta: 0.01}\n"
                            : "";
  std::ofstream(folder + "/" + name + ".yaml")
      << "name: " << name
      << "\ninput: [6]\nclasses: 3\nbatch_size: 8\nlayers:\n"
         "  - dense: {units: 7, activation: relu}\n  - dense: {units: 3}\n"
         "optimizer:\n  sgd: {learning_rate: 0.1, momentum: 0.9}\n"
      << schedule;
}

// Three replicas, or one where `one_worker` (a parameter server's worker
// alone trains as a single process does, bit for bit).
std::string scenario(const std::string& model, const std::string& strategy, int epochs,
                     bool one_worker = false) {
  std::string cluster = one_worker ? "  chief: 1\n" : "  chief: 1\n  workers: 2\n";
  std::string name = strategy;
  if (strategy == "local") cluster = "  chief: 1\n";
  if (strategy.starts_with("parameter_server")) {
    cluster += "  ps: 2\n";
    name = "parameter_server\n  mode: " + strategy.substr(strategy.find(' ') + 1);
  }
  return "model: " + model + ".yaml\ndata: synthetic:400\nseed: 3\n" +
         "cluster:\n  machine: n1-standard-4\n" + cluster + "strategy:\n  name: " + name +
         "\ntraining:\n  batch_size: 8\n  epochs: " + std::to_string(epochs) + "\n" +
         "checkpoint:\n  every_steps: 1000000\n";
}

// The schedule's position in a run's newest checkpoint ("extra").
json newest_schedule(const std::string& run_directory) {
  const auto files = distlab::checkpoint::list_checkpoints(run_directory + "/checkpoints");
  REQUIRE(!files.empty());
  std::ifstream in(files.front(), std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  const auto file = distlab::safetensors::decode(std::as_bytes(std::span(text)), files.front());
  return json::parse(file.metadata.at("distlab")).at("extra");
}

}  // namespace

TEST_CASE("the chief's plateau schedule sets the rate of every replica and server") {
  const std::string strategy = GENERATE(as<std::string>{}, "local", "allreduce",
                                        "parameter_server sync", "parameter_server async");
  INFO(strategy);
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  for (const char* model : {"plateau", "sensitive", "constant"}) write_model(dir, model);
  const bool one_worker = strategy.starts_with("parameter_server");
  const json scheduled =
      simulate_yaml(dir, "run-scheduled", scenario("plateau", strategy, 5, one_worker), "",
                    {.run_directory = dir + "/scheduled"});
  const json constant =
      simulate_yaml(dir, "run-constant", scenario("constant", strategy, 5, one_worker));
  // Observed at the end of each of the 5 epochs: better than infinity at the
  // first, then halved at the third and the fifth.
  const json schedule = newest_schedule(dir + "/scheduled");
  CHECK(schedule["learning_rate"].get<double>() == Approx(0.025));
  CHECK(schedule["plateau_waited"] == 0);
  CHECK(schedule.contains("plateau_best"));
  // The lower rates changed the training, on every replica alike.
  CHECK(scheduled["weights_sha256"] != constant["weights_sha256"]);
  for (const json& task : scheduled["tasks"]) {
    if (strategy == "allreduce") CHECK(task["weights_sha256"] == scheduled["weights_sha256"]);
  }
  if (strategy != "local") {
    const json local = simulate_yaml(dir, "run-local", scenario("plateau", "local", 5));
    if (one_worker) {
      // Local training: the servers took each rate exactly where a single
      // process does, the chief having observed the very losses it does.
      CHECK(scheduled["weights_sha256"] == local["weights_sha256"]);
      const json sensitive =
          simulate_yaml(dir, "run-sensitive", scenario("sensitive", strategy, 5, one_worker), "",
                        {.run_directory = dir + "/sensitive"});
      const json sensitive_local =
          simulate_yaml(dir, "run-sensitive-local", scenario("sensitive", "local", 5), "",
                        {.run_directory = dir + "/sensitive-local"});
      CHECK(sensitive["weights_sha256"] == sensitive_local["weights_sha256"]);
      const json decided = newest_schedule(dir + "/sensitive");
      CHECK(decided == newest_schedule(dir + "/sensitive-local"));
      CHECK(decided["learning_rate"].get<double>() < 0.1);  // it did fall
    } else {
      // The same global batches, summed in another order.
      CHECK(scheduled["final_loss"].get<double>() ==
            Approx(local["final_loss"].get<double>()).epsilon(1e-3));
    }
  }
  fs::remove_all(dir);
}

// Three workers of a synchronous parameter server among them, whose servers
// may hear the chief's rate after the others' pushes of the next step (the
// chief evaluates while they go on).
TEST_CASE("a run with a plateau schedule resumes to the run that never stopped") {
  const std::string strategy = GENERATE(as<std::string>{}, "allreduce", "parameter_server sync");
  INFO(strategy);
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  write_model(dir, "plateau");
  const json whole = simulate_yaml(dir, "whole", scenario("plateau", strategy, 5));
  // Stopped after epoch 4: one epoch waited since the rate was halved, a
  // counter the checkpoint must carry for the halving at epoch 5.
  simulate_yaml(dir, "first", scenario("plateau", strategy, 4), "",
                {.run_directory = dir + "/first"});
  CHECK(newest_schedule(dir + "/first")["plateau_waited"] == 1);
  CHECK(newest_schedule(dir + "/first")["learning_rate"].get<double>() == Approx(0.05));
  const json resumed = simulate_yaml(dir, "resumed", scenario("plateau", strategy, 5), "",
                                     {.resume = dir + "/first"});
  CHECK(resumed["weights_sha256"] == whole["weights_sha256"]);
  fs::remove_all(dir);
}

// Named "failures: ..." as the other tests of killed tasks, which ./test --sanitize
// leaves out (exceptions on SimGrid's actor stacks confuse ASan).
TEST_CASE("failures: an asynchronous chief that rejoins goes on at the servers' rate") {
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  write_model(dir, "plateau");
  const std::string async = "parameter_server async";
  const int per_epoch =
      simulate_yaml(dir, "one-epoch", scenario("plateau", async, 1))["tasks"][0]["steps"];
  // It dies half way through epoch 4, after the rate was halved at the end
  // of epoch 3; its schedule's counters die with it.
  const std::string fault =
      "faults: [{task: chief, at_step: " + std::to_string(3 * per_epoch + per_epoch / 2) +
      "}]\nrecovery: {detect_seconds: 2, restart_seconds: 3}\n";
  const json run = simulate_yaml(dir, "run-rejoin", scenario("plateau", async, 5) + fault, "",
                                 {.run_directory = dir + "/rejoin"});
  REQUIRE(run["failures"].size() == 1);
  CHECK(run["failures"][0]["recovery"] == "rejoin");
  // Back at 0.05, not at the spec's 0.1; afresh, its schedule takes epoch 4
  // as an improvement and has waited one epoch at the end of the fifth.
  const json schedule = newest_schedule(dir + "/rejoin");
  CHECK(schedule["learning_rate"].get<double>() == Approx(0.05));
  CHECK(schedule["plateau_waited"] == 1);
  fs::remove_all(dir);
}
