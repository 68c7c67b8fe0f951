// Every simulated step split by phase (strategy/phase.h): the phases add up
// to the step, each where the strategy spends it.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "phase_checks.h"
#include "simulation_harness.h"
#include "strategy/phase.h"

namespace {

using distlab::strategy::index_of;
using distlab::strategy::Phase;
using distlab::testing::check_phases_add_up;
using nlohmann::json;

json simulate(const std::string& name, const std::string& cluster, const std::string& strategy) {
  const distlab::testing::TinyModelFolder scratch(16);
  const std::string& folder = scratch.path();
  return distlab::testing::simulate_yaml(
      folder, name,
      "model: tiny.yaml\ndata: synthetic:600\nseed: 7\ncluster:\n  machine: n1-standard-4\n" +
          cluster + "strategy:\n" + strategy +
          "training:\n  batch_size: 32\n  steps: 8\n  eval_every: 4\n"
          "checkpoint:\n  every_steps: 4\n");
}

double phase(const json& phases, Phase p) {
  return phases[index_of(p)].get<double>();
}

}  // namespace

TEST_CASE("simulated ring steps: forward, backward, packing, communication, optimizer") {
  const json run = simulate("ring", "  chief: 1\n  workers: 2\n", "  name: allreduce\n");
  check_phases_add_up(run);
  const json& chief = run["tasks"][0];
  double forward = 0, backward = 0, optimizer = 0, packing = 0, communication = 0, evaluation = 0,
         checkpoint = 0;
  for (const json& phases : chief["step_phases"]) {
    forward += phase(phases, Phase::kForward);
    backward += phase(phases, Phase::kBackward);
    optimizer += phase(phases, Phase::kOptimizer);
    packing += phase(phases, Phase::kPacking);
    communication += phase(phases, Phase::kCommunication);
    evaluation += phase(phases, Phase::kEvaluation);
    checkpoint += phase(phases, Phase::kCheckpoint);
  }
  CHECK(forward > 0);
  CHECK(backward > 0);
  CHECK(optimizer > 0);
  CHECK(packing > 0);  // the ring's sums
  CHECK(communication > 0);
  CHECK(evaluation > 0);  // at step 4, inside the chief's step
  CHECK(checkpoint > 0);
}

TEST_CASE("simulated steps add up with communication that overlaps the backward pass") {
  check_phases_add_up(simulate("ring-overlap", "  chief: 1\n  workers: 2\n",
                               "  name: allreduce\n  overlap: true\n  bucket_bytes: 64\n"));
  check_phases_add_up(simulate("ps-overlap", "  chief: 1\n  workers: 2\n  ps: 2\n",
                               "  name: parameter_server\n  mode: sync\n  overlap: true\n"));
}

TEST_CASE("simulated CPU time: each compute phase on the task's threads, no CPU waiting") {
  // n1-standard-4, a host per task: a task computes on its 4 vCPUs, and a
  // message costs no CPU of the model's (the NIC moves it).
  const json run = simulate("cpu", "  chief: 1\n  workers: 1\n", "  name: allreduce\n");
  for (const json& task : run["tasks"]) {
    INFO(task["name"].get<std::string>());
    for (std::size_t i = 0; i < task["step_phases"].size(); ++i) {
      const json& wall = task["step_phases"][i];
      const json& cpu = task["step_phase_cpu"][i];
      REQUIRE(cpu.size() == wall.size());
      for (const Phase p : {Phase::kForward, Phase::kOptimizer, Phase::kPacking}) {
        CHECK(phase(cpu, p) == Approx(4 * phase(wall, p)).margin(1e-12));
      }
      CHECK(phase(cpu, Phase::kForward) > 0);
      CHECK(phase(cpu, Phase::kWaiting) == 0);
      CHECK(phase(cpu, Phase::kCommunication) == 0);
      CHECK(phase(cpu, Phase::kCheckpoint) == 0);
    }
  }
}

TEST_CASE("simulated parameter-server steps add up on workers and servers") {
  const json run = simulate("ps", "  chief: 1\n  workers: 2\n  ps: 1\n",
                            "  name: parameter_server\n  mode: async\n");
  check_phases_add_up(run);
  const json& server = run["tasks"].back();
  REQUIRE(server["name"] == "ps:0");
  for (const json& phases : server["step_phases"]) CHECK(phase(phases, Phase::kOptimizer) > 0);
}
