// Every strategy, simulated in full fidelity on a tiny model with 1 to 8
// replicas and parameter buffers that the replica count does not divide:
// the weights they reach, the bytes they move and the updates they count.
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <string>

#include "child_process.h"
#include "common/error.h"
#include "sim/simulation.h"
#include "simulation_harness.h"
#include "strategy/float_range.h"
#include "strategy/gradient_wire.h"

namespace {

using distlab::testing::simulate_yaml;
using distlab::testing::TinyModelFolder;
using nlohmann::json;

constexpr int kSteps = 6;

std::string scenario(const std::string& cluster, const std::string& strategy, int batch,
                     const std::string& extra = "") {
  return "model: tiny.yaml\ndata: synthetic:600\nseed: 7\ncluster:\n  machine: n1-standard-4\n" +
         cluster + "strategy:\n" + strategy + "training:\n  batch_size: " + std::to_string(batch) +
         "\n  steps: " + std::to_string(kSteps) + "\n" + extra;
}

std::string replicas_cluster(int replicas, int ps = 0) {
  std::string text = "  chief: 1\n  workers: " + std::to_string(replicas - 1) + "\n";
  if (ps > 0) text += "  ps: " + std::to_string(ps) + "\n";
  return text;
}

// Bytes a ring member sends in one all-reduce of `floats`: every chunk but
// one in each phase.
uint64_t ring_bytes_sent(int p, int64_t floats, int rank) {
  using distlab::strategy::part_begin;
  auto chunk = [&](int i) {
    i = ((i % p) + p) % p;
    return static_cast<uint64_t>(part_begin(floats, p, i + 1) - part_begin(floats, p, i)) * 4;
  };
  uint64_t total = 0;
  for (int r = 0; r < p - 1; ++r) total += chunk(rank - r) + chunk(rank + 1 - r);
  return total;
}

}  // namespace

TEST_CASE("allreduce with p replicas of a global batch trains like local with that batch") {
  const int hidden = GENERATE(5, 13);
  const int p = GENERATE(1, 2, 3, 4, 5, 6, 7, 8);
  const TinyModelFolder scratch(hidden);
  const std::string& dir = scratch.path();
  // 8 examples a replica, or 8 and 9 (an uneven split, as tf.data's).
  const int batch = 8 * p + (p > 2 ? p / 2 : 0);
  const json local =
      simulate_yaml(dir, "local", scenario("  chief: 1\n", "  name: local\n", batch));
  const json ring =
      simulate_yaml(dir, "ring", scenario(replicas_cluster(p), "  name: allreduce\n", batch));
  INFO("hidden " << hidden << ", " << p << " replicas, model bytes " << ring["model_bytes"]);

  // The same gradient of the same global batch, summed in another order.
  CHECK(ring["final_loss"].get<double>() ==
        Approx(local["final_loss"].get<double>()).epsilon(1e-4));
  const int64_t floats = ring["model_bytes"].get<int64_t>() / 4;
  uint64_t sent = 0;
  uint64_t received = 0;
  for (int rank = 0; rank < p; ++rank) {
    const json& task = ring["tasks"][rank];
    // Every replica ends with the very same bits.
    CHECK(task["weights_sha256"] == ring["tasks"][0]["weights_sha256"]);
    CHECK(task["steps"] == kSteps);
    // Exactly one all-reduce of the gradient buffer per step, nothing else.
    for (const json& sent : task["step_bytes_sent"])
      CHECK(sent == ring_bytes_sent(p, floats, rank));
    sent += task["bytes_sent"].get<uint64_t>();
    received += task["bytes_received"].get<uint64_t>();
  }
  CHECK(received == sent);
}

TEST_CASE("allreduce in buckets reaches the same weights as in one ring") {
  const TinyModelFolder scratch(13);
  const std::string& dir = scratch.path();
  const json whole =
      simulate_yaml(dir, "whole", scenario(replicas_cluster(3), "  name: allreduce\n", 8));
  const json buckets = simulate_yaml(
      dir, "buckets", scenario(replicas_cluster(3), "  name: allreduce\n  bucket_bytes: 40\n", 8));
  // Buckets cut the buffer into other chunks, so sums may round
  // differently; the trajectory must stay the same.
  CHECK(buckets["final_loss"].get<double>() ==
        Approx(whole["final_loss"].get<double>()).epsilon(1e-4));
  CHECK(buckets["tasks"][0]["weights_sha256"] == buckets["tasks"][2]["weights_sha256"]);
  // More rounds of smaller messages: the same bytes, more latency.
  CHECK(buckets["run_seconds"].get<double>() > whole["run_seconds"].get<double>());
}

