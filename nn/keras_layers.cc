// Each Keras class the importer takes, as a distlab layer of the same
// options (keras_importer.h), and the option checks they share.
#include <algorithm>
#include <cctype>

#include "nn/keras_importer.h"

namespace distlab::nn::keras {

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

}  // namespace distlab::nn::keras
