// A run of three tasks for the tests of the run directory: the chief with
// a curve, a worker, and a parameter server with staleness.
#pragma once

#include <string>

#include "run/run_result.h"

namespace distlab::test {

// A task whose totals differ with `scale` (1, 2, ...), with `steps` steps
// a quarter second apart and three spans.
strategy::TaskLog task(strategy::Role role, int index, int scale, const std::string& host,
                       int steps, bool staleness, double loss);

// chief:0 (a curve of two evaluations), worker:0 and ps:0; "timing"
// fidelity has no loss, accuracy or weights.
run::RunResult three_tasks(const std::string& fidelity = "full");

// Checks, field by field, that a step read back is the step written (a
// NaN where the other has a NaN).
void check_same_step(const strategy::StepRecord& got, const strategy::StepRecord& want);

}  // namespace distlab::test
