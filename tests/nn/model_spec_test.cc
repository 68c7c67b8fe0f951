// The shipped lab models load with Keras' parameter counts, and broken specs
// are refused with the file, the line and the key.
#include "nn/model_spec.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "common/error.h"
#include "nn/data/taxi.h"
#include "nn/model.h"

using namespace distlab::nn;

namespace {

std::string models_dir() {
  return std::string(DISTLAB_SOURCE_DIR) + "/scenarios/models/";
}
std::string bad_dir() {
  return std::string(DISTLAB_SOURCE_DIR) + "/tests/nn/bad_specs/";
}

int64_t trainable_count(const std::string& file) {
  return Model(load_model_spec(models_dir() + file), 1).trainable_layout().count();
}

}  // namespace

TEST_CASE("The lab models have Keras' parameter counts") {
  CHECK(trainable_count("mnist_cnn.yaml") == 93322);
  CHECK(trainable_count("cifar10_mlp.yaml") == 1447500);
  // Tables of 761 x 2 and 307 x 8; dense 59-100-70-50-25-2.
  CHECK(trainable_count("taxi_wide_deep.yaml") == 1522 + 2456 + 6000 + 7070 + 3550 + 1275 + 52);
  const Model mlp(load_model_spec(models_dir() + "cifar10_mlp.yaml"), 1);
  CHECK(mlp.state_layout().count() == 3060);  // BatchNorm moving statistics
}

TEST_CASE("ResNet-44 has the published CIFAR-10 ResNet's parameters and shapes") {
  // He et al. (2016), table 6: ResNet-44, 0.66M parameters. By hand: the
  // first convolution 3*3*3*16 and its BatchNorm 2*16; stage 1, 7 blocks of
  // two 3*3*16*16 convolutions and two BatchNorms of 16; stage 2, its first
  // block 3*3*16*32 + 3*3*32*32, the other 6 two 3*3*32*32, BatchNorms of
  // 32; stage 3 alike with 64; the dense layer 64*10 + 10. The shortcuts
  // (pooling, zero channels) have none.
  const int64_t stage1 = 7 * (2 * 9 * 16 * 16 + 2 * 2 * 16);
  const int64_t stage2 = 9 * 16 * 32 + 9 * 32 * 32 + 6 * 2 * 9 * 32 * 32 + 7 * 2 * 2 * 32;
  const int64_t stage3 = 9 * 32 * 64 + 9 * 64 * 64 + 6 * 2 * 9 * 64 * 64 + 7 * 2 * 2 * 64;
  const int64_t expected = 9 * 3 * 16 + 2 * 16 + stage1 + stage2 + stage3 + 64 * 10 + 10;
  CHECK(expected == 658586);
  const Model resnet(load_model_spec(models_dir() + "cifar10_resnet44.yaml"), 1);
  CHECK(resnet.trainable_layout().count() == expected);
  CHECK(std::abs(resnet.trainable_layout().count() - 660000) < 5000);  // "0.66M"
  // 43 BatchNorms over 16 + 7*2*(16 + 32 + 64) channels, two statistics each.
  CHECK(resnet.state_layout().count() == 2 * (16 + 14 * (16 + 32 + 64)));
  const ModelSpec& spec = resnet.spec();
  CHECK(spec.optimizer.kind == "sgd");
  CHECK(spec.optimizer.sgd.learning_rate == 0.1f);
  CHECK(spec.optimizer.sgd.momentum == 0.9f);
  // 43 convolutions and batch norms, 21 additions, one dense layer.
  const std::vector<LayerCostEntry> costs = resnet.layer_costs(1);
  std::map<std::string, int> kinds;
  for (const auto& c : costs) ++kinds[c.kind];
  CHECK(kinds["conv2d"] == 43);
  CHECK(kinds["batch_norm"] == 43);
  CHECK(kinds["add"] == 21);
  CHECK(kinds["average_pool2d"] == 2);
  CHECK(kinds["pad_channels"] == 2);
  CHECK(kinds["global_average_pool2d"] == 1);
  CHECK(kinds["dense"] == 1);
}

