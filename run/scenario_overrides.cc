#include "run/scenario_overrides.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <optional>

#include "common/error.h"
#include "strategy/strategies.h"

namespace distlab::run {
namespace {

std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = key.find('.', start);
    parts.push_back(key.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

void check_key(const std::string& key, const std::string& option) {
  if (key.empty()) throw InputError(option + ": the key is empty");
  for (const auto& part : split_key(key)) {
    if (part.empty()) {
      throw InputError(option + ": key '" + key +
                       "' has an empty part (write keys as section.key, e.g. training.epochs)");
    }
  }
}

std::string describe(const Override& o) {
  return o.unset ? "--unset " + o.key : "--set " + o.key + "=" + o.value;
}

// The node at parts[0..n) below `doc`, each of which exists.
ConfigNode node_at(const ConfigNode& doc, const std::vector<std::string>& parts, std::size_t n) {
  return n == 0 ? doc : node_at(doc, parts, n - 1).at(parts[n - 1]);
}

// An override's value: a plain scalar, or a YAML flow collection when it
// starts with '[' or '{' (--set 'faults=[{task: worker:1, at_step: 30}]').
YAML::Node parse_value(const Override& o, const std::string& origin) {
  if (o.value.empty() || (o.value.front() != '[' && o.value.front() != '{')) {
    return YAML::Node(o.value);
  }
  try {
    return YAML::Load(o.value);
  } catch (const YAML::Exception& e) {
    throw InputError(origin + ": not a YAML list or mapping: " + e.msg);
  }
}

// Every node of an override's value came from it, not from a file line.
// Each node once: a YAML alias (*a) names a node again, and may name a
// list from inside it ('[&a [*a]]'), which would recurse without end.
void add_origins(const YAML::Node& node, const std::string& origin,
                 std::vector<ConfigNode::Origin>& origins) {
  for (const ConfigNode::Origin& o : origins) {
    if (o.node.is(node)) return;
  }
  origins.push_back({node, origin});
  if (node.IsSequence()) {
    for (const auto& child : node) add_origins(child, origin, origins);
  } else if (node.IsMap()) {
    for (const auto& entry : node) {
      add_origins(entry.first, origin, origins);
      add_origins(entry.second, origin, origins);
    }
  }
}

// --unset: removes the key, which must be there.
void remove_key(const ConfigNode& doc, const Override& o) {
  const auto parts = split_key(o.key);
  YAML::Node map = doc.yaml();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const YAML::Node& view = map;
    const YAML::Node child = view.IsMap() ? view[parts[i]] : YAML::Node(YAML::NodeType::Undefined);
    if (!child.IsDefined()) {
      throw InputError(describe(o) + ": the scenario has no key " + o.key);
    }
    if (i + 1 == parts.size()) {
      map.remove(parts[i]);
    } else {
      map.reset(child);
    }
  }
}

// --set: replaces the value, or adds the key and the mappings on its path.
void set_key(const ConfigNode& doc, const Override& o, std::vector<ConfigNode::Origin>& origins) {
  const std::string origin = describe(o);
  const auto parts = split_key(o.key);
  YAML::Node map = doc.yaml();  // shares the tree; rebound with reset(), never assigned
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const YAML::Node& view = map;  // const lookups add nothing to the tree
    YAML::Node child = view.IsMap() ? view[parts[i]] : YAML::Node(YAML::NodeType::Undefined);
    if (i + 1 == parts.size()) {
      YAML::Node value = parse_value(o, origin);
      add_origins(value, origin, origins);
      if (child.IsDefined()) {
        child = value;  // replaces the value in the tree; the key keeps its line
      } else {
        YAML::Node key(parts[i]);
        map.force_insert(key, value);
        origins.push_back({key, origin});
      }
    } else if (!child.IsDefined()) {
      YAML::Node key(parts[i]);
      YAML::Node inner(YAML::NodeType::Map);
      map.force_insert(key, inner);
      origins.push_back({key, origin});
      origins.push_back({inner, origin});
      map.reset(inner);
    } else if (child.IsMap() || child.IsNull()) {
      map.reset(child);  // a null (`training:` alone) becomes a mapping on insertion
    } else {
      node_at(doc, parts, i + 1).fail("is not a mapping", origin + " cannot set a key inside it");
    }
  }
}

// ---- fitting the document to a strategy set on the command line ------------

// Whether an override sets or removes `key` itself, or a section that holds it.
bool set_by_user(const std::vector<Override>& overrides, const std::string& key) {
  return std::any_of(overrides.begin(), overrides.end(), [&](const Override& o) {
    return o.key == key || key.rfind(o.key + ".", 0) == 0;
  });
}

// The strategy an override names, if one does (strategy.name=X, or a whole
// strategy section).
std::optional<std::string> strategy_set_by_user(const std::vector<Override>& overrides) {
  std::optional<std::string> name;  // the last one given wins, as it does in the document
  for (const Override& o : overrides) {
    if (o.unset) continue;
    if (o.key == "strategy.name") name = o.value;
    if (o.key == "strategy" && !o.value.empty() && o.value.front() == '{') {
      try {
        const YAML::Node section = YAML::Load(o.value);
        name.reset();
        if (section.IsMap() && section["name"].IsScalar()) name = section["name"].Scalar();
      } catch (const YAML::Exception&) {
        name.reset();  // the scenario's checks report it
      }
    }
  }
  return name;
}

std::optional<int64_t> count_in(const YAML::Node& section, const std::string& key) {
  if (!section.IsMap() || !section[key].IsDefined()) return std::nullopt;
  try {
    return section[key].as<int64_t>();
  } catch (const YAML::Exception&) {
    return std::nullopt;  // not a count: the scenario's checks report it
  }
}

// Brings the document within the strategy's keys and cluster rule, leaving
// every value the user set alone; returns a note per change.
std::vector<std::string> fit_to_strategy(const ConfigNode& doc,
                                         const std::vector<Override>& overrides) {
  std::vector<std::string> notes;
  const std::optional<std::string> name = strategy_set_by_user(overrides);
  if (!name) return notes;
  const strategy::StrategyDescription* described = strategy::find_strategy(*name);
  if (!described) return notes;  // an unknown name: the scenario's checks list the names
  const std::string why = "for strategy " + *name;

  // A missing key gives yaml-cpp's invalid node, which only IsDefined() may
  // ask; the scenario's checks then name what is missing.
  YAML::Node section = doc.yaml()["strategy"];
  if (section.IsDefined() && section.IsMap()) {
    std::vector<std::string> dropped;
    for (const auto& entry : section) {
      // A key that is not a name ([a]: 1) stays for the scenario's checks
      // to refuse; as<std::string>() would throw yaml-cpp's BadConversion.
      if (!entry.first.IsScalar()) continue;
      const std::string key = entry.first.Scalar();
      if (key == "name" || set_by_user(overrides, "strategy." + key)) continue;
      if (std::find(described->keys.begin(), described->keys.end(), key) == described->keys.end()) {
        dropped.push_back(key);
      }
    }
    for (const std::string& key : dropped) {
      notes.push_back("note: strategy." + key + " dropped " + why + ", which takes no " + key);
      section.remove(key);
    }
  }

  YAML::Node cluster = doc.yaml()["cluster"];
  if (!cluster.IsDefined() || !cluster.IsMap()) return notes;
  const strategy::ClusterRule& rule = described->cluster;
  // Roles absent from the file have the scenario's defaults: one chief, no
  // workers, no parameter servers.
  struct RoleCount {
    const char* key;
    int64_t fallback;
    strategy::CountRange range;
    std::string noun;
  };
  const RoleCount roles[] = {{"chief", 1, rule.chief, "chief"},
                             {"workers", 0, rule.workers, "workers"},
                             {"ps", 0, rule.ps, "parameter servers"}};
  auto current = [&](const RoleCount& role) {
    return count_in(cluster, role.key).value_or(role.fallback);
  };
  auto change = [&](const RoleCount& role, int64_t to, const std::string& reason) {
    const std::string key = std::string("cluster.") + role.key;
    const bool present = cluster[role.key].IsDefined();
    if (to == 0) {
      notes.push_back("note: " + key + ": " + std::to_string(current(role)) + " dropped " + why +
                      ", " + reason);
    } else {
      notes.push_back("note: " + key + ": " + (present ? std::to_string(current(role)) : "none") +
                      " -> " + std::to_string(to) + " " + why + ", " + reason);
    }
    // A count equal to the default is left out, as a scenario would write it.
    if (to == role.fallback) {
      if (present) cluster.remove(role.key);
    } else {
      cluster[role.key] = to;
    }
  };
  for (const RoleCount& role : roles) {
    if (set_by_user(overrides, std::string("cluster.") + role.key)) continue;
    if (count_in(cluster, role.key) == std::nullopt && cluster[role.key].IsDefined()) continue;
    const int64_t count = current(role);
    if (role.range.contains(static_cast<int>(count))) continue;
    const int64_t to = count < role.range.min ? role.range.min : role.range.max;
    std::string needs = std::to_string(role.range.min) + " or more";
    if (role.range.min == role.range.max) {
      needs = "exactly " + std::to_string(role.range.min);
    } else if (role.range.max != strategy::kAnyNumber) {
      needs = std::to_string(role.range.min) + " to " + std::to_string(role.range.max);
    }
    const std::string reason = role.range.max == 0 ? "which has no " + role.noun
                                                   : "which needs " + needs + " " + role.noun;
    change(role, to, reason);
  }
  // One-replica strategies (local): the workers beyond the chief go.
  const RoleCount& workers = roles[1];
  const int64_t replicas = current(roles[0]) + current(workers);
  if (!rule.replicas.contains(static_cast<int>(replicas)) &&
      !set_by_user(overrides, "cluster.workers") && replicas > rule.replicas.max) {
    const int64_t to = std::max<int64_t>(rule.replicas.max - current(roles[0]), 0);
    change(workers, to,
           "which trains " + std::to_string(rule.replicas.max) +
               (rule.replicas.max == 1 ? " replica" : " replicas"));
  }
  return notes;
}

// A run's length is given once, in epochs or in steps: the one set on the
// command line replaces the other one of the file, with a note. (Both set
// there is still the scenario's error.)
std::vector<std::string> fit_training_length(const ConfigNode& doc,
                                             const std::vector<Override>& overrides) {
  std::vector<std::string> notes;
  YAML::Node training = doc.yaml()["training"];
  if (!training.IsDefined() || !training.IsMap()) return notes;  // see fit_to_strategy
  const auto given = [&](const std::string& key) {
    return std::any_of(overrides.begin(), overrides.end(),
                       [&](const Override& o) { return !o.unset && o.key == "training." + key; });
  };
  for (const auto& [set, replaced] : {std::pair<std::string, std::string>{"steps", "epochs"},
                                      std::pair<std::string, std::string>{"epochs", "steps"}}) {
    if (!given(set) || given(replaced) || !training[replaced].IsDefined()) continue;
    const std::string was =
        training[replaced].IsScalar() ? training[replaced].Scalar() : std::string("(not a count)");
    notes.push_back("note: training." + replaced + ": " + was + " dropped, training." + set +
                    " set on the command line replaces it");
    training.remove(replaced);
  }
  return notes;
}

}  // namespace

