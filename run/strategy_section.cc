#include "run/strategy_section.h"

#include <algorithm>
#include <string>
#include <vector>

#include "run/scenario_limits.h"
#include "strategy/gradient_wire.h"
#include "strategy/strategies.h"

namespace distlab::run {
namespace {

using strategy::PsMode;

// The strategies that take a key of the strategy section, for hints.
std::string strategies_taking(const std::string& key) {
  std::string names;
  for (const auto& d : strategy::strategies()) {
    if (std::find(d.keys.begin(), d.keys.end(), key) == d.keys.end()) continue;
    names += (names.empty() ? "" : " and ") + std::string(d.name);
  }
  return names;
}

}  // namespace

strategy::StrategyConfig parse_strategy(const ConfigNode& root) {
  const ConfigNode node = root.at("strategy");
  const std::vector<std::string> keys = {
      "mode",           "bucket_bytes",    "segment_bytes",         "devices",
      "gradient_dtype", "staleness_bound", "replicas_to_aggregate", "overlap"};
  std::vector<std::string> allowed = keys;
  allowed.push_back("name");
  node.allow_only(allowed);
  const std::string name = node.at("name").as_choice(strategy::strategy_names());
  const strategy::StrategyDescription& described = *strategy::find_strategy(name);
  for (const std::string& key : keys) {
    const auto value = node.find(key);
    if (!value ||
        std::find(described.keys.begin(), described.keys.end(), key) != described.keys.end()) {
      continue;
    }
    value->fail("strategy " + name + " takes no " + key, key + " is for " + strategies_taking(key));
  }
  strategy::StrategyConfig config;
  config.kind = described.kind;
  if (auto mode = node.find("mode")) {
    config.mode = mode->as_choice({"async", "sync"}) == "sync" ? PsMode::kSync : PsMode::kAsync;
  }
  if (auto bucket = node.find("bucket_bytes")) {
    // 1 to 3 bytes would hold no float: the gradient would go whole, as 0
    // asks, without a word.
    config.bucket_bytes = bucket->as_int(0, kMaxCount);
    if (config.bucket_bytes > 0 && config.bucket_bytes < static_cast<int64_t>(sizeof(float))) {
      bucket->fail("a bucket must hold at least one float",
                   "4 bytes or more, or 0 for one bucket: the whole gradient");
    }
  }
  if (auto segment = node.find("segment_bytes")) {
    config.segment_bytes = segment->as_int(0, kMaxCount);
    if (config.segment_bytes > 0 && config.segment_bytes < static_cast<int64_t>(sizeof(float))) {
      segment->fail("a segment must hold at least one float",
                    "4 bytes or more, or 0 for whole chunks");
    }
  }
  if (auto bound = node.find("staleness_bound")) {
    config.staleness_bound = bound->as_int(-1000000, kMaxCount);
    if (config.staleness_bound < 0) {
      bound->fail("a bound is 0 steps or more", "leave the key out for no bound");
    }
    if (config.mode != PsMode::kAsync) {
      bound->fail("only an asynchronous parameter server has a staleness bound",
                  "set mode: async, or leave the key out");
    }
  }
  if (auto aggregate = node.find("replicas_to_aggregate")) {
    // Checked against the cluster's replicas in check_replicas_to_aggregate.
    config.replicas_to_aggregate = static_cast<int>(aggregate->as_int(1, kMaxTasks + 1));
    if (config.mode != PsMode::kSync) {
      aggregate->fail("only a synchronous parameter server aggregates a subset of the replicas",
                      "set mode: sync, or leave the key out");
    }
  }
  if (auto overlap = node.find("overlap")) config.overlap = overlap->as_bool();
  if (auto devices = node.find("devices")) {
    config.devices = static_cast<int>(devices->as_int(0, kMaxDevices));
  }
  if (auto dtype = node.find("gradient_dtype")) {
    config.gradient_type =
        strategy::gradient_type_named(dtype->as_choice(strategy::gradient_type_names()));
  }
  return config;
}

void check_replicas_to_aggregate(const ConfigNode& root, const ClusterConfig& cluster,
                                 const strategy::StrategyConfig& strategy) {
  const int replicas = cluster.spec.replicas();
  if (strategy.replicas_to_aggregate <= replicas) return;
  root.at("strategy")
      .at("replicas_to_aggregate")
      .fail("a step cannot aggregate " + std::to_string(strategy.replicas_to_aggregate) +
                " of the cluster's " + std::to_string(replicas) + " replicas",
            "1 to " + std::to_string(replicas) + "; the replicas beyond it are backups");
}

}  // namespace distlab::run
