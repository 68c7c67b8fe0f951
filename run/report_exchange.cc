#include "run/report_exchange.h"

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

std::vector<TaskReport> gather_task_reports(strategy::Runtime& runtime, TaskReport own) {
  std::vector<TaskReport> reports;
  for (const strategy::TaskId task : runtime.cluster().tasks()) {
    if (task == runtime.self()) {
      reports.push_back(std::move(own));
      continue;
    }
    const std::string name = strategy::task_name(task);
    strategy::Message message;
    try {
      message = runtime.recv(task, strategy::Tag::kTaskReport);
    } catch (const Error& e) {
      throw Error(std::string("the report of ") + name + " did not come: " + e.what());
    }
    TaskReport report = parse_task_report(strategy::message_text(message), "the report of " + name);
    if (!(report.log.task == task)) {
      throw Error("the report of " + name + " names " + strategy::task_name(report.log.task));
    }
    reports.push_back(std::move(report));
  }
  return reports;
}

}  // namespace distlab::run