TEST_CASE("allreduce in segments reaches the very same bits as with whole chunks") {
  const int p = GENERATE(2, 3, 5);
  // 2 floats a segment, 3 (which cuts chunks unevenly), and the default.
  const std::string segment = GENERATE("  segment_bytes: 8\n", "  segment_bytes: 12\n", "");
  const TinyModelFolder scratch(13);
  const std::string& dir = scratch.path();
  const json whole = simulate_yaml(
      dir, "whole", scenario(replicas_cluster(p), "  name: allreduce\n  segment_bytes: 0\n", 8));
  const json segmented = simulate_yaml(
      dir, "segments", scenario(replicas_cluster(p), "  name: allreduce\n" + segment, 8));
  INFO(p << " replicas, " << segment);
  // Segments only cut chunks finer: every float is summed in the same order.
  CHECK(segmented["weights_sha256"] == whole["weights_sha256"]);
  for (int rank = 0; rank < p; ++rank) {
    CHECK(segmented["tasks"][rank]["weights_sha256"] == whole["tasks"][rank]["weights_sha256"]);
    CHECK(segmented["tasks"][rank]["bytes_sent"] == whole["tasks"][rank]["bytes_sent"]);
  }
}

TEST_CASE("allreduce with half-precision gradients: replicas agree and send half the bytes") {
  const int p = GENERATE(2, 3, 5);
  const std::string dtype = GENERATE("float16", "bfloat16");
  const TinyModelFolder scratch(13);
  const std::string& dir = scratch.path();
  const json f32 =
      simulate_yaml(dir, "f32", scenario(replicas_cluster(p), "  name: allreduce\n", 8));
  const std::string strategy = "  name: allreduce\n  gradient_dtype: " + dtype + "\n";
  const json half = simulate_yaml(dir, "half", scenario(replicas_cluster(p), strategy, 8));
  const json timing = simulate_yaml(
      dir, "timing", scenario(replicas_cluster(p), strategy, 8, "fidelity: timing\n"));
  INFO(p << " replicas, " << dtype);
  // The rounding is real, and costs the training next to nothing.
  CHECK(half["weights_sha256"] != f32["weights_sha256"]);
  CHECK(half["final_loss"].get<double>() == Approx(f32["final_loss"].get<double>()).epsilon(1e-2));
  for (int rank = 0; rank < p; ++rank) {
    const json& task = half["tasks"][rank];
    CHECK(task["weights_sha256"] == half["tasks"][0]["weights_sha256"]);
    // Two bytes a value, plus at most a scale word and a padding half per
    // message.
    const uint64_t float32_bytes = f32["tasks"][rank]["bytes_sent"];
    const uint64_t sent = task["bytes_sent"];
    CHECK(sent >= float32_bytes / 2);
    CHECK(sent <= float32_bytes / 2 + 8 * task["messages_sent"].get<uint64_t>());
    CHECK(timing["tasks"][rank]["bytes_sent"] == sent);
  }
}

TEST_CASE("a parameter server takes half-precision pushes and answers pulls in float32") {
  const int servers = GENERATE(1, 3);
  const TinyModelFolder scratch(13);
  const std::string& dir = scratch.path();
  const json local = simulate_yaml(dir, "local", scenario("  chief: 1\n", "  name: local\n", 24));
  const json ps = simulate_yaml(
      dir, "ps",
      scenario(replicas_cluster(3, servers),
               "  name: parameter_server\n  mode: sync\n  gradient_dtype: float16\n", 8));
  CHECK(ps["final_loss"].get<double>() == Approx(local["final_loss"].get<double>()).epsilon(1e-2));
  const uint64_t model_bytes = ps["model_bytes"];
  const int64_t floats = static_cast<int64_t>(model_bytes / 4);
  uint64_t pushed = 0;
  for (int j = 0; j < servers; ++j) {
    const int64_t shard = distlab::strategy::part_begin(floats, servers, j + 1) -
                          distlab::strategy::part_begin(floats, servers, j);
    pushed += distlab::strategy::gradient_bytes(shard, distlab::strategy::GradientType::kFloat16);
  }
  for (int rank = 0; rank < 3; ++rank) {
    const json& task = ps["tasks"][rank];
    for (const json& sent : task["step_bytes_sent"]) CHECK(sent == pushed);
    for (const json& received : task["step_bytes_received"]) CHECK(received == model_bytes);
  }
}

