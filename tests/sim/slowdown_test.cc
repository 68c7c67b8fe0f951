// Slow tasks in the simulator (scenario `slowdowns`, strategy/slowdown.h):
// a straggler's work takes its factor's time and a synchronous step waits
// for it, an asynchronous worker's does not slow the others, a noisy
// neighbour slows only the steps in its window, and step-time noise is
// the same for the same seed. Times change; the weights do not.
#include <catch2/catch.hpp>
#include <iomanip>
#include <sstream>
#include <string>

#include "simulation_harness.h"

namespace {

using distlab::testing::simulate_yaml;
using distlab::testing::task_named;
using distlab::testing::TinyModelFolder;
using nlohmann::json;

constexpr int kSteps = 8;
// Wide enough that a step's compute outweighs its messages.
constexpr int kHidden = 4000;

std::string scenario(const std::string& strategy, const std::string& slowdowns, uint64_t seed = 7) {
  return "model: tiny.yaml\ndata: synthetic:600\nseed: " + std::to_string(seed) +
         "\nfidelity: timing\ncluster:\n  machine: n1-standard-4\n  chief: 1\n  workers: 2\n" +
         (strategy == "ps" ? "  ps: 1\nstrategy:\n  name: parameter_server\n  mode: async\n"
                           : "strategy:\n  name: allreduce\n") +
         "training:\n  batch_size: 960\n  steps: " + std::to_string(kSteps) + "\n" +
         (slowdowns.empty() ? "" : "slowdowns:\n" + slowdowns);
}

}  // namespace

TEST_CASE("slowdowns: a straggler's work takes twice as long, and a synchronous step waits") {
  const TinyModelFolder scratch(kHidden);
  const json even = simulate_yaml(scratch.path(), "even", scenario("allreduce", ""));
  const json slow = simulate_yaml(scratch.path(), "slow",
                                  scenario("allreduce", "  - {task: worker:1, factor: 2}\n"));
  const json& straggler = task_named(slow, "worker:1");
  const json& chief = task_named(slow, "chief:0");
  for (int s = 0; s < kSteps; ++s) {
    CHECK(straggler["compute"][s].get<double>() ==
          Approx(2 * task_named(even, "worker:1")["compute"][s].get<double>()).epsilon(1e-6));
  }
  CHECK(straggler["slowdown_seconds"].get<double>() ==
        Approx(straggler["compute_seconds"].get<double>() / 2).epsilon(1e-9));
  CHECK(chief["slowdown_seconds"] == 0);
  // The others wait for it at every all-reduce: the run takes longer.
  double waited = 0;
  for (const json& w : chief["step_waiting"]) waited += w.get<double>();
  CHECK(waited > 0.5 * chief["compute_seconds"].get<double>());
  CHECK(slow["run_seconds"].get<double>() > 1.5 * even["run_seconds"].get<double>());
  for (int s = 0; s < kSteps; ++s) {
    CHECK(chief["compute"][s].get<double>() ==
          Approx(task_named(even, "chief:0")["compute"][s].get<double>()).epsilon(1e-9));
  }
}

TEST_CASE("slowdowns: an asynchronous straggler does not slow the other workers") {
  const TinyModelFolder scratch(kHidden);
  const json even = simulate_yaml(scratch.path(), "even", scenario("ps", ""));
  const json slow =
      simulate_yaml(scratch.path(), "slow", scenario("ps", "  - {task: worker:1, factor: 3}\n"));
  const double others_even = task_named(even, "worker:0")["step_ends"].back().get<double>();
  const double others_slow = task_named(slow, "worker:0")["step_ends"].back().get<double>();
  const double straggler = task_named(slow, "worker:1")["step_ends"].back().get<double>();
  // No slower (a little faster: the server is less busy).
  CHECK(others_slow <= 1.02 * others_even);
  CHECK(straggler > 1.3 * others_slow);
}

TEST_CASE("slowdowns: a noisy neighbour slows the steps of its window alone") {
  const TinyModelFolder scratch(kHidden);
  const json even = simulate_yaml(scratch.path(), "even", scenario("allreduce", ""));
  const json& chief_even = task_named(even, "chief:0");
  // From the middle of the second step to the middle of the sixth, on the
  // chief.
  auto middle = [&](int s) {
    return (chief_even["step_starts"][s].get<double>() + chief_even["step_ends"][s].get<double>()) /
           2;
  };
  const double from = middle(1);
  const double to = middle(5);
  std::ostringstream window;
  window << std::setprecision(17) << "  - {task: chief:0, factor: 4, from_seconds: " << from
         << ", to_seconds: " << to << "}\n";
  const json noisy = simulate_yaml(scratch.path(), "noisy", scenario("allreduce", window.str()));
  const json& chief = task_named(noisy, "chief:0");
  const double base = chief_even["compute"][0].get<double>();
  int outside = 0, inside = 0;
  for (int s = 0; s < kSteps; ++s) {
    const double start = chief["step_starts"][s].get<double>();
    const double end = chief["step_ends"][s].get<double>();
    INFO("step " << s << " from " << start << " to " << end << " s");
    if (end <= from || start >= to) {
      ++outside;
      CHECK(chief["compute"][s].get<double>() == Approx(base).epsilon(1e-6));
    } else if (start >= from && end <= to) {
      ++inside;
      CHECK(chief["compute"][s].get<double>() == Approx(4 * base).epsilon(1e-6));
    }
  }
  CHECK(outside >= 2);
  CHECK(inside >= 1);
}

TEST_CASE("slowdowns: step-time noise slows the same steps for the same seed") {
  const TinyModelFolder scratch(kHidden);
  const std::string noise = "  - {lognormal_sigma: 0.3}\n";
  const json even = simulate_yaml(scratch.path(), "even", scenario("allreduce", ""));
  const json a = simulate_yaml(scratch.path(), "a", scenario("allreduce", noise));
  const json b = simulate_yaml(scratch.path(), "b", scenario("allreduce", noise));
  const json other = simulate_yaml(scratch.path(), "c", scenario("allreduce", noise, 8));
  CHECK(a["tasks"][1]["compute"] == b["tasks"][1]["compute"]);
  CHECK(a["tasks"][1]["compute"] != other["tasks"][1]["compute"]);
  // Each task its own draws; never faster than the machine.
  CHECK(a["tasks"][0]["compute"] != a["tasks"][1]["compute"]);
  for (int s = 0; s < kSteps; ++s) {
    CHECK(a["tasks"][1]["compute"][s].get<double>() >=
          even["tasks"][1]["compute"][s].get<double>() * (1 - 1e-9));
  }
  // Times, not the arithmetic: the same weights.
  CHECK(a["tasks"][0]["weights_sha256"] == even["tasks"][0]["weights_sha256"]);
}
