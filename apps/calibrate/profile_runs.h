// ./calibrate --scenario S: the model of S measured on this machine in real
// runs (./realnet --launch): a ring of two, a ring of four, and the chief
// with one parameter server. ./simulate then uses them
// for every simulation of that model on machine local with one_host
// placement (./simulate --calibrate-from, sim/measured_costs.h), so that
// each phase's work costs what this model's real steps cost here, beside
// another task, and a first use what it costs.
#pragma once

#include <functional>
#include <string>

namespace distlab::calibrate {

// Runs the profile's real runs of `scenario_path` at `threads` compute
// threads a task and keeps them in sim::profile_folder(model), replacing
// an earlier profile of the same model. `note` gets a line per run.
// Throws InputError for a scenario it cannot profile (a GPU scenario),
// Error when a real run fails.
void profile_scenario(const std::string& scenario_path, int threads,
                      const std::function<void(const std::string&)>& note);

}  // namespace distlab::calibrate
