// The input pipeline in a simulation: a GPU task whose step is quicker than
// its input waits for each batch, the wait is its own kind of time, and
// records preprocessed offline take the wait away.
#include <catch2/catch.hpp>
#include <string>

#include "sim/machine.h"
#include "simulation_harness.h"

namespace {

using distlab::testing::simulate_yaml;
using distlab::testing::TinyModelFolder;
using nlohmann::json;

constexpr int kSteps = 6;

// The tiny model alone on one K80 of complex_model_m_gpu, batches of 8,
// with the input pipeline `input` (a YAML section, or nothing).
std::string scenario(const std::string& input) {
  return "model: tiny.yaml\ndata: synthetic:600\nseed: 2\nfidelity: timing\n"
         "cluster:\n  machine: complex_model_m_gpu\n  chief: 1\nstrategy:\n  name: local\n"
         "training:\n  batch_size: 8\n  steps: " +
         std::to_string(kSteps) + "\n" + input;
}

// Decoding 1,000 and augmenting 500 microseconds an example on a 2 GHz
// core, on one thread: far slower than the tiny model's step.
const std::string kInput =
    "input_pipeline:\n  measured_ghz: 2.0\n  threads: 1\n"
    "  stages: {decode_jpeg: 1000, augment: 500}\n  offline: [decode_jpeg]\n";

}  // namespace

TEST_CASE("a GPU task waits on a slow input pipeline, and preprocessing saves the wait") {
  const TinyModelFolder scratch(5);
  const std::string& dir = scratch.path();
  const json bare = simulate_yaml(dir, "bare", scenario(""));
  const json online = simulate_yaml(dir, "online", scenario(kInput));
  const json offline = simulate_yaml(dir, "offline", scenario(kInput + "  preprocessed: true\n"));

  const double ghz =
      distlab::sim::MachineCatalog::load_default().machine("complex_model_m_gpu").cpu_ghz;
  REQUIRE(ghz > 0);
  const double batch = 8 * 1500e-6 * 2.0 / ghz;  // the pipeline's time a batch
  double step = 0;                               // the model's, without input
  for (const json& c : bare["tasks"][0]["compute"]) step += c.get<double>() / kSteps;
  REQUIRE(step < batch / 4);

  // The first batch is waited for whole; each later one was prepared while
  // the step before it ran.
  const json& steps = online["tasks"][0]["step_input"];
  REQUIRE(steps.size() == kSteps);
  CHECK_THAT(steps[0].get<double>(), Catch::Matchers::WithinRel(batch, 1e-6));
  for (int s = 1; s < kSteps; ++s) {
    CHECK_THAT(steps[s].get<double>(), Catch::Matchers::WithinRel(batch - step, 1e-3));
  }
  CHECK_THAT(online["tasks"][0]["input_seconds"].get<double>(),
             Catch::Matchers::WithinRel(kSteps * batch - (kSteps - 1) * step, 1e-3));
  CHECK(bare["tasks"][0]["input_seconds"] == 0);
  // The run is the pipeline's pace, plus the last step.
  CHECK_THAT(online["run_seconds"].get<double>() - bare["run_seconds"].get<double>(),
             Catch::Matchers::WithinRel(kSteps * batch - (kSteps - 1) * step, 1e-3));
  // Decoding done when the records were written: a third of the wait.
  CHECK_THAT(offline["tasks"][0]["step_input"][0].get<double>(),
             Catch::Matchers::WithinRel(batch / 3, 1e-6));
  CHECK(offline["run_seconds"].get<double>() < online["run_seconds"].get<double>());
  // The pipeline costs time, never bits or bytes.
  CHECK(online["tasks"][0]["bytes_sent"] == bare["tasks"][0]["bytes_sent"]);
}
