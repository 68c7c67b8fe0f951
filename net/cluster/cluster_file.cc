// The cluster file of ./realnet --cluster (a YAML mapping of roles to
// address lists), read with file, line and key in every error.
#include <fstream>
#include <set>

#include "common/config_node.h"
#include "common/error.h"
#include "net/cluster/cluster_config.h"
#include "net/cluster/cluster_rules.h"

namespace distlab::net {
namespace {

using namespace rules;

std::string describe(const YAML::Node& node) {
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsMap()) return "a mapping";
  if (node.IsSequence()) return "a list";
  return "nothing";
}

// yaml-cpp reads an unquoted `- [::1]:2222` as the start of a flow list and
// stops with a syntax error; the line of the error tells whether that is why.
bool unquoted_ipv6_on_line(const std::string& path, int line_number) {
  std::ifstream in(path);
  std::string line;
  for (int i = 0; i < line_number && std::getline(in, line); ++i) {
  }
  for (std::size_t open = line.find('['); open != std::string::npos;
       open = line.find('[', open + 1)) {
    if (open > 0 && (line[open - 1] == '"' || line[open - 1] == '\'')) continue;
    const std::size_t close = line.find(']', open);
    if (close == std::string::npos || close + 1 >= line.size() || line[close + 1] != ':') continue;
    if (is_ipv6(line.substr(open + 1, close - open - 1))) return true;
  }
  return false;
}

ConfigNode load_yaml(const std::string& path) {
  try {
    return ConfigNode::load_file(path);
  } catch (const ConfigError& e) {
    if (e.line() <= 0 || !unquoted_ipv6_on_line(path, e.line())) throw;
    std::string problem = e.what();
    const std::string prefix = e.path() + ":" + std::to_string(e.line()) + ": ";
    if (problem.rfind(prefix, 0) == 0) problem = problem.substr(prefix.size());
    throw ConfigError(e.path(), e.line(), e.key(), problem, "quote IPv6 addresses: \"[::1]:2222\"");
  }
}

// The line of `key` in the mapping `parent`.
int key_line(const ConfigNode& parent, const std::string& key) {
  for (const auto& kv : parent.yaml()) {
    if (kv.first.IsScalar() && kv.first.Scalar() == key && !kv.first.Mark().is_null()) {
      return kv.first.Mark().line + 1;
    }
  }
  return parent.line();
}

[[noreturn]] void fail_at_key(const ConfigNode& parent, const YAML::Node& key_node,
                              const std::string& key, const Problem& problem) {
  const YAML::Mark mark = key_node.Mark();
  throw ConfigError(parent.file(), mark.is_null() ? parent.line() : mark.line + 1,
                    parent.key() + "." + key, problem.what, problem.hint);
}

void read_role_list(const ConfigNode& list, const std::string& key,
                    std::vector<Endpoint>& endpoints) {
  if (list.is_null()) return;  // `ps:` alone: no task of this role
  if (!list.is_sequence()) {
    list.fail("expected a list of addresses, got " + describe(list.yaml()),
              "write " + key + ": [\"10.0.0.2:2222\"]");
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const ConfigNode entry = list[i];
    if (!entry.yaml().IsScalar()) {
      entry.fail("expected an address host:port, got " + describe(entry.yaml()),
                 "one text host:port per task; quote IPv6 addresses: \"[::1]:2222\"");
    }
    Problem problem;
    const auto endpoint = try_parse_endpoint(entry.as_string(), problem);
    if (!endpoint) entry.fail(problem.what, problem.hint);
    endpoints.push_back(*endpoint);
  }
}

}  // namespace

ClusterAddresses load_cluster_file(const std::string& path) {
  const ConfigNode root = load_yaml(path);
  if (!root.is_map()) {
    root.fail("expected a mapping with the key cluster, got " + describe(root.yaml()),
              "cluster: {chief: [\"10.0.0.2:2222\"], worker: [...], ps: [...]}");
  }
  if (root.has("task")) {
    root.at("task").fail("a cluster file names no task",
                         "this process's task comes from --role and --index");
  }
  root.allow_only({"cluster"});
  const ConfigNode node = root.at("cluster");
  if (!node.is_map() && !node.is_null()) {
    node.fail("expected a mapping of roles to address lists, got " + describe(node.yaml()),
              "cluster: {chief: [\"10.0.0.2:2222\"], worker: [...], ps: [...]}");
  }

  ClusterAddresses cluster;
  std::string chief_key = "chief";
  std::set<std::string> seen;
  if (node.is_map()) {
    for (const auto& kv : node.yaml()) {
      if (!kv.first.IsScalar()) {
        fail_at_key(node, kv.first, "?", {"a role must be a plain name", "chief, worker or ps"});
      }
      const std::string name = kv.first.Scalar();
      if (!seen.insert(name).second) fail_at_key(node, kv.first, name, {"role given twice", ""});
      const auto role = role_from_name(name);
      if (!role) fail_at_key(node, kv.first, name, unknown_role(name));
      if (*role == Role::kChief) {
        if (seen.count("chief") + seen.count("master") > 1) {
          fail_at_key(node, kv.first, name,
                      {"both chief and master are given (master is TensorFlow's old name for "
                       "chief)",
                       "keep one of them"});
        }
        chief_key = name;
      }
      read_role_list(node.at(name), name, list_of(cluster, *role));
    }
  }

  if (const auto issue = check_cluster(cluster, chief_key)) {
    if (issue->role_key.empty()) {  // the cluster as a whole: point at `cluster:`
      throw ConfigError(node.file(), key_line(root, "cluster"), node.key(), issue->problem.what,
                        issue->problem.hint);
    }
    const ConfigNode list = node.at(issue->role_key);
    if (issue->index < 0) list.fail(issue->problem.what, issue->problem.hint);
    list[static_cast<std::size_t>(issue->index)].fail(issue->problem.what, issue->problem.hint);
  }
  return cluster;
}

}  // namespace distlab::net
