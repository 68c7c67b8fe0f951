#include "apps/train/checkpoints.h"

#include <algorithm>
#include <cstdio>

#include "checkpoint/checkpoint_file.h"
#include "checkpoint/checkpoint_store.h"
#include "common/atomic_file.h"
#include "common/error.h"
#include "nn/model_spec.h"

namespace distlab::train {
namespace {

using nn::Model;
using nn::Trainer;

checkpoint::RunFacts facts_of(const Options& o, const nn::ModelSpec& spec) {
  return {.scenario = "train-" + spec.name,
          .strategy = "local",
          .data = o.data,
          .backend = "train",
          .seed = o.seed,
          .batch_size = spec.batch_size,
          .replicas = 1,
          .ps = 0};
}

checkpoint::CheckpointInfo info_of(const Options& o, const Model& model,
                                   const Trainer::Position& at) {
  return {.step = at.step,
          .epoch = at.epoch,
          .batch_in_epoch = at.batch,
          .facts = facts_of(o, model.spec())};
}

// The checkpoint's facts against this run's: a checkpoint of a distributed
// run is refused, and what differs is said.
void check_resumable(const Options& o, const Model& model, const checkpoint::LoadedCheckpoint& c) {
  if (c.info.facts.backend != "train") {
    throw InputError("--resume " + c.path + ": a checkpoint of a distributed run (" +
                     c.info.facts.backend + "); ./train resumes its own");
  }
  for (const std::string& line :
       checkpoint::resume_differences(c.info.facts, facts_of(o, model.spec()))) {
    if (!o.quiet) std::fprintf(stderr, "this run differs: %s\n", line.c_str());
  }
}

void load_weights(const checkpoint::TrainingState& state, Model& model, Trainer& trainer) {
  std::copy(state.parameters.begin(), state.parameters.end(), model.parameters().begin());
  std::copy(state.model_state.begin(), state.model_state.end(), model.state().begin());
  const auto slots = trainer.optimizer().state();
  for (std::size_t i = 0; i < slots.size(); ++i) {
    std::copy(state.optimizer_slots[i].begin(), state.optimizer_slots[i].end(), slots[i].begin());
  }
  trainer.optimizer().set_steps(state.optimizer_steps.front());
}

}  // namespace

void save_checkpoint(const std::filesystem::path& dir, const Options& o, Model& model,
                     Trainer& trainer) {
  checkpoint::TrainingState state;
  const Trainer::Position at = trainer.position();
  state.step = at.step;
  state.parameters.assign(model.parameters().begin(), model.parameters().end());
  state.model_state.assign(model.state().begin(), model.state().end());
  for (const auto slot : trainer.optimizer().state())
    state.optimizer_slots.emplace_back(slot.begin(), slot.end());
  state.optimizer_steps = {trainer.optimizer().steps()};
  state.schedule =
      checkpoint::ScheduleState{.learning_rate = at.learning_rate, .plateau = at.plateau};
  checkpoint::save_checkpoint((dir / "checkpoints").string(), at.step,
                              checkpoint::encode_checkpoint(checkpoint::CheckpointLayout(model),
                                                            state, info_of(o, model, at)),
                              3);
}

std::string restore(const Options& o, Model& model, Trainer& trainer) {
  checkpoint::ResumeChoice choice =
      checkpoint::choose_checkpoint(o.resume, checkpoint::CheckpointLayout(model));
  for (const std::string& skipped : choice.skipped) {
    if (!o.quiet) std::fprintf(stderr, "skipped %s\n", skipped.c_str());
  }
  const checkpoint::LoadedCheckpoint& c = choice.checkpoint;
  check_resumable(o, model, c);
  load_weights(c.state, model, trainer);
  if (!c.state.schedule) throw InputError("--resume " + c.path + ": no learning rate in it");
  trainer.restore({.epoch = c.info.epoch,
                   .batch = c.info.batch_in_epoch,
                   .step = c.info.step,
                   .learning_rate = c.state.schedule->learning_rate,
                   .plateau = c.state.schedule->plateau});
  if (!o.quiet) {
    std::printf("resuming from %s (epoch %lld, step %lld)\n", c.path.c_str(),
                static_cast<long long>(c.info.epoch), static_cast<long long>(c.info.step));
  }
  return c.path;
}

void save_model(const std::filesystem::path& dir, const Options& o, Model& model,
                const Trainer& trainer) {
  checkpoint::save_model_file((dir / "model.safetensors").string(), model,
                              info_of(o, model, trainer.position()), nn::model_spec_text(o.model));
}

}  // namespace distlab::train
