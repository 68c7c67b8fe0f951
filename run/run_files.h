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

#include "run/out_directory.h"
#include "run/run_result.h"
#include "run/summary_table.h"

namespace distlab::run {

// runs/<scenario>-<YYYYmmdd-HHMMSS>/ under `root`.
std::string default_run_directory(const std::string& root, const std::string& scenario,
                                  std::time_t when);

// Creates `dir` (and parents) and writes the files, each first to a
// temporary name and then renamed, so that a failure leaves no half file.
void write_run_directory(const std::string& dir, const RunResult& result);

// The files of a run where claim_out_directory (out_directory.h) put it:
// written afresh, or continuing the run there.
void write_run_directory(const OutDirectory& out, const RunResult& result);

// Writes the files of `segment`, a run resumed in place in `dir` (see
// out_directory.h), that continues the `earlier_segments` segments there:
// steps.csv, curve.csv and the timeline keep the earlier records and add
// the segment's after them, on the whole run's clock; summary.json
// describes the whole run, with every segment under "segments"; and
// segments/<n>/ keeps each segment's own summary.json and scenario.yaml.
// With no earlier segment (a run that never finished left checkpoints
// alone) the files are the segment's, as write_run_directory writes them.
// Should the earlier records no longer read back, the segment's files go
// whole to segments/<n>/ and Error says so.
void continue_run_directory(const std::string& dir, const RunResult& segment, int earlier_segments);

// What every command prints once its run directory is written: the table,
// then the files written to `dir`.
std::string format_run_written(const std::string& dir, const RunResult& result);
// The same, saying which segment a run continued in place added.
std::string format_run_written(const OutDirectory& out, const RunResult& result);

}  // namespace distlab::run
