#include "nn/keras_model.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "common/error.h"
#include "nn/zip_member.h"

namespace distlab::nn {
namespace {

using json = nlohmann::json;

constexpr const char* kPrefix = "keras:";

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

const json& config_of(const json& entry) {
  static const json empty = json::object();
  const auto found = entry.find("config");
  return found != entry.end() && found->is_object() ? *found : empty;
}

// Keras 3 nests a tensor's producer in "keras_history"; collects them all.
void histories(const json& value, std::vector<std::string>& names) {
  if (value.is_object()) {
    if (value.contains("keras_history") && value["keras_history"].is_array() &&
        !value["keras_history"].empty()) {
      names.push_back(value["keras_history"][0].get<std::string>());
      return;
    }
    for (const auto& item : value) histories(item, names);
  } else if (value.is_array()) {
    for (const auto& item : value) histories(item, names);
  }
}

std::vector<std::string> Importer::inbound_of(const KerasLayer& layer, const json& entry) const {
  const auto nodes = entry.find("inbound_nodes");
  if (nodes == entry.end() || nodes->empty()) return {};
  if (nodes->size() > 1) refuse(layer, "a layer used more than once (shared weights)");
  const json& node = (*nodes)[0];
  std::vector<std::string> names;
  if (node.is_array()) {
    // Keras 2: [[name, node index, tensor index, kwargs], ...]
    for (const auto& tensor : node) {
      if (!tensor.is_array() || tensor.empty() || !tensor[0].is_string()) {
        refuse(layer, "an inbound node that is not [name, node, tensor, kwargs]");
      }
      names.push_back(tensor[0].get<std::string>());
    }
  } else {
    histories(node, names);  // Keras 3: {"args": [...], "kwargs": {...}}
  }
  return names;
}

void Importer::read_layers(const json& model) {
  const json& config = config_of(model);
  // Keras before 2.2.3 wrote a Sequential's config as the list itself.
  const json& list = model.contains("config") && model["config"].is_array()
                         ? model["config"]
                         : (config.contains("layers") ? config["layers"] : json::array());
  if (!list.is_array() || list.empty()) refuse("no layers under config.layers");
  const bool sequential = model.value("class_name", "") == "Sequential";
  if (sequential && list[0].value("class_name", "") != "InputLayer") {
    // The first layer takes the input itself, and holds its shape.
    layers_.push_back(
        {.position = 0, .name = "(input)", .kind = "InputLayer", .config = config_of(list[0])});
    index_["(input)"] = 0;
  }
  int position = 0;
  for (const auto& entry : list) {
    KerasLayer layer;
    layer.position = ++position;
    layer.kind = entry.value("class_name", "");
    layer.config = config_of(entry);
    layer.name = entry.contains("name") && entry["name"].is_string()
                     ? entry["name"].get<std::string>()
                     : layer.config.value("name", "layer_" + std::to_string(layer.position));
    if (index_.contains(layer.name)) refuse(layer, "a second layer of this name");
    if (!sequential) {
      layer.inputs = inbound_of(layer, entry);
    } else if (!layers_.empty()) {
      layer.inputs = {layers_.back().name};
    }
    index_[layer.name] = static_cast<int>(layers_.size());
    layers_.push_back(std::move(layer));
  }
  consumers_.assign(layers_.size(), {});
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    for (const std::string& input : layers_[i].inputs) {
      const auto found = index_.find(input);
      if (found == index_.end())
        refuse(layers_[i], "takes the output of '" + input + "', no layer");
      consumers_[found->second].push_back(static_cast<int>(i));
    }
  }
  std::vector<int> sources, sinks;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    if (layers_[i].inputs.empty()) sources.push_back(static_cast<int>(i));
    if (consumers_[i].empty()) sinks.push_back(static_cast<int>(i));
  }
  if (sources.size() != 1) {
    refuse("a model of " + std::to_string(sources.size()) +
           " inputs: distlab's models take one (its data's examples)");
  }
  if (sinks.size() != 1) {
    refuse("a model of " + std::to_string(sinks.size()) + " outputs: distlab's models have one");
  }
  input_ = sources[0];
  output_ = sinks[0];
}

std::vector<int64_t> Importer::shape_after_batch(const KerasLayer& layer, const json& shape) const {
  if (!shape.is_array() || shape.size() < 2) refuse(layer, "an input shape of no dimensions");
  std::vector<int64_t> dims;
  for (std::size_t i = 1; i < shape.size(); ++i) {
    if (!shape[i].is_number_integer()) refuse(layer, "an input shape with unknown dimensions");
    dims.push_back(shape[i].get<int64_t>());
  }
  return dims;
}

