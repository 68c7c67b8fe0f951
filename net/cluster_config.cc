#include "net/cluster_config.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string_view>

#include "common/config_node.h"
#include "common/error.h"

namespace distlab::realnet {
namespace {

using strategy::ClusterSpec;
using strategy::Role;
using strategy::TaskId;
using Json = nlohmann::json;

constexpr Role kRoles[] = {Role::kChief, Role::kWorker, Role::kPs};
const char* const kEndpointHint = "write host:port, e.g. 10.0.0.2:2222, or \"[::1]:2222\" for IPv6";

// What is wrong with a value, apart from where it is: each reader adds its
// own place (file, line and key; a JSON path).
struct Problem {
  std::string what;
  std::string hint;
};

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool all_of_chars(const std::string& text, const char* allowed_punctuation) {
  return std::all_of(text.begin(), text.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view(allowed_punctuation).find(c) != std::string_view::npos;
  });
}

bool is_ipv4(const std::string& text) {
  in_addr address{};
  return inet_pton(AF_INET, text.c_str(), &address) == 1;
}

// An IPv6 address, optionally with a zone ("fe80::1%eth0"); `bytes` gets
// the address.
bool is_ipv6(const std::string& text, in6_addr* bytes = nullptr) {
  const std::size_t percent = text.find('%');
  if (percent != std::string::npos) {
    const std::string zone = text.substr(percent + 1);
    if (zone.empty() || !all_of_chars(zone, "-_.")) return false;
  }
  in6_addr address{};
  if (inet_pton(AF_INET6, text.substr(0, percent).c_str(), &address) != 1) return false;
  if (bytes) *bytes = address;
  return true;
}

// RFC 1123 names, plus '_' (some DNS names have it): dot-separated labels of
// 1 to 63 letters, digits, '-' and '_', not starting or ending with '-'.
bool is_host_name(const std::string& name) {
  std::string text = name;
  if (!text.empty() && text.back() == '.') text.pop_back();  // fully qualified
  if (text.empty() || text.size() > 253 || !all_of_chars(text, "-_.")) return false;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('.', start);
    if (end == std::string::npos) end = text.size();
    const std::size_t length = end - start;
    if (length == 0 || length > 63 || text[start] == '-' || text[end - 1] == '-') return false;
    start = end + 1;
  }
  return true;
}

std::optional<Endpoint> try_parse_endpoint(const std::string& text, Problem& problem) {
  auto refuse = [&](const std::string& what, const std::string& hint = kEndpointHint) {
    problem = {"'" + text + "': " + what, hint};
    return std::nullopt;
  };
  if (text.empty()) return refuse("an empty address");
  Endpoint endpoint;
  std::string port_text;
  if (text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string::npos) return refuse("no ']' after the IPv6 address");
    endpoint.host = text.substr(1, close - 1);
    if (!is_ipv6(endpoint.host)) return refuse("'" + endpoint.host + "' is not an IPv6 address");
    if (close + 1 == text.size()) return refuse("no port");
    if (text[close + 1] != ':') return refuse("expected ':' and a port after ']'");
    port_text = text.substr(close + 2);
  } else {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string::npos) return refuse("no port");
    if (text.find(':') != colon) {
      return refuse("an IPv6 address needs brackets",
                    "write \"[" + text.substr(0, colon) + "]:" + text.substr(colon + 1) + "\"");
    }
    endpoint.host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    if (endpoint.host.empty()) return refuse("no host");
    const bool numeric = std::all_of(endpoint.host.begin(), endpoint.host.end(), [](char c) {
      return c == '.' || std::isdigit(static_cast<unsigned char>(c));
    });
    if (numeric && !is_ipv4(endpoint.host)) {
      return refuse("'" + endpoint.host + "' is not an IPv4 address",
                    "four numbers from 0 to 255, e.g. 10.0.0.2");
    }
    if (!is_ipv4(endpoint.host) && !is_host_name(endpoint.host)) {
      return refuse("'" + endpoint.host + "' is not a host name",
                    "host names are labels of letters, digits and '-', joined by '.'");
    }
  }
  if (port_text.empty()) return refuse("no port");
  const bool digits = std::all_of(port_text.begin(), port_text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
  if (!digits) return refuse("port '" + port_text + "' is not a number", kEndpointHint);
  const long port = port_text.size() > 6 ? 1'000'000 : std::stol(port_text);
  if (port < 1 || port > 65535) {
    return refuse("port " + port_text + " is out of range", "ports are 1 to 65535");
  }
  endpoint.port = static_cast<uint16_t>(port);
  return endpoint;
}

