#include "nn/model_spec.h"

#include <functional>
#include <map>
#include <set>

#include "common/atomic_file.h"
#include "common/error.h"
#include "nn/keras_model.h"
#include "nn/layers/average_pool2d.h"
#include "nn/layers/batch_norm.h"
#include "nn/layers/branches.h"
#include "nn/layers/columns.h"
#include "nn/layers/conv2d.h"
#include "nn/layers/dense.h"
#include "nn/layers/dropout.h"
#include "nn/layers/embedding.h"
#include "nn/layers/flatten.h"
#include "nn/layers/global_average_pool2d.h"
#include "nn/layers/max_pool2d.h"
#include "nn/layers/pad_channels.h"
#include "nn/layers/relu.h"
#include "nn/optimizer_spec.h"

namespace distlab::nn {
namespace {

constexpr int64_t kMaxDim = 1 << 24;
// Values per example at any layer: far beyond any lab model, and small
// enough that no product of sizes overflows.
constexpr int64_t kMaxValues = int64_t{1} << 28;
// Layers in a spec, and branches inside branches: far beyond any lab model
// (ResNet-44 has under 200 layers, branches one deep). YAML aliases repeat
// a list without writing it out again, so a short file could otherwise
// name 2^n layers in n lines, or a path that holds itself, built without
// end.
constexpr int kMaxLayers = 10000;
constexpr int kMaxNesting = 32;

// Gives layers Keras-like default names: dense_1, dense_2, conv2d_1, ...
// Names must be unique: they name the parameter blocks (and, later, the
// entries of checkpoints). Every layer passes here once, so it also counts
// them.
class LayerNamer {
 public:
  std::string next(const ConfigNode& options, const std::string& kind) {
    if (++layers_ > kMaxLayers) {
      options.fail("more than " + std::to_string(kMaxLayers) + " layers in the model",
                   "a YAML alias (*name) repeats every layer of what it names");
    }
    const std::string fallback = kind + "_" + std::to_string(++count_[kind]);
    const std::string name = options.get_string("name", fallback);
    if (!used_.insert(name).second) {
      (options.has("name") ? options.at("name") : options)
          .fail("a second layer named '" + name + "'", "layer names must be unique");
    }
    return name;
  }

