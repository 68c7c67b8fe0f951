// The run directory both backends leave behind, one schema:
//
//   summary.json   the run's totals and one entry per task
//   steps.csv      one row per task per step
//   curve.csv      the chief's evaluations: time, step, losses, accuracy
//   timeline.json  Chrome trace events, one track per task (Perfetto, chrome://tracing)
//   scenario.yaml  the scenario as it ran, overrides applied (when known)
//
// and the summary table printed at the end of a run.
#pragma once

#include <ctime>
#include <string>

#include "run/run_result.h"

namespace distlab::run {

// runs/<scenario>-<YYYYmmdd-HHMMSS>/ under `root`.
std::string default_run_directory(const std::string& root, const std::string& scenario,
                                  std::time_t when);

// Creates `dir` (and parents) and writes the files, each first to a
// temporary name and then renamed, so that a failure leaves no half file.
void write_run_directory(const std::string& dir, const RunResult& result);

// A table for the terminal: the run's totals, then one row per task.
std::string format_summary_table(const RunResult& result);

// What every command prints once its run directory is written: the table,
// then the files written to `dir`.
std::string format_run_written(const std::string& dir, const RunResult& result);

}  // namespace distlab::run
