// Checkpoints in the simulator: a resumed run goes on exactly as the run
// that never stopped, a checkpoint costs what the host's disk takes to
// write it, and it blocks whom TensorFlow's saver blocks.
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "checkpoint/checkpoint_store.h"
#include "common/atomic_file.h"
#include "common/safetensors.h"
#include "sim/machine.h"
#include "simulation_harness.h"

namespace {

namespace fs = std::filesystem;
using distlab::testing::simulate_yaml;
using distlab::testing::TinyModelFolder;
using distlab::testing::write_bn_model;
using nlohmann::json;

std::string scenario(const std::string& strategy, int steps, const std::string& extra = "",
                     const std::string& fidelity = "full") {
  std::string cluster = "  chief: 1\n  workers: 2\n";
  std::string name = strategy;
  if (strategy == "local") cluster = "  chief: 1\n";
  if (strategy.starts_with("parameter_server")) {
    cluster += "  ps: 2\n";
    name = "parameter_server\n  mode: " + strategy.substr(strategy.find(' ') + 1);
  }
  return "model: bn.yaml\ndata: synthetic:400\nseed: 5\nfidelity: " + fidelity +
         "\ncluster:\n  machine: n1-standard-4\n" + cluster + "strategy:\n  name: " + name +
         "\ntraining:\n  batch_size: 8\n  steps: " + std::to_string(steps) + "\n" + extra;
}

std::string checkpoint_every(int steps) {
  return "checkpoint:\n  every_steps: " + std::to_string(steps) + "\n  keep: 2\n";
}

const json& chief(const json& run) {
  return run["tasks"][0];
}

}  // namespace

TEST_CASE("a resumed synchronous run ends with the weights of the run that never stopped") {
  const std::string strategy =
      GENERATE(as<std::string>{}, "local", "allreduce", "parameter_server sync");
  INFO(strategy);
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  write_bn_model(dir);
  const json whole = simulate_yaml(dir, "whole", scenario(strategy, 10));
  const json first = simulate_yaml(dir, "first", scenario(strategy, 6, checkpoint_every(4)), "",
                                   {.run_directory = dir + "/first"});
  // Written at steps 4 and 6 (the end); the newest two are kept.
  const auto files = distlab::checkpoint::list_checkpoints(dir + "/first/checkpoints");
  REQUIRE(files.size() == 2);
  CHECK(fs::path(files[0]).filename() == "step-000000006.safetensors");
  CHECK(first["weights_sha256"] != whole["weights_sha256"]);

  const json resumed =
      simulate_yaml(dir, "resumed", scenario(strategy, 10), "", {.resume = dir + "/first"});
  CHECK(resumed["weights_sha256"] == whole["weights_sha256"]);
  CHECK(resumed["start_step"] == 6);
  CHECK(resumed["steps"] == 10);
  CHECK(resumed["resumed_from"] == files[0]);
  // Step numbers go on from the checkpoint's, on every replica.
  for (const json& task : resumed["tasks"]) {
    if (task["name"].get<std::string>().starts_with("ps")) continue;
    CHECK(task["step_numbers"] == json({6, 7, 8, 9}));
  }
  // An earlier checkpoint, named as a file, gives the same end.
  const json from_file =
      simulate_yaml(dir, "from-file", scenario(strategy, 10), "", {.resume = files[1]});
  CHECK(from_file["start_step"] == 4);
  CHECK(from_file["weights_sha256"] == whole["weights_sha256"]);
  fs::remove_all(dir);
}

TEST_CASE("a simulated checkpoint costs its bytes over the disk's bandwidth plus a per-file cost") {
  const std::string fidelity = GENERATE(as<std::string>{}, "full", "timing");
  INFO(fidelity);
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  write_bn_model(dir);
  const auto catalog = distlab::sim::MachineCatalog::load_default();
  const auto& machine = catalog.machine("n1-standard-4");
  REQUIRE(machine.disk_file_seconds > 0);
  const json run =
      simulate_yaml(dir, "run", scenario("allreduce", 9, checkpoint_every(3), fidelity), "",
                    {.run_directory = dir + "/run"});
  const json& c = chief(run);
  REQUIRE(c["checkpoints"] == 3);  // steps 3, 6 and 9
  const double bytes_per_file = c["checkpoint_bytes"].get<double>() / 3;
  const double expected =
      3 * (bytes_per_file / machine.disk_write_bandwidth + machine.disk_file_seconds);
  CHECK(c["checkpoint_seconds"].get<double>() == Approx(expected).epsilon(0.01));
  // The cost lands in the step after those a checkpoint holds, written
  // once their records are kept: steps 3 and 6; the last, after step 8,
  // in none.
  CHECK(c["step_checkpoint"][2].get<double>() == 0);
  CHECK(c["step_checkpoint"][3].get<double>() == Approx(expected / 3).epsilon(0.01));
  CHECK(c["step_checkpoint"][6].get<double>() == Approx(expected / 3).epsilon(0.01));
  double in_steps = 0;
  for (const json& seconds : c["step_checkpoint"]) in_steps += seconds.get<double>();
  CHECK(in_steps == Approx(2 * expected / 3).epsilon(0.01));
  // Only the chief writes.
  CHECK(run["tasks"][1]["checkpoints"] == 0);
  CHECK(run["tasks"][1]["checkpoint_seconds"] == 0.0);

  const auto files = distlab::checkpoint::list_checkpoints(dir + "/run/checkpoints");
  if (fidelity == "full") {
    // The bytes counted are the file's.
    REQUIRE(files.size() == 2);
    CHECK(fs::file_size(files[0]) == static_cast<uintmax_t>(bytes_per_file));
  } else {
    CHECK(files.empty());  // no values to write, only their time
  }
  fs::remove_all(dir);
}