 private:
  std::map<std::string, int> count_;
  std::set<std::string> used_;
  int layers_ = 0;
};

// An int or an [h, w] pair (Keras accepts both for kernel sizes and strides).
std::pair<int, int> parse_pair(const ConfigNode& node) {
  if (node.is_sequence()) {
    if (node.size() != 2) node.fail("expected one integer or a pair [height, width]");
    return {static_cast<int>(node[0].as_int(1, kMaxDim)),
            static_cast<int>(node[1].as_int(1, kMaxDim))};
  }
  const int v = static_cast<int>(node.as_int(1, kMaxDim));
  return {v, v};
}

Regularizer parse_regularizer(const ConfigNode& options, const std::string& key) {
  Regularizer r;
  if (auto node = options.find(key)) {
    node->allow_only({"l1", "l2"});
    r.l1 = static_cast<float>(node->get_double("l1", 0, 0, 1e3));
    r.l2 = static_cast<float>(node->get_double("l2", 0, 0, 1e3));
  }
  return r;
}

Activation parse_activation_key(const ConfigNode& options) {
  return parse_activation(options.get_choice("activation", "none", {"none", "linear", "relu"}));
}

LayerPtr parse_dense(const ConfigNode& o, std::string name, Shape in) {
  o.allow_only(
      {"name", "units", "activation", "use_bias", "kernel_regularizer", "bias_regularizer"});
  DenseOptions d;
  d.units = static_cast<int>(o.at("units").as_int(1, kMaxDim));
  d.activation = parse_activation_key(o);
  d.use_bias = o.get_bool("use_bias", true);
  d.kernel_regularizer = parse_regularizer(o, "kernel_regularizer");
  d.bias_regularizer = parse_regularizer(o, "bias_regularizer");
  return std::make_unique<Dense>(std::move(name), in, d);
}

LayerPtr parse_conv2d(const ConfigNode& o, std::string name, Shape in) {
  o.allow_only({"name", "filters", "kernel", "strides", "padding", "activation", "use_bias",
                "kernel_regularizer", "bias_regularizer"});
  Conv2DOptions c;
  c.filters = static_cast<int>(o.at("filters").as_int(1, kMaxDim));
  std::tie(c.kernel_h, c.kernel_w) = parse_pair(o.at("kernel"));
  if (auto s = o.find("strides")) std::tie(c.stride_h, c.stride_w) = parse_pair(*s);
  c.padding = parse_padding(o.get_choice("padding", "valid", {"valid", "same", "fixed"}));
  c.activation = parse_activation_key(o);
  c.use_bias = o.get_bool("use_bias", true);
  c.kernel_regularizer = parse_regularizer(o, "kernel_regularizer");
  c.bias_regularizer = parse_regularizer(o, "bias_regularizer");
  return std::make_unique<Conv2D>(std::move(name), in, c);
}

// max_pool2d and average_pool2d: the window, its strides (the pool's by
// default, as Keras') and its padding.
Pool2DOptions parse_pool(const ConfigNode& o) {
  o.allow_only({"name", "pool", "strides", "padding"});
  Pool2DOptions p;
  if (auto pool = o.find("pool")) std::tie(p.pool_h, p.pool_w) = parse_pair(*pool);
  std::tie(p.stride_h, p.stride_w) = std::pair{p.pool_h, p.pool_w};
  if (auto s = o.find("strides")) std::tie(p.stride_h, p.stride_w) = parse_pair(*s);
  p.padding = parse_padding(o.get_choice("padding", "valid", {"valid", "same"}));
  return p;
}

LayerPtr parse_max_pool2d(const ConfigNode& o, std::string name, Shape in) {
  return std::make_unique<MaxPool2D>(std::move(name), in, parse_pool(o));
}

LayerPtr parse_average_pool2d(const ConfigNode& o, std::string name, Shape in) {
  return std::make_unique<AveragePool2D>(std::move(name), in, parse_pool(o));
}

LayerPtr parse_pad_channels(const ConfigNode& o, std::string name, Shape in) {
  o.allow_only({"name", "before", "after"});
  return std::make_unique<PadChannels>(std::move(name), in,
                                       static_cast<int>(o.get_int("before", 0, 0, kMaxDim)),
                                       static_cast<int>(o.get_int("after", 0, 0, kMaxDim)));
}

LayerPtr parse_batch_norm(const ConfigNode& o, std::string name, Shape in) {
  o.allow_only({"name", "momentum", "epsilon"});
  BatchNormOptions b;
  b.momentum = static_cast<float>(o.get_double("momentum", b.momentum, 0, 1));
  b.epsilon = static_cast<float>(o.get_double("epsilon", b.epsilon, 1e-12, 1));
  return std::make_unique<BatchNorm>(std::move(name), in, b);
}

LayerPtr parse_dropout(const ConfigNode& o, std::string name, Shape in) {
  o.allow_only({"name", "rate"});
  return std::make_unique<Dropout>(std::move(name), in,
                                   static_cast<float>(o.at("rate").as_double(0, 0.99)));
}

LayerPtr parse_embedding(const ConfigNode& o, std::string name, Shape in) {
  o.allow_only({"name", "first_column", "vocab", "dim", "combine", "regularizer"});
  EmbeddingOptions e;
  e.first_column = static_cast<int>(o.at("first_column").as_int(0, kMaxDim));
  for (int64_t v : o.at("vocab").as_int_list(1, kMaxDim)) e.vocab.push_back(static_cast<int>(v));
  if (e.vocab.empty()) o.at("vocab").fail("needs at least one column's vocabulary size");
  e.dim = static_cast<int>(o.at("dim").as_int(1, kMaxDim));
  e.combine = o.get_choice("combine", "concat", {"concat", "sum"}) == "sum" ? Combine::kSum
                                                                            : Combine::kConcat;
  e.regularizer = parse_regularizer(o, "regularizer");
  return std::make_unique<Embedding>(std::move(name), in, e);
}

LayerPtr parse_columns(const ConfigNode& o, std::string name, Shape in) {
  o.allow_only({"name", "first", "count"});
  return std::make_unique<Columns>(std::move(name), in,
                                   static_cast<int>(o.at("first").as_int(0, kMaxDim)),
                                   static_cast<int>(o.at("count").as_int(1, kMaxDim)));
}

// `depth`: how many branches hold the list.
std::unique_ptr<Sequential> parse_sequence(const ConfigNode& list, std::string name, Shape in,
                                           LayerNamer& namer, int depth);

LayerPtr parse_branches(const ConfigNode& o, std::string name, Shape in, LayerNamer& namer,
                        int depth) {
  o.allow_only({"name", "combine", "paths"});
  if (depth >= kMaxNesting) {
    o.fail("branches inside more than " + std::to_string(kMaxNesting) + " branches",
           "a YAML alias (*name) in a path may name a list that holds that path");
  }
  const Combine combine = o.get_choice("combine", "concat", {"concat", "sum"}) == "sum"
                              ? Combine::kSum
                              : Combine::kConcat;
  const ConfigNode paths = o.at("paths");
  if (paths.size() == 0) paths.fail("needs at least one path");
  std::vector<std::unique_ptr<Sequential>> built;
  for (std::size_t p = 0; p < paths.size(); ++p) {
    // An empty path ([]) passes the input on: a residual block's shortcut.
    if (!paths[p].is_sequence()) paths[p].fail("expected a list of layers ([] for the identity)");
    built.push_back(
        parse_sequence(paths[p], name + "/path_" + std::to_string(p), in, namer, depth + 1));
  }
  return std::make_unique<Branches>(std::move(name), in, std::move(built), combine);
}

using Parser = std::function<LayerPtr(const ConfigNode&, std::string, Shape)>;

const std::map<std::string, Parser>& parsers() {
  static const std::map<std::string, Parser> table = {
      {"dense", parse_dense},
      {"conv2d", parse_conv2d},
      {"max_pool2d", parse_max_pool2d},
      {"average_pool2d", parse_average_pool2d},
      {"pad_channels", parse_pad_channels},
      {"batch_norm", parse_batch_norm},
      {"dropout", parse_dropout},
      {"embedding", parse_embedding},
      {"columns", parse_columns},
      {"flatten",
       [](const ConfigNode& o, std::string name, Shape in) -> LayerPtr {
         o.allow_only({"name"});
         return std::make_unique<Flatten>(std::move(name), in);
       }},
      {"global_average_pool2d",
       [](const ConfigNode& o, std::string name, Shape in) -> LayerPtr {
         o.allow_only({"name"});
         return std::make_unique<GlobalAveragePool2D>(std::move(name), in);
       }},
      {"relu", [](const ConfigNode& o, std::string name, Shape in) -> LayerPtr {
         o.allow_only({"name"});
         return std::make_unique<Relu>(std::move(name), in);
       }}};
  return table;
}

std::vector<std::string> layer_kinds() {
  std::vector<std::string> kinds{"branches"};
  for (const auto& [kind, parser] : parsers()) kinds.push_back(kind);
  return kinds;
}

LayerPtr parse_layer(const ConfigNode& entry, Shape in, LayerNamer& namer, int depth) {
  const std::string kind = entry.single_key();
  const ConfigNode options = entry.at(kind);
  const auto kinds = layer_kinds();
  if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
    const std::string guess = closest_match(kind, kinds);
    entry.fail("unknown layer '" + kind + "'",
               guess.empty() ? "see scenarios/models/README.md" : "did you mean '" + guess + "'?");
  }
  std::string name = namer.next(options, kind);
  try {
    if (kind == "branches") return parse_branches(options, std::move(name), in, namer, depth);
    return parsers().at(kind)(options, std::move(name), in);
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    // A layer refused its shapes: point at the layer in the file.
    options.fail(e.what(), "the input of this layer is " + in.to_string());
  }
}

std::unique_ptr<Sequential> parse_sequence(const ConfigNode& list, std::string name, Shape in,
                                           LayerNamer& namer, int depth) {
  std::vector<LayerPtr> layers;
  Shape shape = in;
  for (std::size_t i = 0; i < list.size(); ++i) {
    layers.push_back(parse_layer(list[i], shape, namer, depth));
    shape = layers.back()->output_shape();
    if (shape.size() > kMaxValues) {
      list[i].fail("gives " + std::to_string(shape.size()) + " values per example, more than " +
                   std::to_string(kMaxValues));
    }
  }
  return std::make_unique<Sequential>(std::move(name), in, std::move(layers));
}

Shape parse_input_shape(const ConfigNode& node) {
  const auto dims = node.as_int_list(1, kMaxDim);
  Shape shape;
  if (dims.size() == 1) {
    shape = Shape::flat(static_cast<int>(dims[0]));
  } else if (dims.size() == 3) {
    shape = {static_cast<int>(dims[0]), static_cast<int>(dims[1]), static_cast<int>(dims[2])};
  } else {
    node.fail("expected [features] or [height, width, channels]");
  }
  if (shape.size() > kMaxValues) {
    node.fail("more than " + std::to_string(kMaxValues) + " values per example");
  }
  return shape;
}

PlateauOptions parse_plateau(const ConfigNode& o) {
  o.allow_only({"factor", "patience", "min_delta", "cooldown", "min_lr"});
  PlateauOptions p;
  p.factor = static_cast<float>(o.get_double("factor", p.factor, 1e-6, 0.999999));
  p.patience = static_cast<int>(o.get_int("patience", p.patience, 0, 1 << 20));
  p.min_delta = static_cast<float>(o.get_double("min_delta", p.min_delta, 0, 1e6));
  p.cooldown = static_cast<int>(o.get_int("cooldown", p.cooldown, 0, 1 << 20));
  p.min_lr = static_cast<float>(o.get_double("min_lr", p.min_lr, 0, 1e3));
  return p;
}

}  // namespace

