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

#include <vector>

#include "run/task_report.h"
#include "strategy/runtime.h"

namespace distlab::run {

// Whether this task gathers the reports: replica 0 (the chief, or worker 0
// of a cluster without one).
bool gathers_reports(const strategy::Runtime& runtime);

// Every task but the gatherer: sends its report to it.
void send_task_report(strategy::Runtime& runtime, const TaskReport& report);

// The gatherer: its own report and every other task's, in cluster order.
// Waits for each as long as the runtime waits for any message; throws Error
// naming a task whose report does not come or does not parse.
std::vector<TaskReport> gather_task_reports(strategy::Runtime& runtime, TaskReport own);

}  // namespace distlab::run