// Two spellings of one address compare equal: host names in any case, IPv6
// in any of its forms.
std::string canonical(const Endpoint& endpoint) {
  in6_addr bytes{};
  std::string host = lower(endpoint.host);
  if (is_ipv6(host, &bytes) && host.find('%') == std::string::npos) {
    char text[INET6_ADDRSTRLEN] = {};
    if (inet_ntop(AF_INET6, &bytes, text, sizeof text)) host = text;
  }
  return Endpoint{host, endpoint.port}.to_string();
}

const char* plural(Role role) {
  switch (role) {
    case Role::kChief:
      return "chiefs";
    case Role::kWorker:
      return "workers";
    case Role::kPs:
      return "ps";
  }
  return "?";
}

// "no workers", "1 worker", "2 workers".
std::string count_text(std::size_t n, Role role) {
  if (n == 0) return std::string("no ") + plural(role);
  if (n == 1) return std::string("1 ") + strategy::role_name(role);
  return std::to_string(n) + " " + plural(role);
}

// The list of `role` in a cluster, const or not.
template <typename Cluster>
auto& list_of(Cluster& cluster, Role role) {
  switch (role) {
    case Role::kChief:
      return cluster.chief;
    case Role::kWorker:
      return cluster.worker;
    case Role::kPs:
      break;
  }
  return cluster.ps;
}

// TensorFlow's role names; "master" is its old name for the chief.
std::optional<Role> role_from_name(const std::string& name) {
  if (name == "chief" || name == "master") return Role::kChief;
  if (name == "worker") return Role::kWorker;
  if (name == "ps") return Role::kPs;
  return std::nullopt;
}

Problem unknown_role(const std::string& name) {
  if (name == "evaluator") {
    return {"evaluator tasks are not supported",
            "in distlab the chief evaluates; remove the evaluator"};
  }
  const std::string guess = closest_match(name, {"chief", "worker", "ps", "master"});
  return {"unknown role '" + name + "'",
          guess.empty() ? "roles: chief, worker, ps" : "did you mean '" + guess + "'?"};
}

// Where a problem of a whole cluster lies: the cluster itself (empty role
// key), a role's list (index -1) or one entry.
struct ClusterIssue {
  std::string role_key;  // as written: "master" for a chief given as master
  int index = -1;
  Problem problem;
};

std::optional<ClusterIssue> check_cluster(const ClusterAddresses& cluster,
                                          const std::string& chief_key) {
  const ClusterSpec spec = cluster.spec();
  if (spec.task_count() == 0) {
    return ClusterIssue{"",
                        -1,
                        {"the cluster lists no tasks",
                         "list addresses under chief, worker and ps, e.g. "
                         "chief: [\"10.0.0.2:2222\"]"}};
  }
  if (cluster.chief.size() > 1) {
    return ClusterIssue{
        chief_key,
        1,
        {"a second chief: a cluster has at most one", "list the other tasks under worker"}};
  }
  std::map<std::string, TaskId> seen;
  for (const Role role : kRoles) {
    const auto& list = list_of(cluster, role);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const TaskId task{role, static_cast<int>(i)};
      const auto [it, inserted] = seen.emplace(canonical(list[i]), task);
      if (inserted) continue;
      return ClusterIssue{role == Role::kChief ? chief_key : strategy::role_name(role),
                          static_cast<int>(i),
                          {"'" + list[i].to_string() + "' is given twice: it is also " +
                               strategy::task_name(it->second) + "'s address",
                           "every task needs its own host:port"}};
    }
  }
  if (spec.replicas() == 0) {
    return ClusterIssue{
        "",
        -1,
        {"the cluster has parameter servers only: nothing would train", "add a chief or a worker"}};
  }
  return std::nullopt;
}

// --- The cluster file --------------------------------------------------------

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

// --- TF_CONFIG ---------------------------------------------------------------

[[noreturn]] void tf_fail(const std::string& path, const std::string& problem,
                          const std::string& hint = "") {
  std::string message = "TF_CONFIG: ";
  if (!path.empty()) message += path + ": ";
  message += problem;
  if (!hint.empty()) message += " (" + hint + ")";
  throw InputError(message);
}

