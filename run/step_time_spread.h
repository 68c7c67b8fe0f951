// How much a real run's steps varied, as slowdown factors: the empirical
// step-time noise a scenario's `slowdowns` entry may draw from
// (`empirical_steps: RUN`), so that a simulation, or another real run,
// has the steps of a cluster that was measured.
#pragma once

#include <string>
#include <vector>

namespace distlab::run {

// The factors of a run's replica steps (chief and workers; each task's
// first step, which pays for its start, left out): each step's compute
// time over its task's fast steps' (the 5th percentile), so that the
// fastest steps are the machine's speed (1) and the others are slowed by
// what slowed them. `path` is a run directory or its steps.csv. Throws
// InputError when it cannot be read or holds fewer than 10 such steps,
// DataError (file and line) for a bad cell.
std::vector<double> step_time_factors(const std::string& path);

}  // namespace distlab::run
