// The simulated parameter-server step against its analytic cost. With
// compute made free, a synchronous step is a push of every shard, one
// update, and the replies to the next pulls; w workers push n bytes each to
// k servers holding n/k each. A server's link carries w shards, a worker's
// link k shards, so the busier of the two sets the pace:
//
//   T_step = 2 * alpha + 2 * max(w / k, 1) * n / beta
//
// (The pull request, sent right after the push, travels meanwhile.)
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "simulation_harness.h"

namespace {

using distlab::testing::simulate_yaml;
using distlab::testing::TinyModelFolder;
using nlohmann::json;

constexpr double kLatency = 100e-6;
constexpr double kBandwidth = 1e9;  // bytes/s: nic_gbps 8

// A machine whose compute takes no measurable time.
std::string instant_catalog(const std::string& folder) {
  const std::string path = folder + "/instant_machines.yaml";
  std::ofstream(path)
      << "cpus:\n"
         "  - name: instant\n    ghz: 10\n    flops_per_cycle_per_vcpu: 1024\n"
         "    efficiency: 1\n    memory_gb_per_s_per_vcpu: 1000\n"
         "    memory_gb_per_s_max: 1000\n"
         "series: []\ninterconnects: []\ngpus: []\n"
         "machines:\n"
         "  - name: instant\n    cpu: instant\n    vcpus: 4096\n    memory_gib: 64\n"
         "    nic_gbps: 8\n    disk_write_mb_per_s: 100\n";
  return path;
}

}  // namespace

TEST_CASE("a synchronous parameter-server step meets the alpha-beta model") {
  const auto [workers, servers] = GENERATE(std::pair{1, 1}, std::pair{2, 1}, std::pair{4, 1},
                                           std::pair{4, 2}, std::pair{2, 4}, std::pair{6, 3});
  const TinyModelFolder scratch(4000);
  const std::string& dir = scratch.path();
  const std::string yaml =
      "model: tiny.yaml\ndata: synthetic:600\ncluster:\n  machine: instant\n  chief: 0\n"
      "  workers: " +
      std::to_string(workers) + "\n  ps: " + std::to_string(servers) +
      "\nstrategy:\n  name: parameter_server\n  mode: sync\ntraining:\n  batch_size: 8\n"
      "  steps: 6\nnetwork:\n  latency_us: 100\n";
  const json run = simulate_yaml(dir, "ps", yaml, instant_catalog(dir));
  const double n = run["model_bytes"].get<double>();
  const double model =
      2 * kLatency + 2 * std::max(static_cast<double>(workers) / servers, 1.0) * n / kBandwidth;
  const json& starts = run["tasks"][0]["step_starts"];
  for (std::size_t s = 1; s + 1 < starts.size(); ++s) {
    const double step = starts[s + 1].get<double>() - starts[s].get<double>();
    INFO(workers << " workers, " << servers << " ps, " << n << " bytes: step " << step
                 << " s, model " << model);
    CHECK(step == Approx(model).epsilon(0.03));
  }
}
