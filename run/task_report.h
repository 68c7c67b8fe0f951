// What one task of a run hands over when it ends: its log and its outcome.
// A real task's travels as JSON: in a file for the launcher (--launch), or
// to its cluster's chief (run/report_exchange.h). run/run_assembly.h makes
// the RunResult that the run directory is written from out of one report
// per task, so that ./realnet and ./simulate leave the same files.
#pragma once

#include <string>

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

}  // namespace distlab::run
