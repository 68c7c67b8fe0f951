// ./train's checkpoints and its model file. Checkpoints are at epoch ends,
// in the same file format as the distributed runs' (checkpoint/
// checkpoint_file.h), with the learning rate and the plateau schedule's
// counters (TrainingState::schedule).
#pragma once

#include <filesystem>
#include <string>

#include "apps/train/options.h"
#include "nn/model.h"
#include "nn/trainer.h"

namespace distlab::train {

// A checkpoint of where the trainer is, to <dir>/checkpoints/.
void save_checkpoint(const std::filesystem::path& dir, const Options& o, nn::Model& model,
                     nn::Trainer& trainer);

// Puts the model, its optimizer and the trainer where --resume's checkpoint
// says. Returns the checkpoint's path.
std::string restore(const Options& o, nn::Model& model, nn::Trainer& trainer);

// The final weights beside summary.json, with the spec they were trained
// with (checkpoint/checkpoint_file.h: a model file).
void save_model(const std::filesystem::path& dir, const Options& o, nn::Model& model,
                const nn::Trainer& trainer);

}  // namespace distlab::train
