// network.collectives: analytic against the message-level ring it stands
// in for: on the tasks' own links (CM02, alpha-beta per message) the two
// give the same step times within 1%, and the same bytes but for the
// chunks' rounding, for rings of 2 to 16, float32 and half-precision
// wires, buckets and a backward pass that overlaps them; and where members
// reach the ring apart, what the closed form leaves out.
#include <catch2/catch.hpp>
#include <string>

#include "simulation_harness.h"

namespace {

using distlab::testing::simulate_yaml;
using distlab::testing::TinyModelFolder;
using nlohmann::json;

std::string scenario(int workers, const std::string& strategy, const std::string& collectives,
                     const std::string& worker_machine) {
  return "model: " DISTLAB_SOURCE_DIR
         "/scenarios/models/mnist_cnn.yaml\n"
         "data: synthetic:100000\nseed: 1\nfidelity: timing\n"
         "cluster:\n  machine: n1-standard-4\n  worker_machine: " +
         worker_machine + "\n  chief: 1\n  workers: " + std::to_string(workers) +
         "\nstrategy:\n  name: allreduce\n" + strategy +
         "training:\n  batch_size: " + std::to_string(32 * (workers + 1)) +
         "\n  steps: 4\n  eval_examples: 100\nnetwork:\n  latency_us: 50\n  collectives: " +
         collectives + "\n";
}

}  // namespace

TEST_CASE("analytic collectives give the message-level ring's times within 1%") {
  struct Case {
    int workers;
    std::string strategy;
    std::string worker_machine;
  };
  const Case c = GENERATE(Case{1, "", "n1-standard-4"}, Case{3, "", "n1-standard-4"},
                          Case{15, "", "n1-standard-4"},
                          Case{3, "  gradient_dtype: float16\n", "n1-standard-4"},
                          Case{3, "  bucket_bytes: 65536\n", "n1-standard-4"},
                          Case{3, "  bucket_bytes: 65536\n  overlap: true\n", "n1-standard-4"});
  INFO(c.workers + 1 << " replicas, workers on " << c.worker_machine << ", strategy:\n"
                     << c.strategy);
  const TinyModelFolder scratch(4);
  const json messages = simulate_yaml(
      scratch.path(), "messages", scenario(c.workers, c.strategy, "messages", c.worker_machine));
  const json analytic = simulate_yaml(
      scratch.path(), "analytic", scenario(c.workers, c.strategy, "analytic", c.worker_machine));
  CHECK(analytic["run_seconds"].get<double>() ==
        Approx(messages["run_seconds"].get<double>()).epsilon(0.01));
  for (std::size_t t = 0; t < messages["tasks"].size(); ++t) {
    const json& m = messages["tasks"][t];
    const json& a = analytic["tasks"][t];
    INFO(m["name"].get<std::string>());
    CHECK(a["bytes_sent"].get<double>() == Approx(m["bytes_sent"].get<double>()).epsilon(0.01));
    CHECK(a["communication_seconds"].get<double>() ==
          Approx(m["communication_seconds"].get<double>()).epsilon(0.01).margin(1e-6));
    for (std::size_t s = 0; s < m["step_ends"].size(); ++s) {
      CHECK(a["step_ends"][s].get<double>() ==
            Approx(m["step_ends"][s].get<double>()).epsilon(0.01));
    }
  }
}

// Members that reach the ring at different times: the message-level ring
// starts its first rounds before the last member comes, and ends at
// different times for different members; the closed form starts once the
// last has come, and ends at once for all. Here (a chief slower to compute
// than its workers) each step ends within 5% of the message-level one.
TEST_CASE("analytic collectives differ a little where members reach the ring apart") {
  const TinyModelFolder scratch(4);
  const json messages =
      simulate_yaml(scratch.path(), "messages", scenario(3, "", "messages", "n1-standard-16"));
  const json analytic =
      simulate_yaml(scratch.path(), "analytic", scenario(3, "", "analytic", "n1-standard-16"));
  for (std::size_t t = 0; t < messages["tasks"].size(); ++t) {
    const json& m = messages["tasks"][t]["step_ends"];
    const json& a = analytic["tasks"][t]["step_ends"];
    for (std::size_t s = 0; s < m.size(); ++s) {
      CHECK(a[s].get<double>() == Approx(m[s].get<double>()).epsilon(0.05));
    }
  }
}
