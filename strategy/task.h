// Who is who in a training cluster, in TensorFlow's vocabulary: the chief
// (worker 0 of a synchronous group; it also evaluates and saves), the
// workers, and the parameter servers.
#pragma once

#include <string>
#include <vector>

namespace distlab::strategy {

enum class Role { kChief, kWorker, kPs };

struct TaskId {
  Role role = Role::kWorker;
  int index = 0;

  friend bool operator==(const TaskId&, const TaskId&) = default;
};

// "chief", "worker", "ps".
const char* role_name(Role role);
// "chief:0", "worker:3", "ps:1": how tasks are named in logs and outputs.
std::string task_name(TaskId task);

// The tasks of a cluster. Replicas (tasks that train) are the chief, if
// any, then the workers; replica rank r is their position in that order.
struct ClusterSpec {
  int chiefs = 1;  // 0 or 1
  int workers = 0;
  int ps = 0;

  int replicas() const { return chiefs + workers; }
  TaskId replica(int rank) const;
  int replica_rank(TaskId task) const;  // -1 for a PS
  // Every task: chief, workers, then parameter servers. Task ids are dense
  // integers in this order (see ordinal()), so backends can index arrays.
  std::vector<TaskId> tasks() const;
  int task_count() const { return chiefs + workers + ps; }
  // Inline: a simulated task asks for every message it sends and receives.
  int ordinal(TaskId task) const {
    switch (task.role) {
      case Role::kChief:
        return 0;
      case Role::kWorker:
        return chiefs + task.index;
      case Role::kPs:
        return chiefs + workers + task.index;
    }
    return -1;
  }
  TaskId task_at(int ordinal) const;
};

// Every replica in rank order: a synchronous strategy's ring. One list per
// cluster shape for the whole process, shared by every task that asks: a
// simulated cluster of 10,000 replicas would otherwise hold 10,000 copies
// of it (800 MB). Safe to call from several threads.
const std::vector<TaskId>& replicas_in_rank_order(const ClusterSpec& cluster);

}  // namespace distlab::strategy
