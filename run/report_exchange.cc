#include "run/report_exchange.h"

#include <optional>
#include <utility>

#include "common/error.h"

namespace distlab::run {

bool gathers_reports(const strategy::Runtime& runtime) {
  return runtime.cluster().replica_rank(runtime.self()) == 0;
}

void send_task_report(strategy::Runtime& runtime, const TaskReport& report) {
  runtime.send(runtime.cluster().replica(0),
               strategy::text_message(strategy::Tag::kTaskReport, task_report_json(report)));
}

GatheredReports gather_task_reports(strategy::Runtime& runtime, TaskReport own) {
  const strategy::ClusterSpec& cluster = runtime.cluster();
  std::vector<std::optional<TaskReport>> by_ordinal(static_cast<std::size_t>(cluster.task_count()));
  GatheredReports gathered;
  by_ordinal[static_cast<std::size_t>(cluster.ordinal(runtime.self()))] = std::move(own);
  // Every report but the gatherer's own, in whatever order they come: a
  // task gone for good (PeerGone) is missing, and the others are still
  // waited for.
  int awaited = cluster.task_count() - 1;
  while (awaited > 0) {
    strategy::Message message;
    try {
      message = runtime.recv_any_or_gone(strategy::Tag::kTaskReport);
    } catch (const strategy::PeerGone& gone) {
      auto& slot = by_ordinal[static_cast<std::size_t>(cluster.ordinal(gone.peer()))];
      if (slot) continue;  // its report came before it went
      TaskReport placeholder;
      placeholder.log.task = gone.peer();
      slot = std::move(placeholder);
      gathered.missing.emplace_back(gone.peer(), gone.what());
      --awaited;
      continue;
    } catch (const Error& e) {
      throw Error(std::string("the tasks' reports did not all come: ") + e.what());
    }
    const std::string name = strategy::task_name(message.from);
    TaskReport report = parse_task_report(strategy::message_text(message), "the report of " + name);
    if (!(report.log.task == message.from)) {
      throw Error("the report of " + name + " names " + strategy::task_name(report.log.task));
    }
    auto& slot = by_ordinal[static_cast<std::size_t>(cluster.ordinal(message.from))];
    if (slot) throw Error(name + " sent its report twice");
    slot = std::move(report);
    --awaited;
  }
  for (auto& report : by_ordinal) gathered.reports.push_back(std::move(*report));
  return gathered;
}

}  // namespace distlab::run
