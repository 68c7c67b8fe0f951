// The Keras importer's parts (keras_model.h), shared by keras_model.cc
// (the document, its graph and the compile settings) and keras_layers.cc
// (each Keras class as a distlab layer). Not for use elsewhere.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/error.h"

namespace distlab::nn::keras {

using json = nlohmann::json;

// One layer of the document, with the layers whose outputs it takes.
struct KerasLayer {
  int position = 0;  // in the document's list, from 1
  std::string name;
  std::string kind;  // its class_name
  json config;
  std::vector<std::string> inputs;
};

class Importer {
 public:
  explicit Importer(std::string path) : path_(std::move(path)) {}

  YAML::Node spec(const json& document);

 private:
  [[noreturn]] void refuse(const std::string& what) const { throw InputError(path_ + ": " + what); }
  [[noreturn]] void refuse(const KerasLayer& layer, const std::string& what) const {
    refuse("layer " + std::to_string(layer.position) + " '" + layer.name + "' (" + layer.kind +
           "): " + what);
  }

  void read_layers(const json& model);
  std::vector<std::string> inbound_of(const KerasLayer& layer, const json& entry) const;
  void read_input_shape(const json& model);
  std::vector<int64_t> shape_after_batch(const KerasLayer& layer, const json& shape) const;

  // The distlab layers from `from`'s output to `stop` (its input), or to
  // the model's output when stop is -1.
  void walk(int from, int stop, YAML::Node& out);
  // The first layer where every path out of `from` meets.
  int meeting_of(int from) const;
  bool reaches(int from, int to) const;
  void append(const KerasLayer& layer, YAML::Node& out) const;

  // One Keras class each: the distlab layer's options from the Keras
  // layer's config, and its kind ("" for a layer that computes nothing
  // here: a linear activation, the output's softmax).
  using Converter = std::string (Importer::*)(const KerasLayer&, YAML::Node&) const;
  std::string dense(const KerasLayer& layer, YAML::Node& options) const;
  std::string conv2d(const KerasLayer& layer, YAML::Node& options) const;
  std::string pooling(const KerasLayer& layer, YAML::Node& options) const;
  std::string global_pooling(const KerasLayer& layer, YAML::Node& options) const;
  std::string batch_norm(const KerasLayer& layer, YAML::Node& options) const;
  std::string dropout(const KerasLayer& layer, YAML::Node& options) const;
  std::string flatten(const KerasLayer& layer, YAML::Node& options) const;
  std::string activation(const KerasLayer& layer, YAML::Node& options) const;
  std::string embedding(const KerasLayer& layer, YAML::Node& options) const;

  // Layer options.
  int square(const KerasLayer& layer, const char* key) const;
  void padding(const KerasLayer& layer, YAML::Node& options) const;
  std::string activation_of(const KerasLayer& layer) const;
  void regularizers(const KerasLayer& layer, YAML::Node& options, bool bias) const;
  void require(const KerasLayer& layer, const char* key, const json& expected,
               const std::string& why) const;

  YAML::Node optimizer(const json& document) const;

  std::string path_;
  std::vector<KerasLayer> layers_;
  std::map<std::string, int> index_;
  std::vector<std::vector<int>> consumers_;
  int input_ = -1;
  int output_ = -1;
  std::vector<int64_t> input_shape_;
};

// An entry's "config", or an empty object.
const json& config_of(const json& entry);

}  // namespace distlab::nn::keras