TEST_CASE("a synchronous parameter server trains like local with the global batch") {
  const int p = GENERATE(1, 2, 3, 5, 8);
  const int servers = GENERATE(1, 2, 3);
  const TinyModelFolder scratch(13);
  const std::string& dir = scratch.path();
  const json local =
      simulate_yaml(dir, "local", scenario("  chief: 1\n", "  name: local\n", 8 * p));
  const json ps = simulate_yaml(
      dir, "ps",
      scenario(replicas_cluster(p, servers), "  name: parameter_server\n  mode: sync\n", 8));
  INFO(p << " replicas, " << servers << " ps");
  CHECK(ps["final_loss"].get<double>() == Approx(local["final_loss"].get<double>()).epsilon(1e-4));
  const uint64_t model_bytes = ps["model_bytes"];
  int64_t pushes = 0;
  for (int rank = 0; rank < p; ++rank) {
    const json& task = ps["tasks"][rank];
    // A pull and a push of the whole buffer per step (requests carry no payload).
    for (const json& sent : task["step_bytes_sent"]) CHECK(sent == model_bytes);
    for (const json& received : task["step_bytes_received"]) CHECK(received == model_bytes);
    pushes += task["updates"].get<int64_t>();
  }
  int64_t applied = 0;
  for (int j = 0; j < servers; ++j) {
    const json& server = ps["tasks"][p + j];
    CHECK(server["steps"] == kSteps);  // one update a step
    applied += server["updates"].get<int64_t>();
  }
  CHECK(applied == pushes);
}

TEST_CASE("an asynchronous parameter server with one worker is local training, bit for bit") {
  const int servers = GENERATE(1, 2, 3);
  const TinyModelFolder scratch(13);
  const std::string& dir = scratch.path();
  const json local = simulate_yaml(dir, "local", scenario("  chief: 1\n", "  name: local\n", 8));
  const json ps = simulate_yaml(
      dir, "ps",
      scenario(replicas_cluster(1, servers), "  name: parameter_server\n  mode: async\n", 8));
  CHECK(ps["weights_sha256"] == local["weights_sha256"]);
  for (int j = 0; j < servers; ++j) {
    for (const json& staleness : ps["tasks"][1 + j]["staleness"]) CHECK(staleness == 0);
  }
}

TEST_CASE("an asynchronous parameter server applies every push and records its staleness") {
  const int p = GENERATE(2, 4, 7);
  const TinyModelFolder scratch(5);
  const std::string& dir = scratch.path();
  const json ps = simulate_yaml(
      dir, "ps", scenario(replicas_cluster(p, 2), "  name: parameter_server\n  mode: async\n", 8));
  int64_t pushes = 0;
  for (int rank = 0; rank < p; ++rank) pushes += ps["tasks"][rank]["updates"].get<int64_t>();
  CHECK(pushes == int64_t{p} * kSteps * 2);
  int64_t applied = 0;
  int64_t stale = 0;
  for (int j = 0; j < 2; ++j) {
    const json& server = ps["tasks"][p + j];
    applied += server["updates"].get<int64_t>();
    CHECK(server["steps"] == p * kSteps);  // one update per push
    for (const json& staleness : server["staleness"]) {
      CHECK(staleness.get<int64_t>() >= 0);
      CHECK(staleness.get<int64_t>() < p * kSteps);
      stale += staleness.get<int64_t>() > 0;
    }
  }
  CHECK(applied == pushes);
  // Replicas that start together compute from the same version: all but
  // the first push of each round are stale.
  CHECK(stale > 0);
}

TEST_CASE("mirrored over a machine's GPUs is the same all-reduce, over the bus") {
  const TinyModelFolder scratch(13);
  const std::string& dir = scratch.path();
  const json ring =
      simulate_yaml(dir, "ring", scenario(replicas_cluster(4), "  name: allreduce\n", 8));
  const std::string mirrored_yaml =
      "model: tiny.yaml\ndata: synthetic:600\nseed: 7\ncluster:\n  machine: complex_model_m_gpu\n"
      "  chief: 1\nstrategy:\n  name: mirrored\n  devices: 4\ntraining:\n  batch_size: 8\n"
      "  steps: 6\n";
  const json mirrored = simulate_yaml(dir, "mirrored", mirrored_yaml);
  CHECK(mirrored["replicas"] == 4);
  CHECK(mirrored["weights_sha256"] == ring["weights_sha256"]);
  CHECK(mirrored["tasks"][3]["bytes_sent"] == ring["tasks"][3]["bytes_sent"]);
}

