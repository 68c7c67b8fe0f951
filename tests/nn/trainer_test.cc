#include "nn/trainer.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "common/config_node.h"
#include "common/error.h"
#include "nn/data/data_source.h"
#include "nn/threads.h"

using namespace distlab::nn;

namespace {

ModelSpec spec_from(const std::string& extra) {
  const std::string text = R"(
name: tiny_cnn
input: [8, 8, 1]
classes: 3
batch_size: 16
layers:
  - conv2d: {filters: 4, kernel: 3, activation: relu}
  - max_pool2d: {pool: 2}
  - flatten:
  - dense: {units: 8, activation: relu}
  - batch_norm:
  - dropout: {rate: 0.1}
  - dense: {units: 3}
optimizer: {adam: {learning_rate: 0.01}}
)" + extra;
  return parse_model_spec(distlab::ConfigNode::load_string(text, "tiny.yaml"));
}

// Big enough that every parallel plan cuts its work: the convolution into
// several chunks, every product into several blocks.
ModelSpec parallel_spec() {
  return parse_model_spec(distlab::ConfigNode::load_string(R"(
name: wide_enough
input: [28, 28, 1]
classes: 10
batch_size: 48
layers:
  - conv2d: {filters: 8, kernel: 3, activation: relu}
  - max_pool2d: {pool: 2}
  - flatten:
  - dense: {units: 160, activation: relu}
  - batch_norm:
  - dropout: {rate: 0.2}
  - dense: {units: 10}
optimizer: {adam: {learning_rate: 0.001}}
)",
                                                           "parallel.yaml"));
}

std::vector<float> train_weights(int threads, uint64_t seed) {
  set_compute_threads(threads);
  const ModelSpec spec = parallel_spec();
  const DataSplits data = load_data("synthetic:240", {spec.input, spec.num_classes}, seed);
  Model model(spec, seed);
  Trainer trainer(model, data.train, seed);
  trainer.train_epoch();
  trainer.train_epoch();
  set_compute_threads(2);
  std::vector<float> out(model.parameters().begin(), model.parameters().end());
  out.insert(out.end(), model.state().begin(), model.state().end());
  return out;
}

}  // namespace

TEST_CASE("Training is bit-reproducible, whatever the thread count") {
  const auto reference = train_weights(2, 7);
  CHECK(train_weights(2, 7) == reference);
  CHECK(train_weights(1, 7) == reference);
  CHECK(train_weights(3, 7) == reference);
  CHECK(train_weights(2, 8) != reference);
}

TEST_CASE("An epoch visits every training example once") {
  const ModelSpec spec = spec_from("");
  const DataSplits data = load_data("synthetic:300", {spec.input, spec.num_classes}, 1);
  Model model(spec, 1);
  Trainer trainer(model, data.train, 1);
  int64_t calls = 0, last_steps = 0;
  const EpochResult r = trainer.train_epoch([&](int64_t step, int64_t steps, double loss) {
    ++calls;
    last_steps = steps;
    CHECK(step == calls);
    CHECK(std::isfinite(loss));
  });
  CHECK(r.examples == 250);
  CHECK(r.steps == 16);  // ceil(250 / 16)
  CHECK(calls == 16);
  CHECK(last_steps == 16);
  CHECK(trainer.global_step() == 16);
  CHECK(trainer.epochs_done() == 1);
}

TEST_CASE("The plateau schedule of the spec lowers the learning rate") {
  const ModelSpec spec = spec_from("reduce_lr_on_plateau: {factor: 0.5, patience: 1}\n");
  const DataSplits data = load_data("synthetic:60", {spec.input, spec.num_classes}, 1);
  Model model(spec, 1);
  Trainer trainer(model, data.train, 1);
  CHECK(trainer.end_epoch(1.0) == 0.01f);
  CHECK(trainer.end_epoch(1.0) == 0.005f);  // no improvement for `patience` epochs
  CHECK(trainer.optimizer().learning_rate() == 0.005f);
}

TEST_CASE("Without a plateau schedule the rate stays") {
  const ModelSpec spec = spec_from("");
  const DataSplits data = load_data("synthetic:60", {spec.input, spec.num_classes}, 1);
  Model model(spec, 1);
  Trainer trainer(model, data.train, 1);
  for (int i = 0; i < 5; ++i) CHECK(trainer.end_epoch(1.0) == 0.01f);
}

TEST_CASE("A NaN loss stops training with the step and a hint") {
  ModelSpec spec = spec_from("");
  spec.optimizer.adam.learning_rate = 1e30f;
  const DataSplits data = load_data("synthetic:300", {spec.input, spec.num_classes}, 1);
  Model model(spec, 1);
  Trainer trainer(model, data.train, 1);
  CHECK_THROWS_WITH(
      [&] {
        for (int e = 0; e < 20; ++e) trainer.train_epoch();
      }(),
      Catch::Matchers::Contains("the training loss became") &&
          Catch::Matchers::Contains("a lower learning rate may help"));
}

TEST_CASE("A step limit stops an epoch part way, and training goes on from there") {
  const ModelSpec spec = spec_from("");
  const DataSplits data = load_data("synthetic:400", {spec.input, spec.num_classes}, 3);

  Model whole_model(spec, 3);
  Trainer whole(whole_model, data.train, 3);
  const int64_t per_epoch = whole.steps_per_epoch();
  REQUIRE(per_epoch > 4);
  whole.train_epoch();
  whole.train_epoch();

  Model model(spec, 3);
  Trainer trainer(model, data.train, 3);
  const EpochResult first = trainer.train_epoch({}, 3);
  CHECK(first.steps == 3);
  CHECK_FALSE(first.complete);
  CHECK(trainer.epochs_done() == 0);
  CHECK(trainer.position().batch == 3);
  CHECK(trainer.train_epoch({}, 3).steps == 0);  // the limit is reached

  // A checkpoint's position, restored into a fresh trainer, goes on the same.
  const Trainer::Position at = trainer.position();
  Trainer resumed(model, data.train, 3);
  resumed.restore(at);
  const auto from = trainer.optimizer().state(), to = resumed.optimizer().state();
  for (std::size_t i = 0; i < from.size(); ++i)
    std::copy(from[i].begin(), from[i].end(), to[i].begin());
  resumed.optimizer().set_steps(trainer.optimizer().steps());
  const EpochResult rest = resumed.train_epoch();
  CHECK(rest.steps == per_epoch - 3);
  CHECK(rest.complete);
  CHECK(resumed.epochs_done() == 1);
  CHECK(resumed.train_epoch({}, per_epoch + 2).steps == 2);
  CHECK(resumed.train_epoch().steps == per_epoch - 2);
  CHECK(resumed.global_step() == whole.global_step());
  CHECK(std::equal(model.parameters().begin(), model.parameters().end(),
                   whole_model.parameters().begin()));

  Trainer::Position beyond = at;
  beyond.batch = per_epoch;
  CHECK_THROWS_AS(resumed.restore(beyond), distlab::InputError);
}
