// ./simulate --calibrate-from RUN_DIR: the costs a real run of the same
// model measured, for a simulation of another shape.
//
// For each real run directory (./realnet --launch on this machine, or
// --role on real nodes), the run's own scenario is simulated as the real
// run was placed (every task on machine local when it ran on one machine),
// in timing fidelity, in a child process (SimGrid runs one simulation per
// process); then each phase's real CPU time is set against the simulated
// one (sim/measured_costs.h).
#pragma once

#include <string>
#include <vector>

#include "run/scenario.h"
#include "sim/measured_costs.h"

namespace distlab::simulate {

// Throws InputError for a folder that is not a real run's directory, or a
// run of another model than `target`'s; Error when its simulation fails.
// `machines`: the catalog files the simulation was given (none: default).
sim::MeasuredCosts measured_costs_from(const std::vector<std::string>& run_dirs,
                                       const run::Scenario& target,
                                       const std::vector<std::string>& machines);

// The same for a model's profile (sim/model_profile.h), fitted once and
// kept in the profile's folder (fitted.json) for as long as the profile's
// runs, the machine catalog and distlab's version are those it was fitted
// with: a profiled simulation does not simulate the profile's runs again.
sim::MeasuredCosts profile_costs(const std::vector<std::string>& run_dirs,
                                 const run::Scenario& target,
                                 const std::vector<std::string>& machines);

// One line per fitted class, for the user: "replica: forward x1.67, ...".
std::vector<std::string> describe_measured_costs(const sim::MeasuredCosts& costs);

}  // namespace distlab::simulate
