// Checkpoint files and the checkpoints folder: what is written reads back
// bit for bit, any damage is caught and named, a checkpoint of another
// model is refused, and resuming from a folder takes the newest valid file.
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "checkpoint/checkpoint_file.h"
#include "checkpoint/checkpoint_store.h"
#include "common/atomic_file.h"
#include "common/error.h"
#include "nn/model.h"
#include "nn/model_spec.h"

using namespace distlab;
using namespace distlab::checkpoint;
namespace fs = std::filesystem;

namespace {

fs::path scratch() {
  std::random_device entropy;
  const fs::path dir = fs::temp_directory_path() / ("distlab-ckpt-" + std::to_string(entropy()));
  fs::create_directories(dir);
  return dir;
}

nn::ModelSpec spec(int hidden, const std::string& optimizer = "adam: {learning_rate: 0.01}") {
  const fs::path dir = scratch();
  std::ofstream(dir / "m.yaml") << "name: m\ninput: [5]\nclasses: 3\nbatch_size: 4\nlayers:\n"
                                   "  - dense: {units: "
                                << hidden
                                << ", activation: relu}\n  - batch_norm:\n  - dense: {units: 3}\n"
                                   "optimizer:\n  "
                                << optimizer << "\n";
  nn::ModelSpec s = nn::load_model_spec((dir / "m.yaml").string());
  fs::remove_all(dir);
  return s;
}

CheckpointLayout layout_of(const nn::ModelSpec& s) {
  return CheckpointLayout(nn::Model(s, 0));
}

// A state with distinct values everywhere, so that any misplaced float shows.
TrainingState state_for(const CheckpointLayout& layout, int64_t step, int optimizers = 1) {
  TrainingState s;
  s.step = step;
  float next = 0.5f;
  auto fill = [&](int64_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = (next += 0.25f);
    return v;
  };
  s.parameters = fill(layout.parameter_floats());
  s.model_state = fill(layout.state_floats());
  for (std::size_t i = 0; i < layout.slots(); ++i)
    s.optimizer_slots.push_back(fill(layout.parameter_floats()));
  for (int i = 0; i < optimizers; ++i) s.optimizer_steps.push_back(step + i);
  return s;
}

CheckpointInfo info_for(int64_t step) {
  return {.step = step,
          .epoch = step / 10,
          .batch_in_epoch = step % 10,
          .facts = {.scenario = "s",
                    .strategy = "allreduce",
                    .data = "synthetic:100",
                    .backend = "simulate",
                    .seed = 3,
                    .batch_size = 4,
                    .replicas = 2,
                    .ps = 0}};
}

// Padding between blocks is not in the file: compare the blocks' floats.
void check_same_blocks(const std::vector<float>& a, const std::vector<float>& b,
                       const nn::ParameterLayout& layout) {
  for (const nn::ParamBlock& block : layout.blocks()) {
    for (int64_t i = 0; i < block.size(); ++i) {
      REQUIRE(a[block.offset + i] == b[block.offset + i]);
    }
  }
}

std::string refusal(const std::vector<std::byte>& file, const CheckpointLayout& layout) {
  try {
    decode_checkpoint(file, "step-000000012.safetensors", layout);
  } catch (const DataError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("a checkpoint reads back as the state that was written, bit for bit") {
  const nn::ModelSpec s = spec(7);
  const nn::Model model(s, 0);
  const CheckpointLayout layout = layout_of(s);
  CHECK(layout.slots() == 2);  // Adam: m and v
  const int optimizers = GENERATE(1, 3);
  const TrainingState state = state_for(layout, 12, optimizers);
  const std::vector<std::byte> file = encode_checkpoint(layout, state, info_for(12));
  CHECK(file.size() == checkpoint_file_size(layout, info_for(12), optimizers));

  const LoadedCheckpoint back = decode_checkpoint(file, "f", layout);
  CHECK(back.info.step == 12);
  CHECK(back.info.epoch == 1);
  CHECK(back.info.batch_in_epoch == 2);
  CHECK(back.info.facts.seed == 3);
  CHECK(back.info.facts.backend == "simulate");
  CHECK(back.state.step == 12);
  CHECK(back.state.optimizer_steps == state.optimizer_steps);
  check_same_blocks(back.state.parameters, state.parameters, model.trainable_layout());
  check_same_blocks(back.state.model_state, state.model_state, model.state_layout());
  for (int i = 0; i < 2; ++i) {
    check_same_blocks(back.state.optimizer_slots[i], state.optimizer_slots[i],
                      model.trainable_layout());
  }
}

TEST_CASE("a checkpoint names its tensors so that other tools can read them") {
  const nn::ModelSpec s = spec(7);
  const CheckpointLayout layout = layout_of(s);
  const auto file = encode_checkpoint(layout, state_for(layout, 1), info_for(1));
  const safetensors::File read = safetensors::decode(file, "f");
  std::vector<std::string> names;
  for (const auto& t : read.tensors) names.push_back(t.name);
  CHECK_THAT(names, Catch::VectorContains(std::string("params/dense_1/kernel")));
  CHECK(read.find("params/dense_1/kernel")->shape == std::vector<int64_t>{5, 7});
  CHECK(read.find("params/dense_1/bias")->shape == std::vector<int64_t>{7});
  CHECK_THAT(names, Catch::VectorContains(std::string("optimizer/m/dense_1/kernel")));
  CHECK_THAT(names, Catch::VectorContains(std::string("optimizer/steps")));
  CHECK(read.metadata.at("format") == "distlab-checkpoint-1");
}

TEST_CASE("a damaged checkpoint is refused, naming the file and the damage") {
  const nn::ModelSpec s = spec(7);
  const CheckpointLayout layout = layout_of(s);
  const std::vector<std::byte> good =
      encode_checkpoint(layout, state_for(layout, 12), info_for(12));

  // One flipped bit in a weight near the end of the file.
  std::vector<std::byte> flipped = good;
  flipped[flipped.size() - 100] ^= std::byte{0x10};
  CHECK_THAT(refusal(flipped, layout),
             Catch::Contains("step-000000012.safetensors: corrupt: its contents do not match"));

  // The step in the metadata changed: the checksum covers it too.
  const std::string text(reinterpret_cast<const char*>(good.data()), good.size());
  const std::size_t at = text.find("\\\"step\\\":12");
  REQUIRE(at != std::string::npos);
  std::vector<std::byte> restepped = good;
  restepped[at + 10] = std::byte{'3'};
  CHECK_THAT(refusal(restepped, layout), Catch::Contains("corrupt"));

  // Cut short, as by a crash in the middle of a copy.
  const std::vector<std::byte> truncated(good.begin(), good.begin() + good.size() / 2);
  CHECK_THAT(refusal(truncated, layout), Catch::Contains("truncated"));
  CHECK_THAT(refusal({}, layout), Catch::Contains("truncated"));
}

TEST_CASE("a checkpoint of another model or optimizer is refused") {
  const nn::ModelSpec s = spec(7);
  const CheckpointLayout layout = layout_of(s);
  const auto file = encode_checkpoint(layout, state_for(layout, 4), info_for(4));
  CHECK_THAT(refusal(file, layout_of(spec(8))), Catch::Contains("a checkpoint of another model"));
  CHECK_THAT(refusal(file, layout_of(spec(7, "sgd: {learning_rate: 0.1, momentum: 0.9}"))),
             Catch::Contains("another model or optimizer"));
  CHECK(layout_of(spec(7)).fingerprint() == layout.fingerprint());
}

TEST_CASE("resuming under other settings says what differs") {
  RunFacts was = info_for(0).facts;
  CHECK(resume_differences(was, was).empty());
  RunFacts now = was;
  now.seed = 4;
  now.replicas = 3;
  now.backend = "realnet";  // where it runs does not change the result
  const auto lines = resume_differences(was, now);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "seed: 3 in the checkpoint, 4 now");
  CHECK(lines[1] == "replicas: 2 in the checkpoint, 3 now");
}

TEST_CASE("the checkpoints folder keeps the newest files and hides writes in progress") {
  const fs::path dir = scratch();
  const nn::ModelSpec s = spec(7);
  const CheckpointLayout layout = layout_of(s);
  for (int64_t step : {5, 10, 15, 20}) {
    save_checkpoint(dir.string(), step,
                    encode_checkpoint(layout, state_for(layout, step), info_for(step)), 3);
  }
  // A temporary file of a write that a crash interrupted, and a stranger.
  std::ofstream(dir / ".step-000000025.safetensors.tmp-123") << "half";
  std::ofstream(dir / "notes.txt") << "x";
  const auto files = list_checkpoints(dir.string());
  REQUIRE(files.size() == 3);
  CHECK(fs::path(files[0]).filename() == "step-000000020.safetensors");
  CHECK(fs::path(files[2]).filename() == "step-000000010.safetensors");
  CHECK(checkpoint_file_name(1000) == "step-000001000.safetensors");

  const ResumeChoice choice = choose_checkpoint(dir.string(), layout);
  CHECK(choice.checkpoint.info.step == 20);
  CHECK(choice.skipped.empty());
  fs::remove_all(dir);
}

TEST_CASE("resuming from a folder skips a corrupt newest checkpoint and names it") {
  const fs::path run = scratch();
  const fs::path dir = run / "checkpoints";
  const nn::ModelSpec s = spec(7);
  const CheckpointLayout layout = layout_of(s);
  for (int64_t step : {10, 20}) {
    save_checkpoint(dir.string(), step,
                    encode_checkpoint(layout, state_for(layout, step), info_for(step)), 3);
  }
  const std::string newest = (dir / "step-000000020.safetensors").string();
  std::vector<std::byte> bytes = read_file_bytes(newest);
  bytes[bytes.size() - 1] ^= std::byte{1};
  write_file_atomically(newest, bytes);

  // The run directory and its checkpoints/ folder both work.
  for (const fs::path& path : {run, dir}) {
    const ResumeChoice choice = choose_checkpoint(path.string(), layout);
    CHECK(choice.checkpoint.info.step == 10);
    REQUIRE(choice.skipped.size() == 1);
    CHECK_THAT(choice.skipped[0], Catch::Contains("step-000000020.safetensors: corrupt"));
  }
  // Named on its own, the corrupt file is refused: the user asked for it.
  try {
    choose_checkpoint(newest, layout);
    FAIL("resumed from a corrupt file");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("step-000000020.safetensors: corrupt"));
  }
  fs::remove_all(run);
}

TEST_CASE("resuming from nothing usable is refused with the reason") {
  const fs::path dir = scratch();
  const CheckpointLayout layout = layout_of(spec(7));
  CHECK_THROWS_WITH(choose_checkpoint((dir / "absent").string(), layout),
                    Catch::Contains("no such file or folder"));
  CHECK_THROWS_WITH(choose_checkpoint(dir.string(), layout),
                    Catch::Contains("no valid checkpoint") && Catch::Contains("none written"));
  std::ofstream(dir / "step-000000001.safetensors") << "garbage";
  CHECK_THROWS_WITH(choose_checkpoint(dir.string(), layout),
                    Catch::Contains("skipped") && Catch::Contains("step-000000001.safetensors"));
  fs::remove_all(dir);
}

TEST_CASE("a model file holds the weights and the spec, for any optimizer of the same layers") {
  const nn::ModelSpec s = spec(7);
  const nn::Model model(s, 0);
  const CheckpointLayout layout = layout_of(s);
  const TrainingState state = state_for(layout, 12);
  const std::string yaml = "name: m\n# the spec's text, as written\n";
  const std::vector<std::byte> file = encode_model(layout, state, info_for(12), yaml);

  // The weights alone: no optimizer tensors, and far smaller than a
  // checkpoint of Adam (three copies of the parameters).
  const safetensors::File read = safetensors::decode(file, "model.safetensors");
  for (const auto& t : read.tensors) {
    CHECK((t.name.rfind("params/", 0) == 0 || t.name.rfind("state/", 0) == 0));
  }
  CHECK(read.metadata.at("format") == "distlab-model-1");
  CHECK(file.size() < encode_checkpoint(layout, state, info_for(12)).size() / 2);

  const LoadedModel header = read_model_header(file, "model.safetensors");
  CHECK(header.spec_yaml == yaml);
  CHECK(header.info.step == 12);
  CHECK(header.info.facts.data == "synthetic:100");

  // Another optimizer over the same layers reads it; other layers do not.
  const LoadedModel back =
      decode_model(file, "model.safetensors", layout_of(spec(7, "sgd: {learning_rate: 0.1}")));
  check_same_blocks(back.weights.parameters, state.parameters, model.trainable_layout());
  check_same_blocks(back.weights.model_state, state.model_state, model.state_layout());
  CHECK(back.weights.optimizer_slots.empty());
  CHECK_THROWS_WITH(decode_model(file, "model.safetensors", layout_of(spec(8))),
                    Catch::Contains("model.safetensors: a model of other layers"));

  // Damage is caught, the spec's text included.
  std::vector<std::byte> flipped = file;
  const std::string text(reinterpret_cast<const char*>(file.data()), file.size());
  const std::size_t at = text.find("as written");
  REQUIRE(at != std::string::npos);
  flipped[at] = std::byte{'A'};
  CHECK_THROWS_WITH(read_model_header(flipped, "model.safetensors"), Catch::Contains("corrupt"));
}

TEST_CASE("a model file and a checkpoint are never taken for each other") {
  const nn::ModelSpec s = spec(7);
  const CheckpointLayout layout = layout_of(s);
  const auto model = encode_model(layout, state_for(layout, 4), info_for(4), "name: m\n");
  CHECK_THAT(refusal(model, layout),
             Catch::Contains("a model file") && Catch::Contains("a run cannot resume from it"));
  const auto checkpoint = encode_checkpoint(layout, state_for(layout, 4), info_for(4));
  CHECK_THROWS_WITH(read_model_header(checkpoint, "c.safetensors"),
                    Catch::Contains("c.safetensors: a checkpoint, not a model file"));
}
