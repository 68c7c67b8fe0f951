#include "net/cluster/cluster_config.h"

#include <arpa/inet.h>

#include <algorithm>
#include <stdexcept>

#include "common/error.h"
#include "net/cluster/cluster_rules.h"

namespace distlab::net {
namespace {

using namespace rules;
using strategy::ClusterSpec;
using strategy::TaskId;

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

}  // namespace distlab::net