ModelSpec parse_model_spec(const ConfigNode& root) {
  root.allow_only({"name", "description", "input", "classes", "batch_size", "layers", "optimizer",
                   "reduce_lr_on_plateau"});
  std::optional<PlateauOptions> plateau;
  if (auto p = root.find("reduce_lr_on_plateau")) plateau = parse_plateau(*p);
  ModelSpec spec{
      .name = root.at("name").as_string(),
      .input = parse_input_shape(root.at("input")),
      .num_classes = static_cast<int>(root.at("classes").as_int(2, kMaxDim)),
      .batch_size = static_cast<int>(root.get_int("batch_size", 128, 1, 1 << 20)),
      .optimizer = parse_optimizer(root.at("optimizer")),
      .reduce_lr_on_plateau = plateau,
      .layers = root.at("layers"),
  };
  if (spec.layers.size() == 0) spec.layers.fail("a model needs at least one layer");
  // Build once now: every layer error surfaces on load, with its place.
  const auto network = build_network(spec);
  try {
    ParameterLayout trainable, state;
    network->declare(trainable, state);
  } catch (const Error& e) {
    spec.layers.fail(e.what());
  }
  if (spec.optimizer.kind == "per_layer") check_optimizer_parts(spec, *network, root);
  if (network->output_shape().size() != spec.num_classes) {
    spec.layers[spec.layers.size() - 1].fail(
        "the last layer gives " + std::to_string(network->output_shape().size()) +
            " values per example, but the model has " + std::to_string(spec.num_classes) +
            " classes",
        "end with a dense layer of `classes` units (the logits)");
  }
  return spec;
}

ModelSpec load_model_spec(const std::string& path) {
  if (names_keras_model(path)) {
    const std::string file = keras_model_path(path);
    return parse_model_spec(ConfigNode::from_node(keras_model_spec(file), file));
  }
  return parse_model_spec(ConfigNode::load_file(path));
}

std::string model_spec_text(const std::string& path) {
  if (names_keras_model(path)) {
    YAML::Emitter out;
    out << keras_model_spec(keras_model_path(path));
    return std::string(out.c_str()) + "\n";
  }
  return read_file_text(path);
}

std::unique_ptr<Sequential> build_network(const ModelSpec& spec) {
  LayerNamer namer;
  return parse_sequence(spec.layers, spec.name, spec.input, namer, 0);
}

}  // namespace distlab::nn
