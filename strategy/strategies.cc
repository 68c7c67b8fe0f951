#include "strategy/strategies.h"

#include "common/error.h"
#include "strategy/parameter_server.h"
#include "strategy/synchronous.h"

namespace distlab::strategy {

const std::vector<StrategyDescription>& strategies() {
  static const std::vector<StrategyDescription> table = {
      {.kind = StrategyKind::kLocal,
       .name = "local",
       .keys = {},
       .cluster = {.ps = {0, 0},
                   .replicas = {1, 1},
                   .hint = "use chief: 1 and workers: 0 (or chief: 0 and workers: 1), ps: 0"},
       .placement = Placement::kHostPerTask,
       .train = train_synchronously,
       .checkpoint = synchronous_checkpoint_hooks()},
      {.kind = StrategyKind::kAllReduce,
       .name = "allreduce",
       .keys = {"bucket_bytes", "segment_bytes", "gradient_dtype", "overlap"},
       .cluster = {.ps = {0, 0},
                   .replicas = {1, kAnyNumber},
                   .hint = "give it a chief or workers and no ps, or use strategy "
                           "parameter_server"},
       .placement = Placement::kHostPerTask,
       .train = train_synchronously,
       .checkpoint = synchronous_checkpoint_hooks()},
      {.kind = StrategyKind::kParameterServer,
       .name = "parameter_server",
       .keys = {"mode", "segment_bytes", "gradient_dtype", "staleness_bound", "overlap",
                "replicas_to_aggregate"},
       .cluster = {.ps = {1, kAnyNumber},
                   .replicas = {1, kAnyNumber},
                   .hint = "set ps: 1 or more, and a chief or workers"},
       .placement = Placement::kHostPerTask,
       .train = train_with_parameter_servers,
       .serve = serve_parameters,
       .checkpoint = parameter_server_checkpoint_hooks(),
       // Async workers (the chief too) come back alone; a PS holds state
       // that only a checkpoint has, and a sync step waits for everyone.
       .rejoins = [](const StrategyConfig& config,
                     Role role) { return config.mode == PsMode::kAsync && role != Role::kPs; }},
      {.kind = StrategyKind::kMirrored,
       .name = "mirrored",
       .keys = {"bucket_bytes", "segment_bytes", "devices", "gradient_dtype"},
       .cluster = {.chief = {1, 1},
                   .workers = {0, 0},
                   .ps = {0, 0},
                   .replicas = {1, 1},
                   .hint = "mirrored runs on one host, the chief, whose devices are the "
                           "replicas: use chief: 1, workers: 0, ps: 0"},
       .placement = Placement::kDevicesOfOneHost,
       .train = train_synchronously,
       .checkpoint = synchronous_checkpoint_hooks()},
  };
  return table;
}

const StrategyDescription& describe(StrategyKind kind) {
  for (const StrategyDescription& d : strategies()) {
    if (d.kind == kind) return d;
  }
  throw Error("unknown strategy kind " + std::to_string(static_cast<int>(kind)));
}

const StrategyDescription* find_strategy(const std::string& name) {
  for (const StrategyDescription& d : strategies()) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

std::vector<std::string> strategy_names() {
  std::vector<std::string> names;
  for (const StrategyDescription& d : strategies()) names.push_back(d.name);
  return names;
}

const char* strategy_name(StrategyKind kind) {
  return describe(kind).name;
}

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::kFloat32:
      return "float32";
    case Precision::kFloat16:
      return "mixed_float16";
    case Precision::kBFloat16:
      return "mixed_bfloat16";
  }
  return "?";
}

std::vector<std::string> precision_names() {
  return {"float32", "mixed_float16", "mixed_bfloat16"};
}

Precision precision_named(const std::string& name) {
  for (Precision precision : {Precision::kFloat32, Precision::kFloat16, Precision::kBFloat16}) {
    if (name == precision_name(precision)) return precision;
  }
  throw Error("unknown precision '" + name + "' (float32, mixed_float16 or mixed_bfloat16)");
}

const char* fidelity_name(Fidelity fidelity) {
  return fidelity == Fidelity::kFull ? "full" : "timing";
}

}  // namespace distlab::strategy
