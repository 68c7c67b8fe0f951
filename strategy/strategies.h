// One description per strategy: its name, the scenario keys it accepts, the
// clusters it can run on, how its tasks are placed on hosts, its entry
// points and its checkpoint hooks. Scenario parsing (run/scenario.cc), the
// simulator's platform (sim/platform.cc), the launcher and run_task() all
// read this table, so that a new strategy is one entry here plus its own
// file.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "strategy/checkpointing.h"
#include "strategy/config.h"

namespace distlab::strategy {

inline constexpr int kAnyNumber = std::numeric_limits<int>::max();

// How many tasks of one role a strategy accepts.
struct CountRange {
  int min = 0;
  int max = kAnyNumber;

  bool contains(int n) const { return n >= min && n <= max; }
};

// The clusters a strategy can run on, and how to write one that fits.
struct ClusterRule {
  CountRange chief{0, 1};
  CountRange workers;
  CountRange ps{0, 0};
  CountRange replicas{1, kAnyNumber};  // chief + workers
  const char* hint = "";
};

// Where the tasks of a run live.
enum class Placement {
  kHostPerTask,       // every task on a host of its role's machine type
  kDevicesOfOneHost,  // one host; its devices are the replicas (the chief
                      // and devices - 1 workers), linked by the host's bus
};

using TaskEntry = TaskOutcome (*)(Runtime& runtime, const TrainingSetup& setup);

struct StrategyDescription {
  StrategyKind kind;
  const char* name;               // as scenarios write it
  std::vector<std::string> keys;  // keys of the strategy section besides `name`
  ClusterRule cluster;
  Placement placement;
  TaskEntry train;            // the chief and the workers
  TaskEntry serve = nullptr;  // parameter servers, where the strategy has them
  CheckpointHooks checkpoint;
  // After a task of this role fails, whether it is restarted alone and
  // rejoins the run (asynchronous workers) rather than every task rolling
  // back to the last checkpoint. Null: always roll back.
  bool (*rejoins)(const StrategyConfig& config, Role role) = nullptr;
};

// Every strategy, in the order help texts list them.
const std::vector<StrategyDescription>& strategies();
const StrategyDescription& describe(StrategyKind kind);
// nullptr for a name no strategy has.
const StrategyDescription* find_strategy(const std::string& name);
std::vector<std::string> strategy_names();

}  // namespace distlab::strategy
