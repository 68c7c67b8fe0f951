#include "run/scenario.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "common/config_node.h"
#include "common/error.h"
#include "nn/keras_model.h"
#include "run/input_pipeline_config.h"
#include "run/scenario_limits.h"
#include "run/step_time_spread.h"
#include "run/strategy_section.h"
#include "strategy/strategies.h"

namespace distlab::run {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kMaxBatch = 1 << 20;  // as in model specs
constexpr int64_t kMaxEpochs = 1000000;
constexpr double kMaxLatencyUs = 1e7;  // 10 s
constexpr double kMaxSeconds = 1e9;    // about 30 years
constexpr int64_t kMaxKeep = 1000000;
constexpr double kMaxBandwidthGbps = 1e5;  // 100 Tb/s

std::string read_text(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw ConfigError(path, 0, "", "is a folder, not a scenario file");
  std::ifstream in(path);
  if (!in) throw ConfigError(path, 0, "", "cannot open the file");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string non_empty(const ConfigNode& node) {
  std::string value = node.as_string();
  if (value.empty()) node.fail("must not be empty");
  return value;
}

// The child when given, else the node itself: where to point an error
// about a value that may have been left to its default.
ConfigNode child_or_self(const ConfigNode& node, const std::string& child) {
  auto found = node.find(child);
  return found ? *found : node;
}

// A machine type name, checked against the backend's catalog when it has one.
std::string machine_name(const ConfigNode& node, const std::vector<std::string>& machine_types) {
  std::string name = non_empty(node);
  if (machine_types.empty() ||
      std::find(machine_types.begin(), machine_types.end(), name) != machine_types.end()) {
    return name;
  }
  const std::string closest = closest_match(name, machine_types);
  node.fail("unknown machine type '" + name + "'", closest.empty()
                                                       ? "the catalog lists the machine types"
                                                       : "did you mean '" + closest + "'?");
}

std::string count_text(const strategy::CountRange& range) {
  if (range.min == range.max) return std::to_string(range.min);
  if (range.max == strategy::kAnyNumber) return "at least " + std::to_string(range.min);
  return std::to_string(range.min) + " to " + std::to_string(range.max);
}

// The strategy's cluster rule, each violation pointing at its key.
void check_cluster_rule(const ConfigNode& node, const strategy::StrategyDescription& strategy,
                        const strategy::ClusterSpec& spec) {
  const std::string name = strategy.name;
  const strategy::ClusterRule& rule = strategy.cluster;
  const std::pair<const char*, std::pair<strategy::CountRange, int>> roles[] = {
      {"chief", {rule.chief, spec.chiefs}},
      {"workers", {rule.workers, spec.workers}},
      {"ps", {rule.ps, spec.ps}}};
  for (const auto& [key, limits] : roles) {
    const auto& [range, count] = limits;
    if (range.contains(count)) continue;
    const std::string role = std::string(key) == "ps" ? "parameter servers" : key;
    if (range.max == 0)
      child_or_self(node, key).fail("strategy " + name + " has no " + role, rule.hint);
    child_or_self(node, key).fail("strategy " + name + " needs " + key + ": " + count_text(range) +
                                      ", this cluster has " + std::to_string(count),
                                  rule.hint);
  }
  if (!rule.replicas.contains(spec.replicas())) {
    const bool one = rule.replicas.max == 1 ||
                     (rule.replicas.min == 1 && rule.replicas.max == strategy::kAnyNumber);
    const std::string wanted = (rule.replicas.min == rule.replicas.max ? "trains " : "needs ") +
                               count_text(rule.replicas) + (one ? " replica" : " replicas");
    child_or_self(node, "workers")
        .fail("strategy " + name + " " + wanted + ", a chief or workers; this cluster has " +
                  std::to_string(spec.replicas()) + " (chief " + std::to_string(spec.chiefs) +
                  ", workers " + std::to_string(spec.workers) + ")",
              rule.hint);
  }
}

ClusterConfig parse_cluster(const ConfigNode& root, const strategy::StrategyConfig& strategy,
                            const std::vector<std::string>& machine_types) {
  const ConfigNode node = root.at("cluster");
  node.allow_only({"machine", "chief", "workers", "ps", "chief_machine", "worker_machine",
                   "ps_machine", "placement", "gpus_per_task"});
  ClusterConfig config;
  config.placement =
      node.get_choice("placement", "per_task", {"per_task", "one_host"}) == "one_host"
          ? Placement::kOneHost
          : Placement::kPerTask;
  const std::string machine = machine_name(node.at("machine"), machine_types);
  auto machine_or_default = [&](const std::string& key) {
    auto found = node.find(key);
    return found ? machine_name(*found, machine_types) : machine;
  };
  config.chief_machine = machine_or_default("chief_machine");
  config.worker_machine = machine_or_default("worker_machine");
  config.ps_machine = machine_or_default("ps_machine");

  auto& spec = config.spec;
  spec.chiefs = static_cast<int>(node.get_int("chief", 1, 0, 1));
  spec.workers = static_cast<int>(node.get_int("workers", 0, 0, kMaxTasks));
  spec.ps = static_cast<int>(node.get_int("ps", 0, 0, kMaxTasks));

  config.gpus_per_task = static_cast<int>(node.get_int("gpus_per_task", 1, 1, kMaxDevices));
  if (config.gpus_per_task > 1 &&
      strategy::describe(strategy.kind).placement == strategy::Placement::kDevicesOfOneHost) {
    node.at("gpus_per_task")
        .fail("mirrored already trains on the devices of its one host",
              "strategy.devices sets how many; gpus_per_task is for allreduce and "
              "parameter_server clusters");
  }

  check_cluster_rule(node, strategy::describe(strategy.kind), spec);
  return config;
}

strategy::TrainingConfig parse_training(const ConfigNode& root, const ClusterConfig& cluster,
                                        const strategy::StrategyConfig& strategy) {
  strategy::TrainingConfig config;
  const auto found = root.find("training");
  if (!found) return config;
  const ConfigNode& node = *found;
  node.allow_only({"batch_size", "epochs", "steps", "eval_every", "eval_examples", "train_examples",
                   "precision"});
  config.batch_size = node.get_int("batch_size", 0, 0, kMaxBatch);
  config.epochs = node.get_int("epochs", 1, 1, kMaxEpochs);
  if (auto steps = node.find("steps")) {
    if (node.has("epochs")) {
      steps->fail("epochs and steps are both given",
                  "give one: epochs (passes over the data) or steps (per replica)");
    }
    config.steps = steps->as_int(1, kMaxCount);
  }
  config.eval_every = node.get_int("eval_every", 0, 0, kMaxCount);
  config.eval_examples = node.get_int("eval_examples", 0, 0, kMaxCount);
  config.train_examples = node.get_int("train_examples", 0, 0, kMaxCount);
  if (auto precision = node.find("precision")) {
    config.precision = strategy::precision_named(precision->as_choice(strategy::precision_names()));
  }

  // Keras' rule: a synchronous strategy's batch is global, split among its
  // replicas (each needs one example at least); a parameter server's
  // workers each take a batch of that size.
  int64_t replicas = cluster.spec.replicas();
  if (strategy::describe(strategy.kind).placement == strategy::Placement::kDevicesOfOneHost)
    replicas = std::max(1, strategy.devices);
  const bool per_worker = strategy.kind == strategy::StrategyKind::kParameterServer;
  if (config.batch_size > 0 && !per_worker && config.batch_size < replicas) {
    node.at("batch_size")
        .fail("smaller than the " + std::to_string(replicas) +
                  " replicas: batch_size is the global batch of a synchronous strategy, split "
                  "among them",
              "give the global batch: the per-replica batch times " + std::to_string(replicas));
  }
  const int64_t step_examples = per_worker ? config.batch_size * replicas : config.batch_size;
  if (config.batch_size > 0 && config.train_examples > 0 && step_examples > config.train_examples) {
    node.at("batch_size")
        .fail("too large: a step of " +
                  (per_worker ? std::to_string(replicas) + " workers of batch " +
                                    std::to_string(config.batch_size)
                              : "global batch " + std::to_string(config.batch_size)) +
                  " needs more than the " + std::to_string(config.train_examples) +
                  " train_examples",
              "lower batch_size or raise train_examples");
  }
  return config;
}

strategy::CheckpointConfig parse_checkpoint(const ConfigNode& root) {
  strategy::CheckpointConfig config;
  const auto found = root.find("checkpoint");
  if (!found) return config;
  const ConfigNode& node = *found;
  node.allow_only({"every_steps", "every_seconds", "keep"});
  config.every_steps = node.get_int("every_steps", 0, 0, kMaxCount);
  config.every_seconds = node.get_double("every_seconds", 0, 0, kMaxSeconds);
  config.keep = static_cast<int>(node.get_int("keep", 3, 1, kMaxKeep));
  return config;
}

// "worker:1", "ps:0", "chief" (index 0): a task of the cluster.
strategy::TaskId parse_task(const ConfigNode& node, const strategy::ClusterSpec& cluster) {
  const std::string text = node.as_string();
  const std::size_t colon = text.find(':');
  const std::string role = text.substr(0, colon);
  int index = 0;
  if (colon != std::string::npos) {
    const std::string digits = text.substr(colon + 1);
    if (digits.empty() || digits.size() > 6 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      node.fail("'" + text + "' is not a task", "write ROLE:INDEX, e.g. worker:1 or ps:0");
    }
    index = std::stoi(digits);
  }
  strategy::TaskId task;
  int count = 0;
  if (role == "chief") {
    task = {strategy::Role::kChief, index};
    count = cluster.chiefs;
  } else if (role == "worker") {
    task = {strategy::Role::kWorker, index};
    count = cluster.workers;
  } else if (role == "ps") {
    task = {strategy::Role::kPs, index};
    count = cluster.ps;
  } else {
    node.fail("'" + text + "' is not a task", "write ROLE:INDEX with chief, worker or ps");
  }
  if (index >= count) {
    node.fail("the cluster has no task " + text,
              "it has chief " + std::to_string(cluster.chiefs) + ", workers " +
                  std::to_string(cluster.workers) + ", ps " + std::to_string(cluster.ps));
  }
  return task;
}

FaultSpec parse_fault(const ConfigNode& node, const ClusterConfig& cluster,
                      const std::vector<std::string>& machine_types) {
  node.allow_only({"task", "machine", "at_step", "at_seconds", "mtbf_hours"});
  FaultSpec fault;
  fault.where = node.file() + ":" + std::to_string(node.line());
  const int whens =
      int(node.has("at_step")) + int(node.has("at_seconds")) + int(node.has("mtbf_hours"));
  if (whens != 1) {
    node.fail("give exactly one of at_step, at_seconds or mtbf_hours",
              "e.g. {task: worker:1, at_step: 300} or {machine: n1-standard-4, mtbf_hours: 2}");
  }
  if (auto task = node.find("task")) fault.task = parse_task(*task, cluster.spec);
  if (auto machine = node.find("machine")) {
    if (fault.task) machine->fail("give a task or a machine type, not both");
    if (!node.has("mtbf_hours")) {
      machine->fail("a machine type's tasks fail by mtbf_hours only",
                    "name one task for at_step or at_seconds");
    }
    fault.machine = machine_name(*machine, machine_types);
  }
  if (auto step = node.find("at_step")) {
    if (!fault.task) step->fail("at_step needs a task", "e.g. {task: worker:1, at_step: 300}");
    fault.at_step = step->as_int(0, kMaxCount);
  }
  if (auto seconds = node.find("at_seconds")) {
    if (!fault.task) seconds->fail("at_seconds needs a task", "e.g. {task: ps:0, at_seconds: 20}");
    fault.at_seconds = seconds->as_double(0, kMaxSeconds);
  }
  if (auto mtbf = node.find("mtbf_hours")) {
    fault.mtbf_seconds = mtbf->as_double(0, kMaxSeconds / 3600) * 3600;
    if (fault.mtbf_seconds <= 0) mtbf->fail("must be above 0");
  }
  return fault;
}

std::vector<FaultSpec> parse_faults(const ConfigNode& root, const ClusterConfig& cluster,
                                    const std::vector<std::string>& machine_types) {
  std::vector<FaultSpec> faults;
  const auto found = root.find("faults");
  if (!found || found->is_null()) return faults;
  if (found->is_map()) {  // `faults: {mtbf_hours: 2}`: one entry
    faults.push_back(parse_fault(*found, cluster, machine_types));
    return faults;
  }
  if (!found->is_sequence()) {
    found->fail("is a list of faults", "e.g. - {task: worker:1, at_step: 300}");
  }
  for (std::size_t i = 0; i < found->size(); ++i) {
    faults.push_back(parse_fault((*found)[i], cluster, machine_types));
  }
  return faults;
}

SlowdownSpec parse_slowdown(const ConfigNode& node, const ClusterConfig& cluster,
                            const std::vector<std::string>& machine_types,
                            const std::string& scenario_path) {
  node.allow_only({"task", "machine", "factor", "lognormal_sigma", "empirical_steps",
                   "from_seconds", "to_seconds"});
  SlowdownSpec slowdown;
  if (!node.has("factor") && !node.has("lognormal_sigma") && !node.has("empirical_steps")) {
    node.fail("give a factor, a lognormal_sigma or empirical_steps",
              "e.g. {task: worker:2, factor: 1.5} or {lognormal_sigma: 0.2}");
  }
  if (auto task = node.find("task")) slowdown.task = parse_task(*task, cluster.spec);
  if (auto machine = node.find("machine")) {
    if (slowdown.task) machine->fail("give a task or a machine type, not both");
    slowdown.machine = machine_name(*machine, machine_types);
  }
  strategy::SlowdownPart& part = slowdown.part;
  if (auto factor = node.find("factor")) {
    part.factor = factor->as_double(0, 1e6);
    if (part.factor < 1) {
      factor->fail("a slowdown is 1 or more", "1.5 makes the task's work take 1.5 times as long");
    }
  }
  if (auto sigma = node.find("lognormal_sigma")) {
    part.lognormal_sigma = sigma->as_double(-1e6, 10);
    if (part.lognormal_sigma < 0) sigma->fail("a spread is 0 or more", "e.g. 0.2");
  }
  if (auto steps = node.find("empirical_steps")) {
    const fs::path run = non_empty(*steps);
    const fs::path resolved = run.is_absolute() ? run : fs::path(scenario_path).parent_path() / run;
    try {
      part.step_factors = std::make_shared<const std::vector<double>>(
          step_time_factors(resolved.lexically_normal().string()));
    } catch (const Error& e) {
      steps->fail(e.what(),
                  "a real run's directory or steps.csv, relative to the scenario's folder");
    }
  }
  if (auto from = node.find("from_seconds")) part.from_seconds = from->as_double(0, kMaxSeconds);
  if (auto to = node.find("to_seconds")) {
    part.to_seconds = to->as_double(0, kMaxSeconds);
    if (part.to_seconds <= part.from_seconds) {
      to->fail("ends before it begins", "to_seconds comes after from_seconds");
    }
  }
  return slowdown;
}

std::vector<SlowdownSpec> parse_slowdowns(const ConfigNode& root, const ClusterConfig& cluster,
                                          const std::vector<std::string>& machine_types,
                                          const std::string& scenario_path) {
  std::vector<SlowdownSpec> slowdowns;
  const auto found = root.find("slowdowns");
  if (!found || found->is_null()) return slowdowns;
  if (!found->is_sequence()) {
    found->fail("is a list of slowdowns", "e.g. - {task: worker:2, factor: 1.5}");
  }
  for (std::size_t i = 0; i < found->size(); ++i) {
    slowdowns.push_back(parse_slowdown((*found)[i], cluster, machine_types, scenario_path));
  }
  return slowdowns;
}

// An optional duration that must be above zero.
double positive_seconds(const ConfigNode& node, const std::string& key, double fallback) {
  const auto found = node.find(key);
  if (!found) return fallback;
  const double seconds = found->as_double(0, kMaxSeconds);
  if (seconds <= 0) found->fail("must be above 0, got 0");
  return seconds;
}

RecoveryConfig parse_recovery(const ConfigNode& root) {
  RecoveryConfig config;
  const auto found = root.find("recovery");
  if (!found) return config;
  const ConfigNode& node = *found;
  node.allow_only({"max_restarts", "detect_seconds", "restart_seconds"});
  config.max_restarts = static_cast<int>(node.get_int("max_restarts", 6, 0, kMaxKeep));
  // Above zero: a failure noticed, or a task back, in no time at all would
  // make recovery free.
  config.detect_seconds = positive_seconds(node, "detect_seconds", 5);
  config.restart_seconds = positive_seconds(node, "restart_seconds", 10);
  return config;
}

NetworkConfig parse_network(const ConfigNode& root) {
  NetworkConfig config;
  const auto found = root.find("network");
  if (!found) return config;
  const ConfigNode& node = *found;
  node.allow_only({"latency_us", "bandwidth_gbps", "model", "collectives"});
  config.latency_seconds = node.get_double("latency_us", 50, 0, kMaxLatencyUs) * 1e-6;
  config.bandwidth = node.get_double("bandwidth_gbps", 0, 0, kMaxBandwidthGbps) * 1e9 / 8;
  config.model = node.get_choice("model", "cm02", {"cm02", "lv08"}) == "lv08" ? NetworkModel::kLv08
                                                                              : NetworkModel::kCm02;
  config.collectives =
      node.get_choice("collectives", "messages", {"messages", "analytic"}) == "analytic"
          ? Collectives::kAnalytic
          : Collectives::kMessages;
  return config;
}

// The closed form prices a ring on links of the tasks' own, without values
// or failures: what it is not for is refused, pointing at what to change.
void check_analytic_collectives(const ConfigNode& root, const Scenario& s) {
  if (s.network.collectives != Collectives::kAnalytic) return;
  const ConfigNode key = root.at("network").at("collectives");
  const std::string why = "analytic times the all-reduce ring in closed form";
  if (s.fidelity != strategy::Fidelity::kTiming) {
    key.fail(why + ", without moving values", "set fidelity: timing, or collectives: messages");
  }
  if (s.strategy.kind != strategy::StrategyKind::kAllReduce) {
    key.fail(why + "; strategy " + std::string(strategy::strategy_name(s.strategy.kind)) +
                 " has no ring between tasks",
             "use strategy allreduce, or collectives: messages");
  }
  if (s.cluster.placement != Placement::kPerTask) {
    key.fail(why + " on links of the tasks' own",
             "use placement: per_task, or collectives: messages");
  }
  if (s.network.model != NetworkModel::kCm02) {
    key.fail(why + " as alpha-beta, the cm02 model", "use model: cm02, or collectives: messages");
  }
  if (!s.faults.empty()) {
    key.fail(why + "; a member that fails inside it is not modelled",
             "leave out faults, or use collectives: messages");
  }
}

std::string resolve_model(const ConfigNode& root, const std::string& scenario_path) {
  const ConfigNode node = root.at("model");
  const std::string given = non_empty(node);
  // keras:PATH names a Keras model (nn/keras_model.h), which is told by
  // its .json or .keras.
  if (nn::names_keras_model(given) && !nn::keras_model_path(given).ends_with(".json") &&
      !nn::keras_model_path(given).ends_with(".keras")) {
    node.fail(
        "a Keras model is the JSON of model.to_json() (a .json file) or a model.save() "
        "(a .keras file)");
  }
  const fs::path model = nn::keras_model_path(given);
  const fs::path resolved =
      model.is_absolute() ? model : (fs::path(scenario_path).parent_path() / model);
  std::error_code ec;
  if (!fs::is_regular_file(resolved, ec)) {
    node.fail("no model file " + resolved.lexically_normal().string(),
              "the path is relative to the scenario's folder");
  }
  return resolved.lexically_normal().string();
}

}  // namespace

bool SlowdownSpec::slows(strategy::TaskId t, const std::string& machine_type) const {
  if (task) return *task == t;
  return machine.empty() || machine == machine_type;
}

strategy::Slowdown task_slowdown(const Scenario& scenario, strategy::TaskId task) {
  std::vector<strategy::SlowdownPart> parts;
  for (const SlowdownSpec& s : scenario.slowdowns) {
    if (s.slows(task, scenario.cluster.machine_of(task.role))) parts.push_back(s.part);
  }
  const auto ordinal = static_cast<uint64_t>(scenario.cluster.spec.ordinal(task));
  return strategy::Slowdown(std::move(parts), scenario.seed * 1000003 + ordinal);
}

bool FaultSpec::strikes(strategy::TaskId t, const std::string& machine_type) const {
  if (task) return *task == t;
  return machine.empty() || machine == machine_type;
}

const std::string& ClusterConfig::machine_of(strategy::Role role) const {
  switch (role) {
    case strategy::Role::kChief:
      return chief_machine;
    case strategy::Role::kPs:
      return ps_machine;
    case strategy::Role::kWorker:
      break;
  }
  return worker_machine;
}

Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides,
                       const std::vector<std::string>& machine_types) {
  const std::string text = read_text(path);
  const ConfigNode doc = ConfigNode::load_string(text, path);
  AppliedOverrides applied = apply_overrides(doc, overrides);
  const ConfigNode root = ConfigNode::from_node(doc.yaml(), path, std::move(applied.origins));

  root.allow_only({"description", "model", "data", "seed", "fidelity", "cluster", "strategy",
                   "training", "input_pipeline", "checkpoint", "faults", "slowdowns", "recovery",
                   "network"});
  Scenario s;
  s.path = path;
  s.name = fs::path(path).stem().string();
  if (overrides.empty()) {
    s.text = text;
  } else {
    YAML::Emitter out;
    out << root.yaml();
    s.text = std::string(out.c_str()) + "\n";
  }
  s.description = root.get_string("description", "");
  s.model_path = resolve_model(root, path);
  if (auto data = root.find("data")) s.data = non_empty(*data);
  s.seed = static_cast<uint64_t>(root.get_int("seed", 0, 0, std::numeric_limits<int64_t>::max()));
  s.fidelity = root.get_choice("fidelity", "full", {"full", "timing"}) == "timing"
                   ? strategy::Fidelity::kTiming
                   : strategy::Fidelity::kFull;
  s.strategy = parse_strategy(root);
  s.cluster = parse_cluster(root, s.strategy, machine_types);
  check_replicas_to_aggregate(root, s.cluster, s.strategy);
  s.training = parse_training(root, s.cluster, s.strategy);
  s.training.input = parse_input_pipeline(root);
  s.checkpoint = parse_checkpoint(root);
  s.faults = parse_faults(root, s.cluster, machine_types);
  s.slowdowns = parse_slowdowns(root, s.cluster, machine_types, path);
  s.recovery = parse_recovery(root);
  s.network = parse_network(root);
  check_analytic_collectives(root, s);
  s.notes = std::move(applied.notes);
  return s;
}

std::string strategy_label(const Scenario& scenario) {
  std::string label = strategy::strategy_name(scenario.strategy.kind);
  if (strategy::describe(scenario.strategy.kind).serve) {
    label += scenario.strategy.mode == strategy::PsMode::kAsync ? " (async)" : " (sync)";
  }
  return label;
}

}  // namespace distlab::run
