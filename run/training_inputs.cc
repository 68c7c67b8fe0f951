#include "run/training_inputs.h"

#include "strategy/strategies.h"

namespace distlab::run {

TrainingInputs::TrainingInputs(const Scenario& scenario) {
  nn::ModelSpec spec = nn::load_model_spec(scenario.model_path);
  const nn::DataRequirements needs{spec.input, spec.num_classes};
  data_ = scenario.fidelity == strategy::Fidelity::kFull
              ? nn::load_data(scenario.data, needs, scenario.seed)
              : nn::load_data_sizes(scenario.data, needs, scenario.seed);
  train_ = scenario.training.train_examples > 0 ? data_.train.head(scenario.training.train_examples)
                                                : data_.train;
  setup_ = std::make_unique<strategy::TrainingSetup>(std::move(spec), train_, data_.test,
                                                     scenario.strategy, scenario.training,
                                                     scenario.seed, scenario.fidelity);
}

strategy::ClusterSpec tasks_of(const Scenario& scenario, int devices) {
  if (strategy::describe(scenario.strategy.kind).placement !=
      strategy::Placement::kDevicesOfOneHost)
    return scenario.cluster.spec;
  return {.chiefs = 1, .workers = devices - 1, .ps = 0};
}

}  // namespace distlab::run