TEST_CASE("The lab specs carry the labs' hyper-parameters") {
  const auto cnn = load_model_spec(models_dir() + "mnist_cnn.yaml");
  CHECK(cnn.input == Shape{28, 28, 1});
  CHECK(cnn.batch_size == 128);
  CHECK(cnn.optimizer.kind == "sgd");
  CHECK(cnn.optimizer.sgd.learning_rate == 0.01f);
  CHECK(cnn.optimizer.sgd.momentum == 0.9f);
  const auto mlp = load_model_spec(models_dir() + "cifar10_mlp.yaml");
  CHECK(mlp.optimizer.kind == "adam");
  CHECK(mlp.optimizer.adam.learning_rate == 0.01f);
  REQUIRE(mlp.reduce_lr_on_plateau.has_value());
  CHECK(mlp.reduce_lr_on_plateau->factor == 0.1f);
}

TEST_CASE("Adagrad and FTRL take Keras' options, with Keras' defaults") {
  auto optimizer_of = [](const std::string& text) {
    return parse_model_spec(distlab::ConfigNode::load_string(
                                "name: m\ninput: [4]\nclasses: 2\nlayers:\n  - dense: {units: 2}\n"
                                "optimizer: " +
                                    text + "\n",
                                "m.yaml"))
        .optimizer;
  };
  const OptimizerSpec adagrad = optimizer_of("{adagrad: {learning_rate: 0.05}}");
  CHECK(adagrad.kind == "adagrad");
  CHECK(adagrad.adagrad.learning_rate == 0.05f);
  CHECK(adagrad.adagrad.initial_accumulator_value == 0.1f);
  const OptimizerSpec ftrl = optimizer_of(
      "{ftrl: {learning_rate: 0.005, l1_regularization_strength: 0.5, "
      "l2_regularization_strength: 1}}");
  CHECK(ftrl.kind == "ftrl");
  CHECK(ftrl.ftrl.learning_rate == 0.005f);
  CHECK(ftrl.ftrl.learning_rate_power == -0.5f);
  CHECK(ftrl.ftrl.l1 == 0.5f);
  CHECK(ftrl.ftrl.l2 == 1.0f);
  CHECK(optimizer_state_names(ftrl) == std::vector<std::string>{"accumulator", "linear"});
  CHECK_THROWS_AS(optimizer_of("{ftrl: {learning_rate: 0.1, beta: 1}}"), distlab::ConfigError);
}

TEST_CASE("The wide and deep model matches the taxi feature layout") {
  const auto spec = load_model_spec(models_dir() + "taxi_wide_deep.yaml");
  CHECK(spec.input == Shape::flat(kTaxiFeatureCount));
  CHECK(spec.num_classes == 2);
  // Every embedding table's vocabulary matches the columns it reads.
  const Model model(spec, 1);
  int tables = 0;
  for (const auto& block : model.trainable_layout().blocks()) {
    if (block.name.find("/table") == std::string::npos) continue;
    ++tables;
    const int first = block.name.starts_with("wide") ? kTaxiNumericFeatures : kTaxiStartHour;
    const int last = block.name.starts_with("wide") ? kTaxiFeatureCount : kTaxiCompany + 1;
    int rows = 0;
    for (int c = first; c < last; ++c) rows += kTaxiColumns[c].vocab;
    CAPTURE(block.name);
    CHECK(block.rows == rows);
  }
  CHECK(tables == 2);
}

