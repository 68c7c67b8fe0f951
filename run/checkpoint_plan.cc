#include "run/checkpoint_plan.h"

#include <filesystem>
#include <memory>

#include "checkpoint/checkpoint_store.h"
#include "common/atomic_file.h"
#include "common/error.h"
#include "nn/model_spec.h"

namespace distlab::run {

std::string checkpoint_folder(const std::string& run_directory) {
  return (std::filesystem::path(run_directory) / "checkpoints").string();
}

strategy::CheckpointPlan plan_checkpoints(const Scenario& scenario,
                                          const strategy::TrainingSetup& setup, int replicas,
                                          const CheckpointRequest& request) {
  strategy::CheckpointPlan plan;
  plan.config = scenario.checkpoint;
  if (!request.run_directory.empty()) {
    plan.folder = checkpoint_folder(request.run_directory);
    plan.model_file = (std::filesystem::path(request.run_directory) / "model.safetensors").string();
    plan.model_spec_yaml = nn::model_spec_text(scenario.model_path);
  }
  plan.facts = {.scenario = scenario.name,
                .strategy = strategy_label(scenario),
                .data = scenario.data,
                .backend = request.backend,
                .seed = scenario.seed,
                .batch_size = setup.batch_size(),
                .replicas = replicas,
                .ps = scenario.cluster.spec.ps};
  if (request.resume.empty()) return plan;
  plan.resuming = true;
  if (!request.load) return plan;

  checkpoint::ResumeChoice choice =
      checkpoint::choose_checkpoint(request.resume, setup.checkpoint_layout());
  auto note = [&](const std::string& line) {
    if (request.note) request.note(line);
  };
  for (const std::string& skipped : choice.skipped) note("skipped " + skipped);
  const checkpoint::CheckpointInfo& info = choice.checkpoint.info;
  note("resuming from " + choice.checkpoint.path + " (step " + std::to_string(info.step) +
       ", written by " + info.facts.backend + ")");
  for (const std::string& line : checkpoint::resume_differences(info.facts, plan.facts)) {
    note("  this run differs: " + line + "; it goes on, but not as the first run would have");
  }
  plan.resume = std::make_shared<const checkpoint::LoadedCheckpoint>(std::move(choice.checkpoint));
  return plan;
}

}  // namespace distlab::run
