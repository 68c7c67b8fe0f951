// A scenario changed from the command line: --set KEY=VALUE and --unset KEY,
// applied to the YAML document before it is checked, so that a bad value is
// reported like a bad line of the file, naming the override.
//
// A change of strategy (--set strategy.name=allreduce on a parameter-server
// scenario) also fits the rest of the document to the new strategy: keys of
// the strategy section that it does not take are dropped, and cluster counts
// outside its rule are brought inside it (a parameter server added or
// removed, the workers of a one-replica strategy dropped), each with a
// one-line note. Likewise a run's length: training.steps set on the command
// line replaces the file's training.epochs, and the other way round, with
// a note. Values the user set explicitly are never adjusted: a conflict
// between them is still an error.
#pragma once

#include <string>
#include <vector>

#include "common/config_node.h"

namespace distlab::run {

// "training.epochs=2": a dotted key path into the YAML document and a value,
// as written after --set. The value is taken as one plain YAML scalar (text
// after the first '='; it may be empty), or as a YAML flow list or mapping
// when it starts with '[' or '{' ('faults=[{task: worker:1, at_step: 30}]');
// missing mappings along the path are created, and a path through a value
// that is not a mapping is an error. With `unset`, the key is removed (it
// must exist); removals apply before every --set, whatever the order given.
struct Override {
  std::string key;
  std::string value;
  bool unset = false;
};
Override parse_override(const std::string& text);  // --set KEY=VALUE; InputError when malformed
Override parse_unset(const std::string& key);      // --unset KEY

// The arguments that give these overrides to ./simulate or ./realnet again
// ("--set", "k=v", "--unset", "k2", ...).
std::vector<std::string> override_arguments(const std::vector<Override>& overrides);

struct AppliedOverrides {
  std::vector<ConfigNode::Origin> origins;  // the nodes they made, for error messages
  std::vector<std::string> notes;           // keys adjusted to a new strategy, one line each
};

// Applies the overrides to doc's tree in place.
AppliedOverrides apply_overrides(const ConfigNode& doc, const std::vector<Override>& overrides);

}  // namespace distlab::run