void Importer::read_input_shape(const json& model) {
  const KerasLayer& first = layers_[input_];
  for (const char* key : {"batch_input_shape", "batch_shape"}) {
    if (first.config.contains(key)) {
      input_shape_ = shape_after_batch(first, first.config[key]);
      return;
    }
  }
  const json& build = config_of(model).value("build_config", json::object());
  if (build.contains("input_shape")) {
    input_shape_ = shape_after_batch(first, build["input_shape"]);
    return;
  }
  refuse(first, "no input shape (batch_input_shape): build the model on an Input first");
}

bool Importer::reaches(int from, int to) const {
  // A walk with a visited mark, not a recursion: a graph of many diamonds
  // has exponentially many paths.
  std::vector<bool> seen(layers_.size(), false);
  std::vector<int> pending{from};
  while (!pending.empty()) {
    const int at = pending.back();
    pending.pop_back();
    if (at == to) return true;
    if (seen[at]) continue;
    seen[at] = true;
    for (const int next : consumers_[at]) pending.push_back(next);
  }
  return false;
}

int Importer::meeting_of(int from) const {
  // Keras lists a model's layers in an order that runs: a layer comes after
  // the layers it takes. The first layer every branch reaches is where
  // they meet.
  for (std::size_t m = static_cast<std::size_t>(from) + 1; m < layers_.size(); ++m) {
    bool all = true;
    for (const int branch : consumers_[from]) all = all && reaches(branch, static_cast<int>(m));
    if (all) return static_cast<int>(m);
  }
  return -1;
}

void Importer::walk(int from, int stop, YAML::Node& out) {
  int at = from;
  for (;;) {
    if (at == output_ && stop < 0) return;
    const std::vector<int>& next = consumers_[at];
    if (next.size() == 1) {
      const int layer = next[0];
      if (layer == stop) return;
      if (layers_[layer].inputs.size() > 1) {
        refuse(layers_[layer],
               "joins branches that do not part from one layer: distlab's models are chains and "
               "branches that meet again (residual blocks, inception cells)");
      }
      append(layers_[layer], out);
      at = layer;
      continue;
    }
    const int meet = meeting_of(at);
    if (meet < 0 || (stop >= 0 && meet > stop)) {
      refuse(layers_[at], "its branches never meet again in one layer");
    }
    const KerasLayer& join = layers_[meet];
    if (join.kind != "Add" && join.kind != "Concatenate") {
      refuse(join, "branches meet here; distlab joins them only by Add or Concatenate");
    }
    if (join.inputs.size() != next.size()) {
      refuse(join, "joins " + std::to_string(join.inputs.size()) + " branches where '" +
                       layers_[at].name + "' starts " + std::to_string(next.size()));
    }
    YAML::Node paths(YAML::NodeType::Sequence);
    std::set<int> taken;
    for (const std::string& input : join.inputs) {
      const int end = index_.at(input);
      YAML::Node path(YAML::NodeType::Sequence);
      if (end != at) {
        int start = -1;
        for (const int branch : next) {
          if (!taken.contains(branch) && branch != meet && reaches(branch, end)) start = branch;
        }
        if (start < 0) refuse(join, "a branch that does not start at '" + layers_[at].name + "'");
        taken.insert(start);
        append(layers_[start], path);
        walk(start, meet, path);
      } else {
        taken.insert(meet);
      }
      paths.push_back(path);
    }
    YAML::Node branches;
    YAML::Node options;
    options["name"] = join.name;
    if (join.kind == "Add") {
      options["combine"] = "sum";
    } else {
      const int axis = join.config.value("axis", -1);
      if (axis != -1 && axis != static_cast<int>(input_shape_.size())) {
        refuse(join, "concatenates along axis " + std::to_string(axis) +
                         "; distlab concatenates along the last");
      }
      options["combine"] = "concat";
    }
    options["paths"] = paths;
    branches["branches"] = options;
    out.push_back(branches);
    at = meet;
  }
}

int Importer::square(const KerasLayer& layer, const char* key) const {
  const json& value = layer.config.at(key);
  if (value.is_number_integer()) return value.get<int>();
  if (!value.is_array() || value.empty() || !value[0].is_number_integer()) {
    refuse(layer, std::string(key) + " is not a size");
  }
  for (const auto& v : value) {
    if (v != value[0]) refuse(layer, std::string(key) + " is not square: distlab's are");
  }
  return value[0].get<int>();
}

