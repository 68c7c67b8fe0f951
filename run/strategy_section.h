// A scenario's `strategy` section (docs/scenarios.md): which strategy and
// its keys, each refused where the strategy takes no such key, and the
// checks that need the cluster too.
#pragma once

#include "common/config_node.h"
#include "run/scenario.h"
#include "strategy/config.h"

namespace distlab::run {

// The section under `root` (the scenario's top); throws ConfigError naming
// the file, line and key of a value it refuses.
strategy::StrategyConfig parse_strategy(const ConfigNode& root);

// Backup workers: fewer than the cluster's replicas, the rest backups.
void check_replicas_to_aggregate(const ConfigNode& root, const ClusterConfig& cluster,
                                 const strategy::StrategyConfig& strategy);

}  // namespace distlab::run
