// What a run does about checkpoints, decided the same way by every command
// that trains: where the chief writes them (the run directory's
// checkpoints/) and its final weights (model.safetensors), and, for
// --resume, which checkpoint the run goes on from.
#pragma once

#include <functional>
#include <string>

#include "run/scenario.h"
#include "strategy/training_setup.h"

namespace distlab::run {

struct CheckpointRequest {
  std::string
      run_directory;  // checkpoints go to its checkpoints/, the model beside; "" writes none
  // --resume: a run directory, a checkpoints folder or one file; "" starts
  // from step 0.
  std::string resume;
  std::string backend;  // "simulate", "realnet": recorded in every file
  // Whether this process reads the checkpoint: the chief's does; the other
  // tasks of a real run only learn that a restore is coming.
  bool load = true;
  // Lines for the user: the checkpoint chosen, those skipped, and how this
  // run differs from the one that wrote it.
  std::function<void(const std::string&)> note;
};

// The checkpoints/ folder of a run directory.
std::string checkpoint_folder(const std::string& run_directory);

// Throws InputError (naming the file and what is wrong) for a --resume that
// cannot be used.
strategy::CheckpointPlan plan_checkpoints(const Scenario& scenario,
                                          const strategy::TrainingSetup& setup, int replicas,
                                          const CheckpointRequest& request);

}  // namespace distlab::run