std::string describe(const Json& value) {
  if (value.is_object()) return "an object";
  if (value.is_array()) return "a list";
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

// nlohmann::json keeps the last of two equal keys silently; a cluster with
// "worker" twice would lose tasks without a word, so they are refused.
Json parse_json(const std::string& text) {
  struct Object {
    std::set<std::string> keys;
    std::string key;  // the latest key read in this object
  };
  std::vector<Object> objects;
  std::string duplicate;  // path of the first key given twice
  auto watch = [&](int /*depth*/, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) {
      objects.emplace_back();
    } else if (event == Json::parse_event_t::object_end && !objects.empty()) {
      objects.pop_back();
    } else if (event == Json::parse_event_t::key && !objects.empty()) {
      Object& object = objects.back();
      object.key = parsed.get<std::string>();
      if (!object.keys.insert(object.key).second && duplicate.empty()) {
        for (const Object& o : objects) duplicate += (duplicate.empty() ? "" : ".") + o.key;
      }
    }
    return true;
  };
  Json doc;
  try {
    doc = Json::parse(text, watch);
  } catch (const Json::parse_error& e) {
    std::string what = e.what();  // "[json.exception.parse_error.101] parse error at ..."
    const std::size_t bracket = what.find("] ");
    if (what.front() == '[' && bracket != std::string::npos) what = what.substr(bracket + 2);
    tf_fail("", "not valid JSON: " + what);
  }
  if (!duplicate.empty()) tf_fail(duplicate, "key given twice");
  return doc;
}

ClusterAddresses tf_cluster(const Json& doc) {
  const auto found = doc.find("cluster");
  const std::string example = "\"cluster\": {\"chief\": [\"host:port\"], \"worker\": [...]}";
  if (found == doc.end()) tf_fail("cluster", "missing", "TF_CONFIG lists the tasks: " + example);
  if (!found->is_object()) {
    tf_fail("cluster", "expected an object, got " + describe(*found), example);
  }
  if (found->contains("chief") && found->contains("master")) {
    tf_fail("cluster.master",
            "both chief and master are given (master is TensorFlow's old name for chief)",
            "keep one of them");
  }
  ClusterAddresses cluster;
  const std::string chief_key = found->contains("master") ? "master" : "chief";
  for (const auto& [name, list] : found->items()) {
    const std::string path = "cluster." + name;
    const auto role = role_from_name(name);
    if (!role) {
      const Problem problem = unknown_role(name);
      tf_fail(path, problem.what, problem.hint);
    }
    if (!list.is_array()) {
      tf_fail(path, "expected a list of \"host:port\" strings, got " + describe(list),
              "\"" + name + "\": [\"10.0.0.2:2222\"]");
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string entry_path = path + "[" + std::to_string(i) + "]";
      if (!list[i].is_string()) {
        tf_fail(entry_path, "expected a \"host:port\" string, got " + describe(list[i]));
      }
      Problem problem;
      const auto endpoint = try_parse_endpoint(list[i].get<std::string>(), problem);
      if (!endpoint) tf_fail(entry_path, problem.what, problem.hint);
      list_of(cluster, *role).push_back(*endpoint);
    }
  }
  if (const auto issue = check_cluster(cluster, chief_key)) {
    std::string path = "cluster";
    if (!issue->role_key.empty()) path += "." + issue->role_key;
    if (issue->index >= 0) path += "[" + std::to_string(issue->index) + "]";
    tf_fail(path, issue->problem.what, issue->problem.hint);
  }
  return cluster;
}

TaskId tf_task(const Json& doc, const ClusterAddresses& cluster) {
  const std::string example = "\"task\": {\"type\": \"worker\", \"index\": 0}";
  const auto task = doc.find("task");
  if (task == doc.end())
    tf_fail("task", "missing", "TF_CONFIG names this process's task: " + example);
  if (!task->is_object()) tf_fail("task", "expected an object, got " + describe(*task), example);

  const auto type = task->find("type");
  if (type == task->end()) tf_fail("task", "missing \"type\"", example);
  if (!type->is_string()) tf_fail("task.type", "expected a role name, got " + describe(*type));
  const std::string name = type->get<std::string>();
  const auto role = role_from_name(name);
  if (!role) {
    const Problem problem = unknown_role(name);
    tf_fail("task.type", problem.what, problem.hint);
  }

  const auto index = task->find("index");
  if (index == task->end()) tf_fail("task", "missing \"index\"", example);
  // nlohmann::json reads 0, 1, ... as unsigned and -1 as signed.
  if (!index->is_number_unsigned()) {
    tf_fail("task.index", "expected a whole number from 0, got " + describe(*index));
  }
  const std::size_t count = list_of(cluster, *role).size();
  if (count == 0) {
    tf_fail("task.type", "'" + name + "', but the cluster has " + count_text(0, *role),
            "add them to \"cluster\", or fix the task's type");
  }
  const uint64_t i = index->get<uint64_t>();
  if (i >= count) {
    tf_fail("task.index",
            std::to_string(i) + " is out of range, the cluster has " + count_text(count, *role),
            "indices start at 0");
  }
  return {*role, static_cast<int>(i)};
}

