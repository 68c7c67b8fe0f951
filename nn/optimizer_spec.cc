#include "nn/optimizer_spec.h"

#include <algorithm>

#include "common/error.h"
#include "nn/layers/sequential.h"

namespace distlab::nn {
namespace {

OptimizerSpec parse_single_optimizer(const ConfigNode& node, const std::string& kind);

// `per_layer: [{layers: [wide], ftrl: {...}}, {adagrad: {...}}]`.
OptimizerSpec parse_per_layer(const ConfigNode& list) {
  OptimizerSpec spec;
  spec.kind = "per_layer";
  if (!list.is_sequence() || list.size() < 2) {
    list.fail(
        "a list of two or more parts: {layers: [NAME, ...], OPTIMIZER: {...}}, then the "
        "optimizer of the other layers");
  }
  std::vector<std::string> kinds;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const ConfigNode item = list[i];
    const bool last = i + 1 == list.size();
    if (!item.is_map()) item.fail("a mapping: {layers: [...], OPTIMIZER: {...}}");
    OptimizerPart part;
    if (auto layers = item.find("layers")) {
      if (last) layers->fail("the last part takes every layer the others do not name: no layers");
      if (!layers->is_sequence() || layers->size() == 0) layers->fail("a list of layer names");
      for (std::size_t l = 0; l < layers->size(); ++l)
        part.layers.push_back((*layers)[l].as_string());
    } else if (!last) {
      item.fail("every part but the last names its layers", "add layers: [NAME, ...]");
    }
    // Beside `layers`, one optimizer, as at the top: `ftrl: {...}`.
    std::string kind;
    int optimizers = 0;
    for (const auto& entry : item.yaml()) {
      // as<std::string>() would throw yaml-cpp's BadConversion for a key
      // that is a list or null.
      if (!entry.first.IsScalar()) item.fail("a key must be a plain name");
      const std::string key = entry.first.Scalar();
      if (key == "layers") continue;
      kind = key;
      ++optimizers;
    }
    if (optimizers != 1) {
      item.fail(optimizers == 0 ? "no optimizer" : "more than one optimizer in a part",
                "one of: sgd, adam, adagrad, ftrl");
    }
    if (kind == "per_layer") item.at(kind).fail("parts cannot have parts");
    if (std::find(kinds.begin(), kinds.end(), kind) != kinds.end()) {
      item.at(kind).fail("a second part with " + kind,
                         "give each optimizer once, with all of its layers");
    }
    kinds.push_back(kind);
    part.optimizer = parse_single_optimizer(item, kind);
    spec.parts.push_back(std::move(part));
  }
  return spec;
}

// `node` holds the optimizer's key (and, in a per_layer part, `layers`).
OptimizerSpec parse_single_optimizer(const ConfigNode& node, const std::string& kind) {
  OptimizerSpec spec;
  spec.kind = kind;
  const ConfigNode o = node.at(spec.kind);
  if (spec.kind == "sgd") {
    o.allow_only({"learning_rate", "momentum", "nesterov"});
    // Above zero, for every optimizer: a rate of 0 trains nothing while the
    // run looks like training (FTRL divides by it besides).
    spec.sgd.learning_rate = static_cast<float>(o.at("learning_rate").as_double(1e-12, 1e3));
    spec.sgd.momentum = static_cast<float>(o.get_double("momentum", 0, 0, 0.9999));
    spec.sgd.nesterov = o.get_bool("nesterov", false);
  } else if (spec.kind == "adam") {
    o.allow_only({"learning_rate", "beta1", "beta2", "epsilon"});
    spec.adam.learning_rate = static_cast<float>(o.at("learning_rate").as_double(1e-12, 1e3));
    spec.adam.beta1 = static_cast<float>(o.get_double("beta1", spec.adam.beta1, 0, 0.9999));
    spec.adam.beta2 = static_cast<float>(o.get_double("beta2", spec.adam.beta2, 0, 0.999999));
    // Above zero: with epsilon 0 a parameter whose gradient is zero gets 0/0.
    spec.adam.epsilon = static_cast<float>(o.get_double("epsilon", spec.adam.epsilon, 1e-12, 1));
  } else if (spec.kind == "adagrad") {
    o.allow_only({"learning_rate", "initial_accumulator_value", "epsilon"});
    AdagradOptions& a = spec.adagrad;
    a.learning_rate = static_cast<float>(o.at("learning_rate").as_double(1e-12, 1e3));
    a.initial_accumulator_value = static_cast<float>(
        o.get_double("initial_accumulator_value", a.initial_accumulator_value, 0, 1e6));
    a.epsilon = static_cast<float>(o.get_double("epsilon", a.epsilon, 1e-12, 1));
  } else if (spec.kind == "ftrl") {
    o.allow_only({"learning_rate", "learning_rate_power", "initial_accumulator_value",
                  "l1_regularization_strength", "l2_regularization_strength"});
    FtrlOptions& f = spec.ftrl;
    // Above zero: FTRL divides by the learning rate.
    f.learning_rate = static_cast<float>(o.at("learning_rate").as_double(1e-12, 1e3));
    f.learning_rate_power =
        static_cast<float>(o.get_double("learning_rate_power", f.learning_rate_power, -10, 0));
    // Above zero with the usual negative power: 0^-p is infinite.
    f.initial_accumulator_value = static_cast<float>(
        o.get_double("initial_accumulator_value", f.initial_accumulator_value, 1e-12, 1e6));
    f.l1 = static_cast<float>(o.get_double("l1_regularization_strength", 0, 0, 1e6));
    f.l2 = static_cast<float>(o.get_double("l2_regularization_strength", 0, 0, 1e6));
  } else {
    node.fail("unknown optimizer '" + spec.kind + "'",
              "one of: sgd, adam, adagrad, ftrl, per_layer");
  }
  return spec;
}
}  // namespace

