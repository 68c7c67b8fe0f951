// Gradient communication that overlaps the backward pass
// (strategy.overlap): the lab CNN's buckets reduced, or its shards pushed,
// while the backward pass makes the next final. The step gets shorter by
// the communication hidden behind the backward pass, which is counted as
// hidden rather than exposed; the backward pass takes its time as before;
// every step's phases still add up to it.
#include <catch2/catch.hpp>
#include <string>

#include "phase_checks.h"
#include "simulation_harness.h"
#include "strategy/phase.h"

namespace {

using distlab::strategy::index_of;
using distlab::strategy::Phase;
using distlab::testing::check_phases_add_up;
using distlab::testing::simulate_yaml;
using distlab::testing::task_named;
using distlab::testing::TinyModelFolder;
using nlohmann::json;

std::string scenario(const std::string& fidelity, const std::string& cluster,
                     const std::string& strategy) {
  return "model: " DISTLAB_SOURCE_DIR
         "/scenarios/models/mnist_cnn.yaml\n"
         "data: synthetic:2000\nseed: 3\nfidelity: " +
         fidelity + "\ncluster:\n" + cluster + "strategy:\n" + strategy +
         "training:\n  batch_size: 96\n  steps: 6\n  eval_every: 0\n  eval_examples: 100\n";
}

const std::string kRing = "  machine: n1-standard-4\n  chief: 1\n  workers: 2\n";
const std::string kBuckets = "  name: allreduce\n  bucket_bytes: 131072\n";

double exposed(const json& task) {
  return task["communication_seconds"].get<double>() + task["waiting_seconds"].get<double>();
}

double phase_total(const json& task, Phase phase) {
  double total = 0;
  for (const json& phases : task["step_phases"]) total += phases[index_of(phase)].get<double>();
  return total;
}

}  // namespace

TEST_CASE("overlap: buckets reduced during the backward pass hide their time behind it") {
  const TinyModelFolder scratch(4);
  const json after = simulate_yaml(scratch.path(), "after", scenario("timing", kRing, kBuckets));
  const json beside = simulate_yaml(scratch.path(), "beside",
                                    scenario("timing", kRing, kBuckets + "  overlap: true\n"));
  check_phases_add_up(beside);
  for (const std::string name : {"chief:0", "worker:0", "worker:1"}) {
    INFO(name);
    const json& a = task_named(after, name);
    const json& b = task_named(beside, name);
    CHECK(a["hidden_communication_seconds"] == 0);
    CHECK(b["hidden_communication_seconds"].get<double>() > 0);
    CHECK(exposed(b) < exposed(a));
    // The backward pass takes its time as before; the same bytes travel.
    CHECK(phase_total(b, Phase::kBackward) ==
          Approx(phase_total(a, Phase::kBackward)).epsilon(1e-9));
    CHECK(b["bytes_sent"] == a["bytes_sent"]);
  }
  CHECK(beside["run_seconds"].get<double>() < after["run_seconds"].get<double>());
}

TEST_CASE("overlap: one bucket waits for the whole backward pass, as without overlap") {
  // A bucket larger than the model: the ring over the whole gradient once
  // the backward pass has ended, the same sums in the same order.
  const TinyModelFolder scratch(4);
  const std::string whole = "  name: allreduce\n  bucket_bytes: 1073741824\n";
  const json after = simulate_yaml(scratch.path(), "after", scenario("full", kRing, whole));
  const json beside =
      simulate_yaml(scratch.path(), "beside", scenario("full", kRing, whole + "  overlap: true\n"));
  CHECK(beside["weights_sha256"] == after["weights_sha256"]);
  CHECK(beside["run_seconds"].get<double>() ==
        Approx(after["run_seconds"].get<double>()).epsilon(1e-9));
  CHECK(task_named(beside, "chief:0")["hidden_communication_seconds"] == 0);
}

TEST_CASE("overlap: a worker pushes each server's shard as the backward pass makes it final") {
  const TinyModelFolder scratch(4);
  const std::string cluster = "  machine: n1-standard-4\n  chief: 1\n  workers: 1\n  ps: 3\n";
  const std::string ps = "  name: parameter_server\n  mode: sync\n";
  const json after = simulate_yaml(scratch.path(), "after", scenario("full", cluster, ps));
  const json beside =
      simulate_yaml(scratch.path(), "beside", scenario("full", cluster, ps + "  overlap: true\n"));
  check_phases_add_up(beside);
  // The same gradients reach the same servers: the same weights. A push
  // is handed off at once, so what overlap hides is the network's time:
  // the shards arrive sooner, and the pull after them waits less.
  CHECK(beside["weights_sha256"] == after["weights_sha256"]);
  const json& chief = task_named(beside, "chief:0");
  CHECK(exposed(chief) < exposed(task_named(after, "chief:0")));
  CHECK(beside["run_seconds"].get<double>() < after["run_seconds"].get<double>());
}

TEST_CASE("overlap: on cores the tasks share, the backward pass computes beside the ring") {
  const TinyModelFolder scratch(4);
  const std::string one_host =
      "  machine: local\n  chief: 1\n  workers: 2\n  placement: one_host\n";
  const json after = simulate_yaml(scratch.path(), "after", scenario("timing", one_host, kBuckets));
  const json beside = simulate_yaml(scratch.path(), "beside",
                                    scenario("timing", one_host, kBuckets + "  overlap: true\n"));
  check_phases_add_up(beside);
  CHECK(task_named(beside, "chief:0")["hidden_communication_seconds"].get<double>() > 0);
  CHECK(task_named(beside, "chief:0")["steps"] == 6);
  CHECK(task_named(after, "chief:0")["hidden_communication_seconds"] == 0);
}
