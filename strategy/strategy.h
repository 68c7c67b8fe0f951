// The entry point of every task: runs the role the task has in the
// scenario's strategy, on whatever backend the runtime is.
#pragma once

#include "strategy/replica.h"
#include "strategy/runtime.h"
#include "strategy/training_setup.h"

namespace distlab::strategy {

TaskOutcome run_task(Runtime& runtime, const TrainingSetup& setup);

}  // namespace distlab::strategy