void Importer::require(const KerasLayer& layer, const char* key, const json& expected,
                       const std::string& why) const {
  const auto found = layer.config.find(key);
  if (found == layer.config.end() || found->is_null() || *found == expected) return;
  refuse(layer, std::string(key) + " " + found->dump() + ": " + why);
}

std::string Importer::activation_of(const KerasLayer& layer) const {
  std::string activation = "linear";
  if (const auto found = layer.config.find("activation"); found != layer.config.end()) {
    if (found->is_string()) {
      activation = found->get<std::string>();
    } else if (found->is_object()) {  // Keras 3 may serialise it
      activation =
          found->value("config", json::object()).value("name", found->value("class_name", ""));
    }
  }
  if (activation == "relu") return "relu";
  if (activation == "linear") return "none";
  if (activation == "softmax" && &layer == &layers_[output_]) return "none";  // the loss's
  if (activation == "softmax") {
    refuse(layer,
           "a softmax before the output: distlab's loss applies the softmax, to the "
           "output only");
  }
  refuse(layer, "activation '" + activation + "': distlab's layers have relu and linear");
}

void Importer::regularizers(const KerasLayer& layer, YAML::Node& options, bool bias) const {
  for (const char* key : {"activity_regularizer", "kernel_constraint", "bias_constraint"}) {
    if (layer.config.contains(key) && !layer.config[key].is_null()) {
      refuse(layer, std::string(key) + ": distlab has none");
    }
  }
  for (const char* key : {"kernel_regularizer", "bias_regularizer", "embeddings_regularizer"}) {
    if (!layer.config.contains(key) || layer.config[key].is_null()) continue;
    const json& r = layer.config[key];
    std::string kind = r.value("class_name", "");
    std::transform(kind.begin(), kind.end(), kind.begin(), ::tolower);
    if (kind != "l1" && kind != "l2" && kind != "l1l2" && kind != "l1_l2") {
      refuse(layer,
             std::string(key) + " " + r.value("class_name", "?") + ": distlab has L1, L2 and L1L2");
    }
    const json& c = config_of(r);
    YAML::Node penalty;
    for (const char* k : {"l1", "l2"}) {
      if (c.contains(k) && c[k].is_number() && c[k].get<double>() > 0)
        penalty[k] = c[k].get<double>();
    }
    if (penalty.size() == 0) continue;
    std::string target = key;
    if (target == "embeddings_regularizer") target = "regularizer";
    if (target == "bias_regularizer" && !bias) continue;
    options[target] = penalty;
  }
}

void Importer::padding(const KerasLayer& layer, YAML::Node& options) const {
  const std::string padding = layer.config.value("padding", "valid");
  if (padding != "valid" && padding != "same") refuse(layer, "padding '" + padding + "'");
  options["padding"] = padding;
}

std::string Importer::dense(const KerasLayer& layer, YAML::Node& options) const {
  options["units"] = layer.config.at("units").get<int64_t>();
  options["activation"] = activation_of(layer);
  options["use_bias"] = layer.config.value("use_bias", true);
  regularizers(layer, options, true);
  return "dense";
}

std::string Importer::conv2d(const KerasLayer& layer, YAML::Node& options) const {
  require(layer, "dilation_rate", json::array({1, 1}), "distlab's convolutions are not dilated");
  require(layer, "groups", 1, "distlab's convolutions are not grouped");
  options["filters"] = layer.config.at("filters").get<int64_t>();
  options["kernel"] = square(layer, "kernel_size");
  if (layer.config.contains("strides")) options["strides"] = square(layer, "strides");
  padding(layer, options);
  options["activation"] = activation_of(layer);
  options["use_bias"] = layer.config.value("use_bias", true);
  regularizers(layer, options, true);
  return "conv2d";
}

std::string Importer::pooling(const KerasLayer& layer, YAML::Node& options) const {
  options["pool"] = square(layer, "pool_size");
  if (layer.config.contains("strides") && !layer.config["strides"].is_null()) {
    options["strides"] = square(layer, "strides");
  }
  padding(layer, options);
  return layer.kind == "MaxPooling2D" ? "max_pool2d" : "average_pool2d";
}

std::string Importer::global_pooling(const KerasLayer& layer, YAML::Node&) const {
  require(layer, "keepdims", false, "distlab's pooling gives one value per channel");
  return "global_average_pool2d";
}