OptimizerSpec parse_optimizer(const ConfigNode& node) {
  const std::string kind = node.single_key();
  if (kind == "per_layer") return parse_per_layer(node.at(kind));
  return parse_single_optimizer(node, kind);
}

void check_optimizer_parts(const ModelSpec& spec, Sequential& network, const ConfigNode& root) {
  const ConfigNode parts = root.at("optimizer").at("per_layer");
  if (root.has("reduce_lr_on_plateau")) {
    root.at("reduce_lr_on_plateau")
        .fail("a per_layer optimizer's parts keep their own learning rates: no schedule",
              "remove reduce_lr_on_plateau, or use one optimizer");
  }
  ParameterLayout trainable, state;
  network.declare(trainable, state);
  std::vector<std::string> named;
  for (std::size_t i = 0; i < spec.optimizer.parts.size(); ++i) {
    for (std::size_t l = 0; l < spec.optimizer.parts[i].layers.size(); ++l) {
      const std::string& layer = spec.optimizer.parts[i].layers[l];
      const ConfigNode where = parts[i].at("layers")[l];
      const bool has_parameters =
          std::any_of(trainable.blocks().begin(), trainable.blocks().end(),
                      [&](const ParamBlock& b) { return b.name.rfind(layer + "/", 0) == 0; });
      if (!has_parameters) where.fail("no layer '" + layer + "' with parameters in this model");
      if (std::find(named.begin(), named.end(), layer) != named.end())
        where.fail("layer '" + layer + "' is in two parts");
      named.push_back(layer);
    }
  }
}

namespace {

std::unique_ptr<Optimizer> make_single_optimizer(const OptimizerSpec& spec, int64_t size) {
  if (spec.kind == "adam") return std::make_unique<Adam>(size, spec.adam);
  if (spec.kind == "adagrad") return std::make_unique<Adagrad>(size, spec.adagrad);
  if (spec.kind == "ftrl") return std::make_unique<Ftrl>(size, spec.ftrl);
  return std::make_unique<Sgd>(size, spec.sgd);
}

// "dense_1/kernel" -> "dense_1"
std::string layer_of(const std::string& block) {
  return block.substr(0, block.find('/'));
}

}  // namespace

int64_t OptimizerAssignment::floats() const {
  int64_t n = 0;
  for (const auto& range : ranges) n += range.second;
  return n;
}

std::vector<OptimizerAssignment> assign_optimizer(const OptimizerSpec& spec,
                                                  const ParameterLayout& layout, int64_t first,
                                                  int64_t size) {
  if (spec.kind != "per_layer") return {{.optimizer = &spec, .ranges = {{0, size}}}};
  std::vector<OptimizerAssignment> out;
  for (const OptimizerPart& part : spec.parts) out.push_back({.optimizer = &part.optimizer});
  for (const ParamBlock& block : layout.blocks()) {
    const std::string layer = layer_of(block.name);
    std::size_t owner = spec.parts.size() - 1;  // the last part: every layer not named
    for (std::size_t p = 0; p + 1 < spec.parts.size(); ++p) {
      const auto& named = spec.parts[p].layers;
      if (std::find(named.begin(), named.end(), layer) != named.end()) owner = p;
    }
    const int64_t from = std::max(block.offset, first);
    const int64_t to = std::min(block.offset + block.size(), first + size);
    if (from < to) out[owner].ranges.emplace_back(from - first, to - from);
  }
  return out;
}

std::unique_ptr<Optimizer> make_optimizer(const OptimizerSpec& spec, const ParameterLayout& layout,
                                          int64_t first, int64_t size) {
  if (spec.kind != "per_layer") return make_single_optimizer(spec, size);
  std::vector<PerLayerOptimizer::Part> parts;
  for (OptimizerAssignment& a : assign_optimizer(spec, layout, first, size)) {
    parts.push_back(
        {.optimizer = make_single_optimizer(*a.optimizer, size), .ranges = std::move(a.ranges)});
  }
  return std::make_unique<PerLayerOptimizer>(std::move(parts));
}

std::unique_ptr<Optimizer> make_optimizer(const OptimizerSpec& spec,
                                          const ParameterLayout& layout) {
  return make_optimizer(spec, layout, 0, layout.size());
}

std::vector<std::string> optimizer_state_names(const OptimizerSpec& spec) {
  if (spec.kind != "per_layer") return make_single_optimizer(spec, 0)->state_names();
  std::vector<std::string> out;
  for (const OptimizerPart& part : spec.parts) {
    for (const std::string& slot : make_single_optimizer(part.optimizer, 0)->state_names())
      out.push_back(part.optimizer.kind + "/" + slot);
  }
  return out;
}

float initial_learning_rate(const OptimizerSpec& spec) {
  if (spec.kind == "per_layer") throw Error("a per_layer optimizer has a learning rate per part");
  return make_single_optimizer(spec, 0)->learning_rate();
}

}  // namespace distlab::nn
