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

struct OptimizerSpec {
  std::string kind = "sgd";  // "sgd" | "adam" | "adagrad" | "ftrl"
  SgdOptions sgd;
  AdamOptions adam;
  AdagradOptions adagrad;
  FtrlOptions ftrl;
};

struct ModelSpec {
  std::string name;
  Shape input;
  int num_classes = 0;
  int batch_size = 128;
  OptimizerSpec optimizer;
  std::optional<PlateauOptions> reduce_lr_on_plateau;
  ConfigNode layers;  // the `layers:` list, checked on load
};

ModelSpec load_model_spec(const std::string& path);
// For specs embedded in another document (a scenario's `model:` key).
ModelSpec parse_model_spec(const ConfigNode& root);

// Builds the network of a spec: layers only, no parameter storage, so that
// costs can be asked of models too big to allocate (timing simulations).
std::unique_ptr<Sequential> build_network(const ModelSpec& spec);

std::unique_ptr<Optimizer> make_optimizer(const OptimizerSpec& spec, int64_t size);

}  // namespace distlab::nn