std::string Importer::batch_norm(const KerasLayer& layer, YAML::Node& options) const {
  const json axis = layer.config.value("axis", json(-1));
  const json last = static_cast<int>(input_shape_.size());
  if (!(axis == -1 || axis == last || axis == json::array({-1}) || axis == json::array({last}))) {
    refuse(layer, "normalises axis " + axis.dump() + "; distlab normalises the last (channels)");
  }
  require(layer, "center", true, "distlab's batch norm has its offset");
  require(layer, "scale", true, "distlab's batch norm has its scale");
  options["momentum"] = layer.config.value("momentum", 0.99);
  options["epsilon"] = layer.config.value("epsilon", 1e-3);
  return "batch_norm";
}

std::string Importer::dropout(const KerasLayer& layer, YAML::Node& options) const {
  options["rate"] = layer.config.at("rate").get<double>();
  return "dropout";
}

std::string Importer::flatten(const KerasLayer&, YAML::Node&) const {
  return "flatten";
}

std::string Importer::activation(const KerasLayer& layer, YAML::Node&) const {
  if (layer.kind == "ReLU") {
    require(layer, "max_value", nullptr, "distlab's relu has no cap");
    require(layer, "negative_slope", 0.0, "distlab's relu is not leaky");
    require(layer, "threshold", 0.0, "distlab's relu starts at 0");
    return "relu";
  }
  return activation_of(layer) == "relu" ? "relu" : "";
}

std::string Importer::embedding(const KerasLayer& layer, YAML::Node& options) const {
  if (input_shape_.size() != 1 || input_shape_[0] != 1 || layer.inputs.size() != 1 ||
      index_.at(layer.inputs[0]) != input_) {
    refuse(layer,
           "an embedding of other than the input's one column: distlab gives each "
           "column its own table, where Keras shares one across the positions");
  }
  options["first_column"] = 0;
  YAML::Node vocab(YAML::NodeType::Sequence);
  vocab.push_back(layer.config.at("input_dim").get<int64_t>());
  options["vocab"] = vocab;
  options["dim"] = layer.config.at("output_dim").get<int64_t>();
  regularizers(layer, options, false);
  return "embedding";
}

void Importer::append(const KerasLayer& layer, YAML::Node& out) const {
  static const std::map<std::string, Converter> converters = {
      {"Dense", &Importer::dense},
      {"Conv2D", &Importer::conv2d},
      {"Convolution2D", &Importer::conv2d},
      {"MaxPooling2D", &Importer::pooling},
      {"AveragePooling2D", &Importer::pooling},
      {"GlobalAveragePooling2D", &Importer::global_pooling},
      {"BatchNormalization", &Importer::batch_norm},
      {"Dropout", &Importer::dropout},
      {"Flatten", &Importer::flatten},
      {"Activation", &Importer::activation},
      {"ReLU", &Importer::activation},
      {"Embedding", &Importer::embedding},
  };
  if (layer.kind == "InputLayer") refuse(layer, "a second input");
  if (layer.kind == "Add" || layer.kind == "Concatenate") {
    refuse(layer, "joins branches that do not part from one layer");
  }
  const auto converter = converters.find(layer.kind);
  if (converter == converters.end()) {
    refuse(layer,
           "distlab has no such layer (it has Dense, Conv2D, MaxPooling2D, "
           "AveragePooling2D, GlobalAveragePooling2D, BatchNormalization, Dropout, "
           "Flatten, Activation, ReLU, Embedding, Add and Concatenate)");
  }
  require(layer, "data_format", "channels_last", "distlab's images are channels_last");
  YAML::Node options;
  options["name"] = layer.name;
  const std::string kind = (this->*converter->second)(layer, options);
  if (kind.empty()) return;  // nothing to compute
  YAML::Node entry;
  entry[kind] = options;
  out.push_back(entry);
}

