#include "strategy/task.h"

#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

namespace distlab::strategy {

const char* role_name(Role role) {
  switch (role) {
    case Role::kChief:
      return "chief";
    case Role::kWorker:
      return "worker";
    case Role::kPs:
      return "ps";
  }
  return "?";
}

std::string task_name(TaskId task) {
  std::string name = role_name(task.role);
  name += ':';
  name += std::to_string(task.index);
  return name;
}

TaskId ClusterSpec::replica(int rank) const {
  if (rank < 0 || rank >= replicas()) throw std::out_of_range("replica rank out of range");
  if (rank < chiefs) return {Role::kChief, 0};
  return {Role::kWorker, rank - chiefs};
}

int ClusterSpec::replica_rank(TaskId task) const {
  // Replicas come first among the tasks, in rank order.
  return task.role == Role::kPs ? -1 : ordinal(task);
}

std::vector<TaskId> ClusterSpec::tasks() const {
  std::vector<TaskId> all;
  all.reserve(task_count());
  for (int i = 0; i < task_count(); ++i) all.push_back(task_at(i));
  return all;
}

TaskId ClusterSpec::task_at(int ordinal) const {
  if (ordinal < 0 || ordinal >= task_count()) throw std::out_of_range("task ordinal out of range");
  if (ordinal < chiefs) return {Role::kChief, 0};
  if (ordinal < chiefs + workers) return {Role::kWorker, ordinal - chiefs};
  return {Role::kPs, ordinal - chiefs - workers};
}

const std::vector<TaskId>& replicas_in_rank_order(const ClusterSpec& cluster) {
  static std::mutex mutex;
  // Map nodes stay where they are: the references handed out stay valid.
  static std::map<std::pair<int, int>, std::vector<TaskId>> lists;
  const std::lock_guard lock(mutex);
  auto [list, made] = lists.try_emplace({cluster.chiefs, cluster.workers});
  if (made) {
    list->second.reserve(static_cast<std::size_t>(cluster.replicas()));
    for (int r = 0; r < cluster.replicas(); ++r) list->second.push_back(cluster.replica(r));
  }
  return list->second;
}

}  // namespace distlab::strategy
