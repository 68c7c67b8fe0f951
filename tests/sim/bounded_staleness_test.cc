// Bounded staleness (strategy.staleness_bound, stale-synchronous parallel):
// beside a straggler, no replica runs more than the bound ahead of the
// slowest, whose pushes let the others' pulls go; without a bound they run
// ahead; and the run still ends once every replica has trained.
#include <catch2/catch.hpp>
#include <string>

#include "simulation_harness.h"

namespace {

using distlab::testing::simulate_yaml;
using distlab::testing::task_named;
using distlab::testing::TinyModelFolder;
using nlohmann::json;

constexpr int kSteps = 12;

std::string scenario(const std::string& bound) {
  return "model: tiny.yaml\ndata: synthetic:600\nseed: 7\nfidelity: timing\n"
         "cluster:\n  machine: n1-standard-4\n  chief: 1\n  workers: 2\n  ps: 2\n"
         "strategy:\n  name: parameter_server\n  mode: async\n" +
         bound + "training:\n  batch_size: 960\n  steps: " + std::to_string(kSteps) +
         "\nslowdowns:\n  - {task: worker:1, factor: 4}\n";
}

// The most steps `fast` ended ahead of `slow`: for each step k of `fast`,
// k minus the steps `slow` had ended by then.
int lead(const json& fast, const json& slow) {
  int most = 0;
  for (int k = 0; k < kSteps; ++k) {
    const double at = fast["step_ends"][k].get<double>();
    int done = 0;
    while (done < kSteps && slow["step_ends"][done].get<double>() <= at) ++done;
    most = std::max(most, k + 1 - done);
  }
  return most;
}

}  // namespace

TEST_CASE("bounded staleness: no replica runs more than the bound ahead of a straggler") {
  const TinyModelFolder scratch(4000);
  const json free = simulate_yaml(scratch.path(), "free", scenario(""));
  const int bound = GENERATE(0, 1, 3);
  const json bounded = simulate_yaml(
      scratch.path(), "bounded", scenario("  staleness_bound: " + std::to_string(bound) + "\n"));
  INFO("bound " << bound);
  for (const std::string fast : {"chief:0", "worker:0"}) {
    // A pull for step k waits for the straggler's step k - 1 - bound, so a
    // replica ends step k with the straggler's k - bound steps behind it.
    CHECK(lead(task_named(bounded, fast), task_named(bounded, "worker:1")) <= bound + 1);
    CHECK(lead(task_named(free, fast), task_named(free, "worker:1")) > bound + 1);
    CHECK(task_named(bounded, fast)["steps"] == kSteps);
  }
  CHECK(task_named(bounded, "worker:1")["steps"] == kSteps);
  // The fast replicas wait: the run takes no less time, and the servers
  // apply every push.
  CHECK(task_named(bounded, "ps:0")["steps"] == 3 * kSteps);
}
