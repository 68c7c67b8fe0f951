// A checkpoint on disk: one safetensors file (common/safetensors.h) that
// NumPy or PyTorch can read, holding
//   params/<block>            every trainable tensor ("params/dense_1/kernel")
//   state/<block>             BatchNorm moving statistics
//   optimizer/<slot>/<block>  the optimizer's state ("optimizer/m/dense_1/kernel")
//   optimizer/steps           updates each optimizer applied (I64, one per PS shard)
// and, as string metadata, "distlab" (JSON: the step, the data position,
// the model's fingerprint, the run it came from) and "sha256" (of that JSON
// and every tensor's name and bytes), so that a flipped bit anywhere is
// caught before a run trusts the file.
//
// A model file (model.safetensors, a run's final weights) is the same
// format without the optimizer: params/ and state/ only, the same metadata,
// and the model spec's YAML, so that it can be evaluated without the
// scenario that trained it (as a TensorFlow SavedModel carries its graph).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "checkpoint/training_state.h"
#include "common/safetensors.h"
#include "nn/model.h"

namespace distlab::checkpoint {

// What a run was, as a checkpoint records it. Resuming with different data,
// seed, batch, replicas or strategy works but cannot match the run that was
// never stopped; such differences are reported (resume_differences()).
struct RunFacts {
  std::string scenario;
  std::string strategy;  // "allreduce", "parameter_server (async)"...
  std::string data;
  std::string backend;  // who wrote it: "simulate", "realnet"
  uint64_t seed = 0;
  int64_t batch_size = 0;  // as the scenario gives it (TrainingSetup::batch_size())
  int replicas = 0;
  int ps = 0;
};

// The tensors of a model's checkpoints and the fingerprint that ties a file
// to a model: its blocks' names and shapes and its optimizer's state. A
// checkpoint of another model (or optimizer) is refused.
class CheckpointLayout {
 public:
  // The layout of `model`'s checkpoints, its optimizer's from its spec.
  explicit CheckpointLayout(const nn::Model& model);

  const std::string& fingerprint() const { return fingerprint_; }
  // The blocks' names and shapes alone, without the optimizer: a model
  // file's, which any spec of the same layers reads.
  const std::string& weights_fingerprint() const { return weights_fingerprint_; }
  int64_t parameter_floats() const { return parameter_floats_; }
  int64_t state_floats() const { return state_floats_; }
  std::size_t slots() const { return slot_names_.size(); }

  // The file's tensors for `state`, pointing into it; with `state` null,
  // only their shapes (for sizing a file that is not written). With
  // `optimizers` 0, no optimizer tensors: a model file's.
  std::vector<safetensors::Tensor> tensors(const TrainingState* state, int optimizers) const;

 private:
  struct Block {
    std::string name;
    int64_t offset = 0;
    std::vector<int64_t> shape;
    int64_t size = 0;
  };
  std::vector<Block> params_, state_;
  std::vector<std::string> slot_names_;
  int64_t parameter_floats_ = 0;
  int64_t state_floats_ = 0;
  std::string optimizer_;
  std::string fingerprint_;
  std::string weights_fingerprint_;
};

// What a checkpoint says about itself, besides the state.
struct CheckpointInfo {
  int64_t step = 0;
  int64_t epoch = 0;           // the data position: epoch (0-based)...
  int64_t batch_in_epoch = 0;  // ...and the next batch within it
  RunFacts facts;
  std::string model_fingerprint;
};

std::vector<std::byte> encode_checkpoint(const CheckpointLayout& layout, const TrainingState& state,
                                         const CheckpointInfo& info);
// The size of encode_checkpoint()'s file for a state of `optimizers`
// optimizers, without the values.
uint64_t checkpoint_file_size(const CheckpointLayout& layout, const CheckpointInfo& info,
                              int optimizers);

struct LoadedCheckpoint {
  std::string path;
  CheckpointInfo info;
  TrainingState state;
};

// Reads back a file. A truncated or corrupt file, a checksum that does not
// match, or a checkpoint of another model is a DataError naming `path` and
// what is wrong.
LoadedCheckpoint decode_checkpoint(std::span<const std::byte> bytes, const std::string& path,
                                   const CheckpointLayout& layout);

// A run's final weights as a model file. `info` says which run and step;
// `spec_yaml` is the text of the model spec it was trained with.
std::vector<std::byte> encode_model(const CheckpointLayout& layout, const TrainingState& weights,
                                    const CheckpointInfo& info, const std::string& spec_yaml);

struct LoadedModel {
  std::string path;
  CheckpointInfo info;
  std::string spec_yaml;
  TrainingState weights;  // parameters and model_state only
};

// Reads back a model file as far as its metadata: what it is, its spec,
// and that nothing in it is damaged. A checkpoint, a damaged file or
// another file is a DataError naming `path`.
LoadedModel read_model_header(std::span<const std::byte> bytes, const std::string& path);
// Reads back its weights too, for the model of `layout`; a model of other
// layers is a DataError.
LoadedModel decode_model(std::span<const std::byte> bytes, const std::string& path,
                         const CheckpointLayout& layout);

// How a resumed run differs from the run that wrote the checkpoint, one
// line per fact ("seed: 0 in the checkpoint, 1 now"); empty when it goes on
// exactly.
std::vector<std::string> resume_differences(const RunFacts& checkpoint, const RunFacts& now);

}  // namespace distlab::checkpoint
