#include "strategy/strategy.h"

#include "common/error.h"
#include "strategy/strategies.h"

namespace distlab::strategy {

TaskOutcome run_task(Runtime& runtime, const TrainingSetup& setup) {
  const StrategyDescription& strategy = describe(setup.strategy().kind);
  if (runtime.self().role == Role::kPs) {
    if (!strategy.serve) {
      throw Error(task_name(runtime.self()) + ": strategy " + strategy.name +
                  " has no parameter servers");
    }
    return strategy.serve(runtime, setup);
  }
  return strategy.train(runtime, setup);
}

}  // namespace distlab::strategy