YAML::Node Importer::optimizer(const json& document) const {
  json settings;
  if (document.contains("compile_config")) {
    settings = document["compile_config"];  // Keras 3
  } else if (document.contains("training_config")) {
    settings = document["training_config"];  // Keras 2 (an HDF5 file's attribute)
    if (settings.contains("optimizer_config")) settings["optimizer"] = settings["optimizer_config"];
  }
  YAML::Node spec;
  if (settings.is_null() || !settings.contains("optimizer")) {
    spec["sgd"]["learning_rate"] = 0.01;
    return spec;
  }
  if (settings.contains("loss") && settings["loss"].is_string()) {
    const std::string loss = settings["loss"].get<std::string>();
    if (loss.find("categorical_crossentropy") == std::string::npos) {
      refuse("compile: loss '" + loss + "': distlab trains with a categorical cross-entropy");
    }
  }
  const json& opt = settings["optimizer"];
  std::string kind = opt.is_string() ? opt.get<std::string>() : opt.value("class_name", "");
  std::transform(kind.begin(), kind.end(), kind.begin(), ::tolower);
  const json& c = opt.is_object() ? config_of(opt) : json::object();
  for (const char* key : {"weight_decay", "clipnorm", "global_clipnorm", "clipvalue"}) {
    if (c.contains(key) && !c[key].is_null() && c[key] != 0) {
      refuse("compile: optimizer " + kind + " with " + key + ": distlab's has none");
    }
  }
  if (c.value("use_ema", false)) refuse("compile: optimizer " + kind + " with use_ema");
  const double rate = c.value("learning_rate", c.value("lr", kind == "sgd" ? 0.01 : 0.001));
  if (kind == "sgd") {
    spec["sgd"]["learning_rate"] = rate;
    if (c.value("momentum", 0.0) > 0) spec["sgd"]["momentum"] = c["momentum"].get<double>();
    if (c.value("nesterov", false)) spec["sgd"]["nesterov"] = true;
  } else if (kind == "adam") {
    spec["adam"]["learning_rate"] = rate;
    spec["adam"]["beta1"] = c.value("beta_1", 0.9);
    spec["adam"]["beta2"] = c.value("beta_2", 0.999);
    spec["adam"]["epsilon"] = c.value("epsilon", 1e-7);
  } else if (kind == "adagrad") {
    spec["adagrad"]["learning_rate"] = rate;
  } else if (kind == "ftrl") {
    spec["ftrl"]["learning_rate"] = rate;
  } else {
    refuse("compile: optimizer '" + kind + "': distlab has SGD, Adam, Adagrad and Ftrl");
  }
  return spec;
}

YAML::Node Importer::spec(const json& document) {
  if (!document.is_object() || !document.contains("class_name")) {
    refuse("not a Keras model: no class_name (write it with model.to_json())");
  }
  const std::string kind = document["class_name"].get<std::string>();
  if (kind != "Sequential" && kind != "Functional" && kind != "Model") {
    refuse("a Keras '" + kind + "': distlab imports Sequential and Functional models");
  }
  read_layers(document);
  read_input_shape(document);
  const KerasLayer& out = layers_[output_];
  const KerasLayer& logits =
      out.kind == "Activation" && out.inputs.size() == 1 ? layers_[index_.at(out.inputs[0])] : out;
  if (logits.kind != "Dense") {
    refuse(out, "the output: distlab's models end with a Dense layer of one unit per class");
  }

  YAML::Node spec;
  const std::string name = config_of(document).value("name", "keras_model");
  spec["name"] = name;
  const bool compiled = document.contains("compile_config") || document.contains("training_config");
  spec["description"] = "imported from the Keras model " + path_ +
                        (compiled ? "" : "; no compile settings: SGD at 0.01");
  YAML::Node input(YAML::NodeType::Sequence);
  for (const int64_t d : input_shape_) input.push_back(d);
  spec["input"] = input;
  spec["classes"] = logits.config.at("units").get<int64_t>();
  YAML::Node layers(YAML::NodeType::Sequence);
  walk(input_, -1, layers);
  spec["layers"] = layers;
  spec["optimizer"] = optimizer(document);
  return spec;
}

}  // namespace

bool names_keras_model(const std::string& model) {
  return model.starts_with(kPrefix) || model.ends_with(".json") || model.ends_with(".keras");
}

std::string keras_model_path(const std::string& model) {
  return model.starts_with(kPrefix) ? model.substr(std::string(kPrefix).size()) : model;
}

YAML::Node keras_model_spec(const std::string& path) {
  std::string text;
  if (path.ends_with(".keras")) {
    text = read_zip_member(path, "config.json");  // Keras 3's saved model
  } else {
    std::ifstream in(path);
    if (!in) throw InputError(path + ": cannot open the Keras model");
    std::stringstream content;
    content << in.rdbuf();
    text = content.str();
  }
  json document;
  try {
    document = json::parse(text);
  } catch (const json::exception& e) {
    throw InputError(path + ": not JSON (" + std::string(e.what()) +
                     "); a Keras model is the text of model.to_json()");
  }
  try {
    return Importer(path).spec(document);
  } catch (const json::exception& e) {
    throw InputError(path + ": a layer's configuration is missing a value Keras writes (" +
                     std::string(e.what()) + ")");
  }
}

}  // namespace distlab::nn
