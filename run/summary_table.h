// The table printed at the end of a run: the run's totals, then one row
// per task.
#pragma once

#include <string>

#include "run/run_result.h"

namespace distlab::run {

std::string format_summary_table(const RunResult& result);

}  // namespace distlab::run
