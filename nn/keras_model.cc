#include "nn/keras_model.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "common/error.h"
#include "nn/keras_importer.h"
#include "nn/zip_member.h"

namespace distlab::nn {
namespace keras {

const json& config_of(const json& entry) {
  static const json empty = json::object();
  const auto found = entry.find("config");
  return found != entry.end() && found->is_object() ? *found : empty;
}

namespace {

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

}  // namespace

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

}  // namespace keras

namespace {
constexpr const char* kPrefix = "keras:";
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
  keras::json document;
  try {
    document = keras::json::parse(text);
  } catch (const keras::json::exception& e) {
    throw InputError(path + ": not JSON (" + std::string(e.what()) +
                     "); a Keras model is the text of model.to_json()");
  }
  try {
    return keras::Importer(path).spec(document);
  } catch (const keras::json::exception& e) {
    throw InputError(path + ": a layer's configuration is missing a value Keras writes (" +
                     std::string(e.what()) + ")");
  }
}

}  // namespace distlab::nn
