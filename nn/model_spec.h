// A model described as data: the YAML files under scenarios/models/. The
// spec is parsed and its network built once on load, so that every mistake
// (unknown layer, impossible shape, wrong type) is reported with the file,
// line and key before any training starts.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/config_node.h"
#include "nn/layers/sequential.h"
#include "nn/lr_schedule.h"
#include "nn/optimizer.h"

namespace distlab::nn {

struct OptimizerPart;

struct OptimizerSpec {
  std::string kind = "sgd";  // "sgd" | "adam" | "adagrad" | "ftrl" | "per_layer"
  SgdOptions sgd;
  AdamOptions adam;
  AdagradOptions adagrad;
  FtrlOptions ftrl;
  // per_layer: one optimizer per group of layers (PerLayerOptimizer). Every
  // part but the last names its layers; the last takes all the others.
  std::vector<OptimizerPart> parts;
};

struct OptimizerPart {
  std::vector<std::string> layers;  // empty: every layer no other part names
  OptimizerSpec optimizer;          // one of the single kinds
};

// Which part of a spec updates which values of [first, first + size) of a
// parameter buffer: offsets relative to `first`. A single optimizer has one
// assignment of the whole range; padding between blocks belongs to no part
// of a per_layer spec.
struct OptimizerAssignment {
  const OptimizerSpec* optimizer;
  std::vector<std::pair<int64_t, int64_t>> ranges;  // (offset, count)
  int64_t floats() const;
};
std::vector<OptimizerAssignment> assign_optimizer(const OptimizerSpec& spec,
                                                  const ParameterLayout& layout, int64_t first,
                                                  int64_t size);

struct ModelSpec {
  std::string name;
  Shape input;
  int num_classes = 0;
  int batch_size = 128;
  OptimizerSpec optimizer;
  std::optional<PlateauOptions> reduce_lr_on_plateau;
  ConfigNode layers;  // the `layers:` list, checked on load
};

// A spec's file, or a Keras model's JSON ("keras:PATH", or a path ending in
// .json: keras_model.h), imported as the spec of the same network.
ModelSpec load_model_spec(const std::string& path);
// The spec's text as a model file keeps it (checkpoint/): the file's, or
// the YAML of an imported Keras model.
std::string model_spec_text(const std::string& path);
// For specs embedded in another document (a scenario's `model:` key).
ModelSpec parse_model_spec(const ConfigNode& root);

// Builds the network of a spec: layers only, no parameter storage, so that
// costs can be asked of models too big to allocate (timing simulations).
std::unique_ptr<Sequential> build_network(const ModelSpec& spec);

// The optimizer of the values [first, first + size) of a buffer with this
// layout: the whole model's (first 0, size the layout's), or the shard a
// parameter server owns.
std::unique_ptr<Optimizer> make_optimizer(const OptimizerSpec& spec, const ParameterLayout& layout,
                                          int64_t first, int64_t size);
std::unique_ptr<Optimizer> make_optimizer(const OptimizerSpec& spec, const ParameterLayout& layout);
// Its state slots' names, without making one (checkpoint layouts).
std::vector<std::string> optimizer_state_names(const OptimizerSpec& spec);
// The rate a single optimizer starts at, without making one (a schedule's
// first rate). Throws Error for per_layer, whose parts have a rate each.
float initial_learning_rate(const OptimizerSpec& spec);

}  // namespace distlab::nn
