// How the tasks of a cluster started one by one (./realnet --role, or
// TF_CONFIG, on machines of their own) bring their reports together: after
// training, every task but the chief sends its report to the chief (replica
// 0), over the connections the run already has, and the chief gathers them
// to write the run directory. Written against Runtime, so any backend.
//
// Call after Runtime::take_log (the report's own trip is no part of the
// log) and before the backend closes its connections. Sends are buffered:
// a worker's report waits at the chief while the chief still trains, and
// parameter servers send theirs once the chief has told them it is done,
// so the chief, which gathers after its own training, waits for no one who
// waits for it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "run/task_report.h"
#include "strategy/runtime.h"

namespace distlab::run {

// Whether this task gathers the reports: replica 0 (the chief, or worker 0
// of a cluster without one).
bool gathers_reports(const strategy::Runtime& runtime);

// Every task but the gatherer: sends its report to it.
void send_task_report(strategy::Runtime& runtime, const TaskReport& report);

// What the gatherer ends with: one report per task, in cluster order. A
// task that left the run before its report came (the runtime threw
// strategy::PeerGone for it) has a report with its name and nothing else,
// and is listed in `missing` with the reason.
struct GatheredReports {
  std::vector<TaskReport> reports;
  std::vector<std::pair<strategy::TaskId, std::string>> missing;
};

// The gatherer: its own report and every other task's, as they come.
// Waits for them as long as the runtime waits for any message; throws Error
// when the runtime does, or a report does not parse or names another task.
GatheredReports gather_task_reports(strategy::Runtime& runtime, TaskReport own);

}  // namespace distlab::run
