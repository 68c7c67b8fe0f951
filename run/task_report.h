// What one task of a real run hands to the launcher when it ends: its log
// and its outcome, as a JSON file. The launcher gathers one per task into the
// RunResult that the run directory is written from, so that ./realnet and
// ./simulate leave the same files.
#pragma once

#include <string>
#include <vector>

#include "run/run_result.h"
#include "strategy/replica.h"
#include "strategy/task_log.h"

namespace distlab::run {

struct TaskReport {
  strategy::TaskLog log;
  strategy::TaskOutcome outcome;
  uint64_t spans_dropped = 0;
};

std::string task_report_json(const TaskReport& report);
// Throws Error naming `source` when the text is not a task report.
TaskReport parse_task_report(const std::string& text, const std::string& source);

// The run as a whole from its tasks' reports (cluster order: chief,
// workers, ps). The chief (replica 0) gives the final loss, accuracy and
// weights.
RunResult gather_run(std::vector<TaskReport> reports, int replicas);

}  // namespace distlab::run
