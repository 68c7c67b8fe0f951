// The model and data of a scenario, loaded the same way by every backend:
// the identity of a simulated and a real run starts with identical inputs.
#pragma once

#include <memory>

#include "nn/data/data_source.h"
#include "run/scenario.h"
#include "strategy/training_setup.h"

namespace distlab::run {

class TrainingInputs {
 public:
  // Loads the model spec and the data (their sizes only, for synthetic
  // data in timing fidelity). Errors are the loaders' InputErrors.
  explicit TrainingInputs(const Scenario& scenario);
  TrainingInputs(const TrainingInputs&) = delete;
  TrainingInputs& operator=(const TrainingInputs&) = delete;

  strategy::TrainingSetup& setup() { return *setup_; }

 private:
  nn::DataSplits data_;
  nn::Dataset train_;
  std::unique_ptr<strategy::TrainingSetup> setup_;
};

// The tasks a scenario runs: its cluster, or for `mirrored` one replica per
// device (the chief and devices - 1 workers). `devices` is the device count
// the backend found (the machine's GPUs in a simulation).
strategy::ClusterSpec tasks_of(const Scenario& scenario, int devices);

}  // namespace distlab::run
