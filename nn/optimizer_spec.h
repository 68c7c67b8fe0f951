// The optimizer half of a model spec: reading its `optimizer:` section
// (one optimizer, or per_layer parts) and checking the parts against the
// network. The types and the functions others call (make_optimizer,
// assign_optimizer, ...) are declared with the spec in nn/model_spec.h;
// these two are model_spec.cc's.
#pragma once

#include "common/config_node.h"
#include "nn/model_spec.h"

namespace distlab::nn {

// `node` is the spec's `optimizer` value. Errors name file, line and key.
OptimizerSpec parse_optimizer(const ConfigNode& node);

// A per_layer optimizer's layers exist and have parameters, no layer is
// named twice, and no schedule would change rates the parts keep apart.
// `root` is the spec's root, `network` the spec's network.
void check_optimizer_parts(const ModelSpec& spec, Sequential& network, const ConfigNode& root);

}  // namespace distlab::nn