TEST_CASE("Broken model specs are refused with file, line and key") {
  using Row = std::tuple<std::string, std::string>;
  const auto [file, expected] = GENERATE(table<std::string, std::string>({
      Row{"unknown_layer.yaml",
          "unknown_layer.yaml:5: layers[0]: unknown layer 'dens' (did you mean 'dense'?)"},
      Row{"unknown_key.yaml",
          "unknown_key.yaml:5: layers[0].dense.activaton: unknown key (did you mean "
          "'activation'?)"},
      Row{"wrong_type.yaml",
          "wrong_type.yaml:5: layers[0].dense.units: expected an integer, got 'two'"},
      Row{"kernel_too_big.yaml",
          "kernel_too_big.yaml:5: layers[0].conv2d: conv2d 'conv2d_1': a 5x5 kernel does not fit "
          "input (4, 4, 1) with valid padding (the input of this layer is (4, 4, 1))"},
      Row{"residual_mismatch.yaml",
          "residual_mismatch.yaml:6: layers[0].branches: branches 'branches_1': summed paths "
          "must give the same shape, got (4, 4, 4) and (4, 4, 2) (the input of this layer is "
          "(4, 4, 2))"},
      Row{"path_not_a_list.yaml",
          "path_not_a_list.yaml:8: layers[0].branches.paths[0]: expected a list of layers ([] "
          "for the identity)"},
      Row{"classes_mismatch.yaml",
          "classes_mismatch.yaml:6: layers[1]: the last layer gives 2 values per example, but the "
          "model has 3 classes"},
      Row{"negative_rate.yaml",
          "negative_rate.yaml:5: layers[0].dropout.rate: must be between 0 and 0.99, got -0.5"},
      Row{"part_key_not_a_name.yaml",
          "part_key_not_a_name.yaml:8: optimizer.per_layer[0]: a key must be a plain name"},
      Row{"unknown_optimizer.yaml",
          "unknown_optimizer.yaml:6: optimizer: unknown optimizer 'rmsprop' (one of: sgd, adam, "
          "adagrad, ftrl, per_layer)"},
      Row{"ftrl_positive_power.yaml",
          "ftrl_positive_power.yaml:6: optimizer.ftrl.learning_rate_power: must be between -10 and "
          "0, got 0.5"},
      Row{"embedding_outside.yaml",
          "embedding_outside.yaml:5: layers[0].embedding: embedding 'embedding_1': columns 2..3 "
          "lie outside the input of 3 values"},
      Row{"missing_layers.yaml",
          "missing_layers.yaml:1: (top level): missing required key 'layers'"},
      Row{"bad_yaml.yaml", "bad_yaml.yaml:3: not valid YAML"},
      Row{"no_such_file.yaml", "no_such_file.yaml: cannot open the file"},
      Row{"duplicate_name.yaml",
          "duplicate_name.yaml:6: layers[1].dense.name: a second layer named 'hidden' (layer names "
          "must be unique)"},
      Row{"duplicate_key.yaml", "duplicate_key.yaml:5: layers[0].dense.units: key given twice"},
      Row{"dense_on_image.yaml",
          "dense_on_image.yaml:5: layers[0].dense: dense 'dense_1' needs flat input, got (4, 4, "
          "1); add a flatten layer before it"},
      Row{"adam_epsilon_zero.yaml",
          "adam_epsilon_zero.yaml:6: optimizer.adam.epsilon: must be between 1e-12 and 1, got 0"},
      Row{"huge_input.yaml", "huge_input.yaml:2: input: more than 268435456 values per example"},
      Row{"sgd_learning_rate_zero.yaml",
          "sgd_learning_rate_zero.yaml:6: optimizer.sgd.learning_rate: must be between 1e-12 and "
          "1000, got 0"},
      Row{"adam_learning_rate_zero.yaml",
          "adam_learning_rate_zero.yaml:6: optimizer.adam.learning_rate: must be between 1e-12 and "
          "1000, got 0"},
      Row{"adagrad_learning_rate_zero.yaml",
          "adagrad_learning_rate_zero.yaml:6: optimizer.adagrad.learning_rate: must be between "
          "1e-12 and 1000, got 0"},
  }));
  CAPTURE(file);
  try {
    load_model_spec(bad_dir() + file);
    FAIL("the spec was accepted");
  } catch (const distlab::ConfigError& e) {
    const std::string message = e.what();
    CHECK_THAT(message, Catch::Matchers::StartsWith(bad_dir() + expected));
  }
}