Override parse_override(const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos) {
    throw InputError("--set " + text + ": expected KEY=VALUE, e.g. --set training.epochs=2");
  }
  Override o{text.substr(0, eq), text.substr(eq + 1)};
  check_key(o.key, "--set " + text);
  return o;
}

Override parse_unset(const std::string& key) {
  check_key(key, "--unset " + key);
  return {.key = key, .value = "", .unset = true};
}

std::vector<std::string> override_arguments(const std::vector<Override>& overrides) {
  std::vector<std::string> args;
  for (const Override& o : overrides) {
    args.push_back(o.unset ? "--unset" : "--set");
    args.push_back(o.unset ? o.key : o.key + "=" + o.value);
  }
  return args;
}

AppliedOverrides apply_overrides(const ConfigNode& doc, const std::vector<Override>& overrides) {
  AppliedOverrides applied;
  if (overrides.empty()) return applied;
  if (!doc.is_map()) doc.fail("a scenario is a mapping of keys (model, cluster, strategy, ...)");
  for (const Override& o : overrides) check_key(o.key, describe(o));
  for (const Override& o : overrides) {
    if (o.unset) remove_key(doc, o);
  }
  for (const Override& o : overrides) {
    if (!o.unset) set_key(doc, o, applied.origins);
  }
  applied.notes = fit_to_strategy(doc, overrides);
  for (std::string& note : fit_training_length(doc, overrides)) applied.notes.push_back(note);
  return applied;
}

}  // namespace distlab::run