TEST_CASE("mixed precision changes the time of a step, not the weights") {
  const TinyModelFolder scratch(13);
  const std::string& dir = scratch.path();
  auto mirrored = [&](const std::string& name, const std::string& model, int batch,
                      const std::string& fidelity, const std::string& precision) {
    return simulate_yaml(
        dir, name + "-" + precision,
        "model: " + model + "\ndata: synthetic:600\nseed: 7\nfidelity: " + fidelity +
            "\ncluster:\n  machine: complex_model_m_v100\n  chief: 1\n"
            "strategy:\n  name: mirrored\n  devices: 2\n"
            "training:\n  batch_size: " +
            std::to_string(batch) + "\n  steps: 2\n  precision: " + precision + "\n");
  };
  // The NN core computes in float32 either way.
  CHECK(mirrored("tiny", "tiny.yaml", 8, "full", "mixed_float16")["weights_sha256"] ==
        mirrored("tiny", "tiny.yaml", 8, "full", "float32")["weights_sha256"]);
  // The cats-vs-dogs CNN fills a V100, bound by its traffic: mixed
  // precision halves the activations' share of it, so the step is quicker,
  // but not twice as quick (an H200's large steps in bfloat16 took 0.8-1.1x
  // float32's).
  const std::string cats = DISTLAB_SOURCE_DIR "/scenarios/models/cats_dogs_cnn.yaml";
  const double cats_mixed =
      mirrored("cats", cats, 64, "timing", "mixed_float16")["run_seconds"].get<double>();
  const double cats_float =
      mirrored("cats", cats, 64, "timing", "float32")["run_seconds"].get<double>();
  CHECK(cats_mixed < 0.95 * cats_float);
  CHECK(cats_mixed > cats_float / 2);
  // The lab CNN does not: its step is the host's dispatch, and mixed
  // precision adds casts and loss scaling to it, as measured on an H200.
  const std::string lab = DISTLAB_SOURCE_DIR "/scenarios/models/mnist_cnn.yaml";
  CHECK(mirrored("lab", lab, 128, "timing", "mixed_float16")["run_seconds"].get<double>() >
        mirrored("lab", lab, 128, "timing", "float32")["run_seconds"].get<double>());
}

TEST_CASE("a simulation gives the same weights and times run after run") {
  const TinyModelFolder scratch(13);
  const std::string& dir = scratch.path();
  const std::string yaml =
      scenario(replicas_cluster(3, 2), "  name: parameter_server\n  mode: async\n", 8);
  const json first = simulate_yaml(dir, "again", yaml);
  const json second = simulate_yaml(dir, "again", yaml);
  CHECK(first["weights_sha256"].get<std::string>().size() == 64);
  CHECK(first["weights_sha256"] == second["weights_sha256"]);
  CHECK(first["run_seconds"] == second["run_seconds"]);
}

TEST_CASE("a task that fails ends the simulation with its name and reason") {
  const TinyModelFolder scratch(13);
  const std::string& dir = scratch.path();
  // The lab CNN with a learning rate this large overflows within a few steps.
  std::string spec;
  {
    std::ifstream in(std::string(DISTLAB_SOURCE_DIR) + "/scenarios/models/mnist_cnn.yaml");
    spec.assign(std::istreambuf_iterator<char>(in), {});
  }
  spec.replace(spec.find("learning_rate: 0.01"), 19, "learning_rate: 900");
  std::ofstream(dir + "/diverging_cnn.yaml") << spec;
  const std::string path = dir + "/diverges.yaml";
  std::ofstream(path) << "model: diverging_cnn.yaml\ndata: synthetic:600\ncluster:\n"
                         "  machine: n1-standard-4\n  chief: 1\n  workers: 2\n"
                         "strategy: {name: allreduce}\ntraining: {batch_size: 16, steps: 20}\n";
  const std::string text = distlab::testing::in_child_process([&] {
    try {
      distlab::sim::simulate(distlab::run::load_scenario(path),
                             distlab::sim::MachineCatalog::load_default(), {});
    } catch (const distlab::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  });
  CHECK_THAT(text, Catch::Contains("failed") && Catch::Contains("the training loss became"));
  CHECK_THAT(text, Catch::StartsWith("chief:0") || Catch::StartsWith("worker:"));
}