TEST_CASE("A per_layer optimizer gives each group of layers its own optimizer") {
  auto spec_with = [](const std::string& optimizer, const std::string& extra = "") {
    return parse_model_spec(distlab::ConfigNode::load_string(
        "name: m\ninput: [4]\nclasses: 2\nlayers:\n  - dense: {name: wide, units: 3}\n"
        "  - dense: {units: 2}\noptimizer:\n  per_layer:\n" +
            optimizer + extra,
        "m.yaml"));
  };
  const ModelSpec spec = spec_with(
      "    - {layers: [wide], ftrl: {learning_rate: 0.005}}\n"
      "    - adagrad: {learning_rate: 0.001}\n");
  REQUIRE(spec.optimizer.kind == "per_layer");
  REQUIRE(spec.optimizer.parts.size() == 2);
  CHECK(spec.optimizer.parts[0].layers == std::vector<std::string>{"wide"});
  CHECK(spec.optimizer.parts[0].optimizer.ftrl.learning_rate == 0.005f);
  CHECK(spec.optimizer.parts[1].optimizer.kind == "adagrad");
  CHECK(optimizer_state_names(spec.optimizer) ==
        std::vector<std::string>{"ftrl/accumulator", "ftrl/linear", "adagrad/accumulator"});

  // FTRL owns the wide layer's kernel and bias, Adagrad the other layer's.
  const Model model(spec, 1);
  const ParameterLayout& layout = model.trainable_layout();
  const auto parts = assign_optimizer(spec.optimizer, layout, 0, layout.size());
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].floats() == 4 * 3 + 3);
  CHECK(parts[1].floats() == 3 * 2 + 2);
  CHECK(parts[0].ranges.front().first == layout.block(0).offset);
  CHECK(make_optimizer(spec.optimizer, layout)->name() == "ftrl+adagrad");

  auto refusal = [&](const std::string& optimizer, const std::string& extra = "") {
    try {
      spec_with(optimizer, extra);
    } catch (const distlab::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  CHECK_THAT(refusal("    - {layers: [deep], ftrl: {learning_rate: 0.1}}\n"
                     "    - adagrad: {learning_rate: 0.1}\n"),
             Catch::Contains("no layer 'deep' with parameters in this model"));
  CHECK_THAT(refusal("    - {layers: [wide], ftrl: {learning_rate: 0.1}}\n"
                     "    - {layers: [wide], adam: {learning_rate: 0.1}}\n"
                     "    - adagrad: {learning_rate: 0.1}\n"),
             Catch::Contains("layer 'wide' is in two parts"));
  CHECK_THAT(refusal("    - ftrl: {learning_rate: 0.1}\n    - adagrad: {learning_rate: 0.1}\n"),
             Catch::Contains("every part but the last names its layers"));
  CHECK_THAT(refusal("    - {layers: [wide], adagrad: {learning_rate: 0.1}}\n"
                     "    - adagrad: {learning_rate: 0.1}\n"),
             Catch::Contains("a second part with adagrad"));
  CHECK_THAT(refusal("    - {layers: [wide], ftrl: {learning_rate: 0.1}}\n"
                     "    - adagrad: {learning_rate: 0.1}\n",
                     "reduce_lr_on_plateau: {factor: 0.5}\n"),
             Catch::Contains("parts keep their own learning rates"));
  CHECK_THAT(refusal("    - {layers: [wide], ftrl: {learning_rate: 0.1}}\n"),
             Catch::Contains("a list of two or more parts"));
  CHECK_THAT(refusal("    - {layers: [wide], ftrl: {learning_rate: 0.1}, sgd: {learning_rate: 1}}\n"
                     "    - adagrad: {learning_rate: 0.1}\n"),
             Catch::Contains("more than one optimizer in a part"));
}

TEST_CASE("YAML aliases cannot make a model of endless layers") {
  auto refusal = [](const std::string& layers) {
    try {
      parse_model_spec(distlab::ConfigNode::load_string(
          "name: m\ninput: [4]\nclasses: 4\noptimizer: {sgd: {learning_rate: 0.1}}\n" + layers,
          "m.yaml"));
    } catch (const distlab::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  // A path that holds the list it is in: built without end.
  CHECK_THAT(refusal("layers: &l\n  - branches: {combine: sum, paths: [*l]}\n"),
             Catch::Contains("branches inside more than 32 branches"));
  // Each line's path is two of the line before: 2^21 layers from 20 lines.
  std::string doubling = "layers:\n  - branches: {combine: sum, paths: [&p0 [{relu: }], []]}\n";
  for (int i = 1; i <= 20; ++i) {
    const std::string p = "p" + std::to_string(i), before = "*p" + std::to_string(i - 1);
    doubling += "  - branches: {combine: sum, paths: [&" + p + " [{branches: {combine: sum, " +
                "paths: [" + before + ", " + before + "]}}], []]}\n";
  }
  CHECK_THAT(refusal(doubling), Catch::Contains("more than 10000 layers in the model"));
  // The lab's ResNet-44, whose blocks are aliases, is far below the limit.
  CHECK_NOTHROW(load_model_spec(models_dir() + "cifar10_resnet44.yaml"));
}
