// summary.json: the run's totals and one entry per task (the schema is the
// order of the keys written). JSON never holds NaN or infinity: such a
// number is written as null.
#pragma once

#include <string>

#include "run/run_result.h"

namespace distlab::run {

std::string summary_json(const RunResult& result);

}  // namespace distlab::run
