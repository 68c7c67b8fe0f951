// A scenario as ./realnet runs it, in --launch and in each --role task: the
// tasks compute for real whatever the scenario's fidelity, and what only
// the simulator honours (mixed precision, several GPUs a task) is said in a
// note rather than ignored in silence.
#pragma once

#include <string>
#include <vector>

#include "run/scenario.h"

namespace distlab::realnet {

run::Scenario load_real_scenario(const std::string& path,
                                 const std::vector<run::Override>& overrides);

}  // namespace distlab::realnet
