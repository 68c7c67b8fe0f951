// Full fidelity with the real model and data: synchronous data parallelism
// over two simulated hosts must learn what one host learns from the same
// global batches, and reach the very same weights on every run.
#include <catch2/catch.hpp>
#include <filesystem>

#include "simulation_harness.h"

namespace {

using distlab::testing::simulate_yaml;
using distlab::testing::TinyModelFolder;
using nlohmann::json;

std::string lab_cnn(const std::string& strategy, int workers, int batch) {
  return std::string("model: ") + DISTLAB_SOURCE_DIR +
         "/scenarios/models/mnist_cnn.yaml\ndata: fashion-mnist\nseed: 1\n"
         "cluster:\n  machine: n1-standard-4\n  chief: 1\n  workers: " +
         std::to_string(workers) + "\nstrategy:\n  name: " + strategy +
         "\ntraining:\n  batch_size: " + std::to_string(batch) +
         "\n  epochs: 2\n  train_examples: 6000\n  eval_examples: 2000\n";
}

}  // namespace

TEST_CASE("the lab CNN learns as much under allreduce on 2 hosts as locally, same global batch") {
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  const json local = simulate_yaml(dir, "local", lab_cnn("local", 0, 128));
  // batch_size is global under allreduce: 64 on each host, the same
  // windows of the same epoch order as the local run's batches of 128.
  const json ring = simulate_yaml(dir, "ring", lab_cnn("allreduce", 1, 128));
  const json again = simulate_yaml(dir, "ring", lab_cnn("allreduce", 1, 128));
  const double local_accuracy = local["final_accuracy"];
  const double ring_accuracy = ring["final_accuracy"];
  INFO("local " << local_accuracy << ", allreduce " << ring_accuracy);
  CHECK(local_accuracy > 0.6);
  CHECK(ring_accuracy == Approx(local_accuracy).margin(0.03));
  CHECK(ring["weights_sha256"] == again["weights_sha256"]);
  CHECK(ring["tasks"][0]["weights_sha256"] == ring["tasks"][1]["weights_sha256"]);
  // Two hosts share the work: less simulated time than one.
  CHECK(ring["run_seconds"].get<double>() < local["run_seconds"].get<double>());
}
