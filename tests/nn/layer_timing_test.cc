// The LayerTimer hook ./calibrate times layer passes with: while a timer is
// installed on a thread, each pass a training step runs is reported once,
// in the order it runs, with whether a backward pass computed its input
// gradient; composites are reported around their leaves.
#include "nn/layer_timing.h"

#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/config_node.h"
#include "gradient_check.h"
#include "nn/layer.h"
#include "nn/model.h"

using namespace distlab::nn;
using distlab::nn::testing::random_batch;

namespace {

struct Recorded {
  std::string name;
  std::string kind;
  Pass pass;
  bool input_gradient;
  double seconds;
};

class RecordingTimer : public LayerTimer {
 public:
  void record(const LayerTiming& t) override {
    recorded.push_back({t.layer->name(), t.layer->kind(), t.pass, t.input_gradient, t.seconds});
  }
  std::vector<Recorded> recorded;
};

ModelSpec spec_of(const char* yaml) {
  return parse_model_spec(distlab::ConfigNode::load_string(yaml, "timed.yaml"));
}

// Installs a timer for the scope, whatever happens.
struct Installed {
  explicit Installed(LayerTimer* timer) { set_layer_timer(timer); }
  ~Installed() { set_layer_timer(nullptr); }
};

const std::vector<int32_t> kLabels{0, 1, 2, 0};

}  // namespace

TEST_CASE("a layer timer sees every pass of a training step, in order") {
  Model model(spec_of(R"(
name: timed
input: [2, 3, 1]
classes: 3
layers:
  - flatten: {name: flat}
  - dense: {name: hidden, units: 4}
  - relu: {name: act}
  - dense: {name: out, units: 3}
optimizer: {sgd: {learning_rate: 0.1}}
)"),
              1);
  const Matrix x = random_batch(4, {2, 3, 1}, 7);
  RecordingTimer timer;
  {
    const Installed installed(&timer);
    REQUIRE(layer_timer() == &timer);
    model.compute_gradients(x, kLabels, 0);
  }
  CHECK(layer_timer() == nullptr);
  // Forward: every layer. Backward: from the last layer down to the first
  // with parameters (`hidden`), which computes no input gradient; `flat`,
  // before it, is not visited.
  struct Expected {
    std::string name;
    Pass pass;
    bool input_gradient;
  };
  const std::vector<Expected> expected{
      {"flat", Pass::kForward, false},   {"hidden", Pass::kForward, false},
      {"act", Pass::kForward, false},    {"out", Pass::kForward, false},
      {"out", Pass::kBackward, true},    {"act", Pass::kBackward, true},
      {"hidden", Pass::kBackward, false}};
  REQUIRE(timer.recorded.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("pass " << i);
    CHECK(timer.recorded[i].name == expected[i].name);
    CHECK(timer.recorded[i].pass == expected[i].pass);
    CHECK(timer.recorded[i].input_gradient == expected[i].input_gradient);
    CHECK(timer.recorded[i].seconds >= 0);
  }

  // Removed, it hears nothing more; the step runs all the same.
  timer.recorded.clear();
  model.compute_gradients(x, kLabels, 1);
  CHECK(timer.recorded.empty());
}

TEST_CASE("a layer timer is per thread") {
  Model model(spec_of(R"(
name: timed
input: [3]
classes: 3
layers:
  - dense: {units: 3}
optimizer: {sgd: {learning_rate: 0.1}}
)"),
              1);
  const Matrix x = random_batch(4, {3}, 7);
  RecordingTimer timer;
  const Installed installed(&timer);
  // Another thread has none installed: its step reports nothing here.
  std::thread other([&] {
    CHECK(layer_timer() == nullptr);
    model.compute_gradients(x, kLabels, 0);
  });
  other.join();
  CHECK(timer.recorded.empty());
  model.compute_gradients(x, kLabels, 1);
  CHECK(timer.recorded.size() == 2);  // the dense layer's forward and backward
}

TEST_CASE("a layer timer hears a composite after its leaves, timed around them") {
  Model model(spec_of(R"(
name: timed
input: [4]
classes: 3
layers:
  - branches:
      name: both
      combine: concat
      paths:
        - - dense: {name: left, units: 3}
        - - dense: {name: right, units: 2}
          - relu: {name: right_act}
  - dense: {name: out, units: 3}
optimizer: {sgd: {learning_rate: 0.1}}
)"),
              1);
  const Matrix x = random_batch(4, {4}, 7);
  RecordingTimer timer;
  {
    const Installed installed(&timer);
    model.compute_gradients(x, kLabels, 0);
  }
  // `both` is the model's first layer with parameters: no input gradient
  // for it, nor for the first layer with parameters of each path.
  struct Expected {
    std::string name;
    std::string kind;
    Pass pass;
    bool input_gradient;
  };
  const std::vector<Expected> expected{
      {"left", "dense", Pass::kForward, false},     {"right", "dense", Pass::kForward, false},
      {"right_act", "relu", Pass::kForward, false}, {"both", "branches", Pass::kForward, false},
      {"out", "dense", Pass::kForward, false},      {"out", "dense", Pass::kBackward, true},
      {"left", "dense", Pass::kBackward, false},    {"right_act", "relu", Pass::kBackward, true},
      {"right", "dense", Pass::kBackward, false},   {"both", "branches", Pass::kBackward, false}};
  REQUIRE(timer.recorded.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("pass " << i);
    CHECK(timer.recorded[i].name == expected[i].name);
    CHECK(timer.recorded[i].kind == expected[i].kind);
    CHECK(timer.recorded[i].pass == expected[i].pass);
    CHECK(timer.recorded[i].input_gradient == expected[i].input_gradient);
  }
  // The composite's time contains its leaves' (passes 0-2 forward, 6-8
  // backward).
  const auto& r = timer.recorded;
  CHECK(r[3].seconds >= r[0].seconds + r[1].seconds + r[2].seconds);
  CHECK(r[9].seconds >= r[6].seconds + r[7].seconds + r[8].seconds);
}
