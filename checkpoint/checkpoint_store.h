// The checkpoints of a run: `checkpoints/step-000001000.safetensors` in its
// run directory, the newest `keep` of them. Files appear whole or not at all
// (common/atomic_file.h); a reader skips any other name, the temporary
// files of a write in progress included.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_file.h"

namespace distlab::checkpoint {

// "step-000001000.safetensors"
std::string checkpoint_file_name(int64_t step);

// Writes the file of `step` atomically, then deletes all but the newest
// `keep` checkpoints of the folder (creating it if needed).
void save_checkpoint(const std::string& folder, int64_t step, std::span<const std::byte> file,
                     int keep);

// Writes `model`'s final weights as a model file (checkpoint_file.h) at
// `path`, atomically, creating its folder: what ./train and a run's chief
// leave beside summary.json.
void save_model_file(const std::string& path, const nn::Model& model, const CheckpointInfo& info,
                     const std::string& spec_yaml);

// Checkpoint files of a folder, newest (highest step) first.
std::vector<std::string> list_checkpoints(const std::string& folder);

// The checkpoint a resumed run starts from, and the newer ones it skipped.
struct ResumeChoice {
  LoadedCheckpoint checkpoint;
  std::vector<std::string> skipped;  // "FILE: what is wrong with it"
};

// `path` is a checkpoint file, a checkpoints folder or a run directory
// (whose checkpoints/ is used). A named file must be valid; in a folder the
// newest valid checkpoint is taken and every newer one that is not valid is
// named in `skipped`. Throws InputError (naming the file and the problem)
// when a named file is unusable or a folder holds no valid checkpoint.
ResumeChoice choose_checkpoint(const std::string& path, const CheckpointLayout& layout);

}  // namespace distlab::checkpoint