bool is_blank(const char* text) {
  if (!text) return true;
  for (; *text; ++text) {
    if (!std::isspace(static_cast<unsigned char>(*text))) return false;
  }
  return true;
}

// The first difference between two clusters, for an error message.
std::string difference(const ClusterAddresses& a, const std::string& a_name,
                       const ClusterAddresses& b, const std::string& b_name) {
  for (const Role role : kRoles) {
    const auto& list_a = list_of(a, role);
    const auto& list_b = list_of(b, role);
    if (list_a.size() != list_b.size()) {
      return a_name + " lists " + count_text(list_a.size(), role) + ", " + b_name + " " +
             count_text(list_b.size(), role);
    }
    for (std::size_t i = 0; i < list_a.size(); ++i) {
      if (canonical(list_a[i]) == canonical(list_b[i])) continue;
      return strategy::task_name({role, static_cast<int>(i)}) + " is " + list_a[i].to_string() +
             " in " + a_name + ", " + list_b[i].to_string() + " in " + b_name;
    }
  }
  return "";
}

}  // namespace

std::string Endpoint::to_string() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Endpoint parse_endpoint(const std::string& text) {
  Problem problem;
  const auto endpoint = try_parse_endpoint(text, problem);
  if (!endpoint) throw InputError(problem.what + " (" + problem.hint + ")");
  return *endpoint;
}

ClusterSpec ClusterAddresses::spec() const {
  ClusterSpec spec;
  spec.chiefs = static_cast<int>(chief.size());
  spec.workers = static_cast<int>(worker.size());
  spec.ps = static_cast<int>(ps.size());
  return spec;
}

const Endpoint& ClusterAddresses::of(TaskId task) const {
  const auto& list = list_of(*this, task.role);
  if (task.index < 0 || static_cast<std::size_t>(task.index) >= list.size()) {
    throw std::out_of_range("the cluster has no task " + strategy::task_name(task));
  }
  return list[static_cast<std::size_t>(task.index)];
}

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

TaskAssignment parse_tf_config(const std::string& json_text) {
  if (is_blank(json_text.c_str())) tf_fail("", "empty");
  const Json doc = parse_json(json_text);
  if (!doc.is_object()) {
    tf_fail("", "expected a JSON object with \"cluster\" and \"task\", got " + describe(doc));
  }
  TaskAssignment assignment;
  assignment.cluster = tf_cluster(doc);
  assignment.self = tf_task(doc, assignment.cluster);
  return assignment;
}

std::string tf_config_json(const TaskAssignment& assignment) {
  Json cluster = Json::object();
  for (const Role role : kRoles) {
    const auto& list = list_of(assignment.cluster, role);
    if (list.empty()) continue;
    Json& addresses = cluster[strategy::role_name(role)] = Json::array();
    for (const Endpoint& e : list) addresses.push_back(e.to_string());
  }
  const Json doc = {
      {"cluster", cluster},
      {"task",
       {{"type", strategy::role_name(assignment.self.role)}, {"index", assignment.self.index}}}};
  return doc.dump();
}

