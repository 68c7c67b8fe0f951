// A run directory read back (run_files.h): what a run resumed in place
// continues. summary.json gives the run and each task's totals, steps.csv
// the steps and curve.csv the chief's evaluations; the timeline's spans
// are not read (continue_run_directory keeps them as text).
#pragma once

#include <string>

#include "run/run_result.h"

namespace distlab::run {

// Throws DataError naming the file (and the row or key) that distlab did
// not write as it writes them.
RunResult read_run_directory(const std::string& dir);

}  // namespace distlab::run
