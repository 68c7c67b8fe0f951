#include "strategy/strategy.h"

#include "common/error.h"
#include "strategy/parameter_server.h"
#include "strategy/synchronous.h"

namespace distlab::strategy {

TaskOutcome run_task(Runtime& runtime, const TrainingSetup& setup) {
  switch (setup.strategy().kind) {
    case StrategyKind::kLocal:
    case StrategyKind::kAllReduce:
    case StrategyKind::kMirrored:
      return train_synchronously(runtime, setup);
    case StrategyKind::kParameterServer:
      return runtime.self().role == Role::kPs ? serve_parameters(runtime, setup)
                                              : train_with_parameter_servers(runtime, setup);
  }
  throw Error("unknown strategy");
}

const char* strategy_name(StrategyKind kind) {
  switch (kind) {
    case StrategyKind::kLocal:
      return "local";
    case StrategyKind::kAllReduce:
      return "allreduce";
    case StrategyKind::kParameterServer:
      return "parameter_server";
    case StrategyKind::kMirrored:
      return "mirrored";
  }
  return "?";
}

const char* fidelity_name(Fidelity fidelity) {
  return fidelity == Fidelity::kFull ? "full" : "timing";
}

}  // namespace distlab::strategy