TaskAssignment assignment_from(const std::optional<std::string>& cluster_file,
                               const std::optional<std::string>& role, std::optional<int> index,
                               const char* tf_config_env) {
  const bool has_env = !is_blank(tf_config_env);
  if (!cluster_file) {
    if (role || index) {
      throw InputError(std::string(role ? "--role" : "--index") +
                       " needs --cluster FILE (with TF_CONFIG set, leave out --role and "
                       "--index: TF_CONFIG names the task)");
    }
    if (!has_env) {
      throw InputError(
          "no cluster given: pass --cluster FILE with --role and --index, or set TF_CONFIG "
          "(to run every task on this machine, use --launch SCENARIO)");
    }
    return parse_tf_config(tf_config_env);
  }

  const std::string& file = *cluster_file;
  if (!role) throw InputError("--cluster " + file + " needs --role (chief, worker or ps)");
  const auto parsed_role = role_from_name(*role);
  if (!parsed_role) {
    const Problem problem = unknown_role(*role);
    throw InputError("--role " + *role + ": " + problem.what + " (" + problem.hint + ")");
  }
  TaskAssignment assignment;
  assignment.cluster = load_cluster_file(file);
  const std::size_t count = list_of(assignment.cluster, *parsed_role).size();
  if (!index && *parsed_role != Role::kChief) {
    throw InputError("--role " + *role + " needs --index (" + file + " lists " +
                     count_text(count, *parsed_role) + ")");
  }
  const int i = index.value_or(0);
  if (i < 0) throw InputError("--index " + std::to_string(i) + ": must be 0 or more");
  if (count == 0) {
    throw InputError("--role " + *role + ": " + file + " lists " + count_text(0, *parsed_role));
  }
  if (static_cast<std::size_t>(i) >= count) {
    throw InputError("--index " + std::to_string(i) + " is out of range: " + file + " lists " +
                     count_text(count, *parsed_role) + " (indices start at 0)");
  }
  assignment.self = {*parsed_role, i};

  // TF_CONFIG too: the two must name the same task in the same cluster, or
  // which of them wins would be a guess.
  if (has_env) {
    const std::string remedy = "unset TF_CONFIG, or leave out --cluster, --role and --index";
    TaskAssignment from_env;
    try {
      from_env = parse_tf_config(tf_config_env);
    } catch (const InputError& e) {
      throw InputError(std::string(e.what()) +
                       "; TF_CONFIG is set as well as --cluster: " + remedy);
    }
    if (from_env.self != assignment.self) {
      throw InputError("--role and --index say " + strategy::task_name(assignment.self) +
                       ", TF_CONFIG says " + strategy::task_name(from_env.self) + ": " + remedy);
    }
    const std::string diff = difference(assignment.cluster, file, from_env.cluster, "TF_CONFIG");
    if (!diff.empty()) {
      throw InputError("--cluster and TF_CONFIG list different clusters: " + diff + "; " + remedy);
    }
  }
  return assignment;
}

ClusterAddresses loopback_cluster(const ClusterSpec& spec, const std::vector<uint16_t>& ports) {
  if (ports.size() != static_cast<std::size_t>(spec.task_count())) {
    throw std::invalid_argument("loopback_cluster: " + std::to_string(ports.size()) +
                                " ports for " + std::to_string(spec.task_count()) + " tasks");
  }
  ClusterAddresses cluster;
  for (const TaskId task : spec.tasks()) {
    const uint16_t port = ports[static_cast<std::size_t>(spec.ordinal(task))];
    if (port == 0)
      throw std::invalid_argument("loopback_cluster: port 0 for " + strategy::task_name(task));
    list_of(cluster, task.role).push_back({"127.0.0.1", port});
  }
  return cluster;
}

bool is_loopback(const std::string& host) {
  std::string h = lower(host);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  if (h == "localhost" || h == "localhost.") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (!is_ipv6(h, &v6)) return false;
  const unsigned char* b = v6.s6_addr;
  const bool first_ten_zero = std::all_of(b, b + 10, [](unsigned char x) { return x == 0; });
  const bool v4_mapped = first_ten_zero && b[10] == 0xff && b[11] == 0xff;
  const bool is_one = first_ten_zero && b[10] == 0 && b[11] == 0 && b[12] == 0 && b[13] == 0 &&
                      b[14] == 0 && b[15] == 1;
  return is_one || (v4_mapped && b[12] == 127);
}

void check_matches(const ClusterAddresses& addresses, const ClusterSpec& scenario_spec) {
  std::string differences;
  std::string first_key;
  const std::pair<Role, const char*> keys[] = {{Role::kChief, "cluster.chief"},
                                               {Role::kWorker, "cluster.workers"},
                                               {Role::kPs, "cluster.ps"}};
  for (const auto& [role, key] : keys) {
    const int listed = static_cast<int>(list_of(addresses, role).size());
    const int wanted = role == Role::kChief    ? scenario_spec.chiefs
                       : role == Role::kWorker ? scenario_spec.workers
                                               : scenario_spec.ps;
    if (listed == wanted) continue;
    if (first_key.empty()) first_key = std::string(key) + "=" + std::to_string(listed);
    differences += differences.empty() ? "" : "; ";
    differences += std::string(plural(role)) + ": the cluster lists " + std::to_string(listed) +
                   ", the scenario has " + std::to_string(wanted);
  }
  if (differences.empty()) return;
  throw InputError("the cluster does not match the scenario: " + differences +
                   " (list one address per task of the scenario, or change the scenario's "
                   "cluster, e.g. --set " +
                   first_key + ")");
}

}  // namespace distlab::realnet
