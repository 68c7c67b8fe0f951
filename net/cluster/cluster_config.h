// Where the tasks of a real cluster listen, and which of them this process
// is. Two sources, as in TensorFlow: a cluster file with --role and --index
//
//   cluster:
//     chief: ["10.0.0.2:2222"]
//     worker: ["10.0.0.3:2222", "10.0.0.4:2222"]
//     ps: ["10.0.0.5:2222"]
//
// or the TF_CONFIG environment variable that Vertex AI, AI Platform and
// Kubernetes operators set on every node:
//
//   {"cluster": {"chief": [...], "worker": [...], "ps": [...]},
//    "task": {"type": "worker", "index": 0}}
//
// Addresses are kept as written; nothing here resolves a name or opens a
// socket, so the file can be checked on any machine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "strategy/task.h"

namespace distlab::net {

struct Endpoint {
  std::string host;  // "10.0.0.2", "worker-0.svc", "::1" (IPv6 without brackets)
  uint16_t port = 0;

  // "10.0.0.2:2222"; "[::1]:2222" for IPv6.
  std::string to_string() const;

  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

// "host:port", "[v6-address]:port". Hosts are IPv4 addresses, host names or
// bracketed IPv6 addresses; ports 1 to 65535. InputError naming the value.
Endpoint parse_endpoint(const std::string& text);

// One address per task, in task index order, per role.
struct ClusterAddresses {
  std::vector<Endpoint> chief;  // 0 or 1
  std::vector<Endpoint> worker;
  std::vector<Endpoint> ps;

  strategy::ClusterSpec spec() const;
  // std::out_of_range for a task the cluster does not have.
  const Endpoint& of(strategy::TaskId task) const;

  friend bool operator==(const ClusterAddresses&, const ClusterAddresses&) = default;
};

struct TaskAssignment {
  ClusterAddresses cluster;
  strategy::TaskId self;

  friend bool operator==(const TaskAssignment&, const TaskAssignment&) = default;
};

// Reads a cluster file (see above; TensorFlow's "master" is read as chief).
// Every error is a ConfigError with file, line, key and hint: unknown or
// unsupported roles (evaluator), bad endpoints, an endpoint given twice,
// more than one chief, a cluster with no task that trains.
ClusterAddresses load_cluster_file(const std::string& path);

// Reads TF_CONFIG's JSON text. "master" is read as chief; keys TensorFlow's
// launchers add ("environment", "job", task "trial", ...) are ignored.
// Errors are InputErrors "TF_CONFIG: json.path: problem (hint)".
TaskAssignment parse_tf_config(const std::string& json_text);

// The TF_CONFIG text that names `assignment` (for processes we start).
std::string tf_config_json(const TaskAssignment& assignment);

// Who this process is, from the command line and the environment:
// --cluster FILE with --role (chief, worker, ps; "master" too) and --index
// (may be left out for the chief), else TF_CONFIG (`tf_config_env`, null or
// blank when unset). Flags without --cluster, neither source, or both
// naming different tasks or addresses are InputErrors saying what to do.
TaskAssignment assignment_from(const std::optional<std::string>& cluster_file,
                               const std::optional<std::string>& role, std::optional<int> index,
                               const char* tf_config_env);

// Every task of `spec` on 127.0.0.1, `ports` in task ordinal order
// (ClusterSpec::tasks()); std::invalid_argument if the counts differ or a
// port is 0.
ClusterAddresses loopback_cluster(const strategy::ClusterSpec& spec,
                                  const std::vector<uint16_t>& ports);

// 127.0.0.0/8, ::1 (also bracketed or as ::ffff:127.x.y.z) and "localhost".
bool is_loopback(const std::string& host);

// InputError unless the addresses have exactly the scenario's tasks per
// role; the message names every role that differs.
void check_matches(const ClusterAddresses& addresses, const strategy::ClusterSpec& scenario_spec);

}  // namespace distlab::net