TEST_CASE(
    "under sync the other replicas wait for the chief's checkpoint; under async they do not") {
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  write_bn_model(dir);
  // A slow disk, so that a checkpoint dwarfs a step.
  std::string catalog =
      "cpus:\n  - {name: c, ghz: 2, flops_per_cycle_per_vcpu: 32, efficiency: 0.5,\n"
      "     memory_gb_per_s_per_vcpu: 10, memory_gb_per_s_max: 100}\n"
      "machines:\n  - {name: n1-standard-4, cpu: c, vcpus: 4, memory_gib: 15,\n"
      "     nic_gbps: 8, disk_write_mb_per_s: 1, disk_file_ms: 500}\n";
  std::ofstream(dir + "/slow-disk.yaml") << catalog;

  const json sync =
      simulate_yaml(dir, "sync", scenario("allreduce", 6, checkpoint_every(3), "timing"),
                    dir + "/slow-disk.yaml");
  const double cost = chief(sync)["checkpoint_seconds"].get<double>() / 2;
  REQUIRE(cost > 0.5);
  // Worker 1 waits at the next collective for as long as the chief wrote.
  const json& worker = sync["tasks"][1];
  CHECK(worker["step_waiting"][3].get<double>() + worker["step_waiting"][2].get<double>() >
        0.9 * cost);

  const json async = simulate_yaml(
      dir, "async", scenario("parameter_server async", 6, checkpoint_every(3), "timing"),
      dir + "/slow-disk.yaml");
  REQUIRE(chief(async)["checkpoints"] == 2);
  // Worker 1 only talks to the parameter servers, which go on serving.
  for (const json& waiting : async["tasks"][1]["step_waiting"])
    CHECK(waiting.get<double>() < 0.1 * cost);
  fs::remove_all(dir);
}

TEST_CASE("an asynchronous parameter-server run resumes from the chief's step") {
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  write_bn_model(dir);
  simulate_yaml(dir, "first", scenario("parameter_server async", 5, checkpoint_every(5)), "",
                {.run_directory = dir + "/first"});
  // The updates each shard had applied when the chief read it (async: the
  // others may still have been pushing).
  const auto files = distlab::checkpoint::list_checkpoints(dir + "/first/checkpoints");
  REQUIRE(files.size() == 1);
  const std::vector<std::byte> bytes = distlab::read_file_bytes(files[0]);
  const distlab::safetensors::File file = distlab::safetensors::decode(bytes, files[0]);
  const auto* versions = file.find("optimizer/steps");
  REQUIRE(versions != nullptr);
  REQUIRE(versions->shape == std::vector<int64_t>{2});
  std::vector<int64_t> applied(2);
  std::memcpy(applied.data(), versions->data.data(), 16);
  CHECK(applied[0] > 0);

  const json resumed = simulate_yaml(dir, "resumed", scenario("parameter_server async", 8), "",
                                     {.resume = dir + "/first"});
  CHECK(resumed["start_step"] == 5);
  for (const json& task : resumed["tasks"]) {
    const std::string name = task["name"];
    if (name.starts_with("ps")) {
      // Each shard goes on from the updates it had applied; 3 replicas
      // push 3 more steps each.
      const int j = name == "ps:0" ? 0 : 1;
      CHECK(task["step_numbers"][0] == applied[j]);
      CHECK(task["steps"] == 9);
    } else {
      CHECK(task["step_numbers"] == json({5, 6, 7}));
    }
  }
  CHECK(resumed["final_loss"].get<double>() > 0);
  fs::remove_all(dir);
}
