#include "checkpoint/checkpoint_file.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "common/error.h"
#include "common/sha256.h"
#include "nn/model_spec.h"

namespace distlab::checkpoint {
namespace {

constexpr const char* kFormat = "distlab-checkpoint-1";
constexpr const char* kModelFormat = "distlab-model-1";

std::vector<int64_t> shape_of(const nn::ParamBlock& block) {
  if (block.rows == 1) return {block.cols};  // biases, scales: vectors, as Keras has them
  return {block.rows, block.cols};
}

std::span<const std::byte> bytes_of(const float* data, int64_t count) {
  return std::as_bytes(std::span<const float>(data, static_cast<std::size_t>(count)));
}

nlohmann::json facts_json(const RunFacts& f) {
  return {{"scenario", f.scenario}, {"strategy", f.strategy},   {"data", f.data},
          {"backend", f.backend},   {"seed", f.seed},           {"batch_size", f.batch_size},
          {"replicas", f.replicas}, {"parameter_servers", f.ps}};
}

// A schedule's position as the "extra" numbers ./train's checkpoints have
// always had. A best of infinity (nothing observed yet) is left out: JSON
// has no infinity, and files written before wrote null, read back as it.
nlohmann::json schedule_json(const ScheduleState& s) {
  nlohmann::json j = {{"learning_rate", s.learning_rate},
                      {"plateau_waited", s.plateau.waited},
                      {"plateau_cooldown_left", s.plateau.cooldown_left}};
  if (std::isfinite(s.plateau.best)) j["plateau_best"] = s.plateau.best;
  return j;
}

std::optional<ScheduleState> read_schedule(const nlohmann::json& info) {
  const auto extra = info.find("extra");
  if (extra == info.end() || !extra->contains("learning_rate")) return std::nullopt;
  ScheduleState s;
  s.learning_rate = extra->at("learning_rate").get<float>();
  const auto best = extra->find("plateau_best");
  s.plateau.best = best == extra->end() || best->is_null() ? std::numeric_limits<double>::infinity()
                                                           : best->get<double>();
  s.plateau.waited = extra->value("plateau_waited", 0);
  s.plateau.cooldown_left = extra->value("plateau_cooldown_left", 0);
  return s;
}

std::string info_json(const CheckpointInfo& info, const std::string& fingerprint,
                      const std::string* spec_yaml = nullptr,
                      const std::optional<ScheduleState>& schedule = std::nullopt) {
  nlohmann::ordered_json j;
  j["step"] = info.step;
  j["epoch"] = info.epoch;
  j["batch_in_epoch"] = info.batch_in_epoch;
  j["model_fingerprint"] = fingerprint;
  j["run"] = facts_json(info.facts);
  if (schedule) j["extra"] = schedule_json(*schedule);
  if (spec_yaml) j["model_spec"] = *spec_yaml;
  return j.dump();
}

std::string checksum(const std::string& info, const std::vector<safetensors::Tensor>& tensors) {
  Sha256 hash;
  hash.update(std::as_bytes(std::span<const char>(info)));
  for (const auto& t : tensors) {
    hash.update(std::as_bytes(std::span<const char>(t.name)));
    hash.update(t.data);
  }
  return hash.hex_digest();
}

safetensors::Metadata metadata(const std::string& info, const std::string& sum,
                               const char* format = kFormat) {
  return {{"format", format}, {"distlab", info}, {"sha256", sum}};
}

const std::string& required(const safetensors::Metadata& m, const std::string& key,
                            const std::string& path) {
  auto found = m.find(key);
  if (found == m.end()) {
    throw DataError(path, "not a distlab checkpoint: its metadata has no '" + key + "'");
  }
  return found->second;
}

}  // namespace

CheckpointLayout::CheckpointLayout(const nn::Model& model)
    : slot_names_(nn::optimizer_state_names(model.spec().optimizer)),
      parameter_floats_(model.trainable_layout().size()),
      state_floats_(model.state_layout().size()),
      optimizer_(model.spec().optimizer.kind) {
  Sha256 hash, weights_hash;
  bool weights_only = true;  // until the optimizer's lines
  auto add = [&](const std::string& text) {
    for (Sha256* h : {&hash, &weights_hash}) {
      if (h == &weights_hash && !weights_only) continue;
      h->update(std::as_bytes(std::span<const char>(text)));
      h->update(std::as_bytes(std::span<const char>("\n", 1)));
    }
  };
  for (const nn::ParamBlock& b : model.trainable_layout().blocks()) {
    params_.push_back({b.name, b.offset, shape_of(b), b.size()});
    add("params/" + b.name + " " + std::to_string(b.rows) + "x" + std::to_string(b.cols) + "@" +
        std::to_string(b.offset));
  }
  for (const nn::ParamBlock& b : model.state_layout().blocks()) {
    state_.push_back({b.name, b.offset, shape_of(b), b.size()});
    add("state/" + b.name + " " + std::to_string(b.rows) + "x" + std::to_string(b.cols) + "@" +
        std::to_string(b.offset));
  }
  weights_only = false;
  add("optimizer " + optimizer_);
  for (const auto& slot : slot_names_) add("slot " + slot);
  fingerprint_ = hash.hex_digest();
  weights_fingerprint_ = weights_hash.hex_digest();
}

std::vector<safetensors::Tensor> CheckpointLayout::tensors(const TrainingState* state,
                                                           int optimizers) const {
  std::vector<safetensors::Tensor> out;
  auto add = [&](std::string name, const Block& b, const std::vector<float>* buffer) {
    safetensors::Tensor t{
        .name = std::move(name), .dtype = safetensors::DType::kF32, .shape = b.shape};
    if (buffer) t.data = bytes_of(buffer->data() + b.offset, b.size);
    out.push_back(std::move(t));
  };
  for (const Block& b : params_) add("params/" + b.name, b, state ? &state->parameters : nullptr);
  for (const Block& b : state_) add("state/" + b.name, b, state ? &state->model_state : nullptr);
  if (optimizers == 0) return out;  // a model file
  for (std::size_t s = 0; s < slot_names_.size(); ++s) {
    for (const Block& b : params_) {
      add("optimizer/" + slot_names_[s] + "/" + b.name, b,
          state ? &state->optimizer_slots[s] : nullptr);
    }
  }
  safetensors::Tensor steps{
      .name = "optimizer/steps", .dtype = safetensors::DType::kI64, .shape = {optimizers}};
  if (state) steps.data = std::as_bytes(std::span<const int64_t>(state->optimizer_steps));
  out.push_back(std::move(steps));
  return out;
}

std::vector<std::byte> encode_checkpoint(const CheckpointLayout& layout, const TrainingState& state,
                                         const CheckpointInfo& info) {
  if (static_cast<int64_t>(state.parameters.size()) != layout.parameter_floats() ||
      static_cast<int64_t>(state.model_state.size()) != layout.state_floats() ||
      state.optimizer_slots.size() != layout.slots() || state.optimizer_steps.empty()) {
    throw Error("a checkpoint's state does not fit its model's layout");
  }
  for (const auto& slot : state.optimizer_slots) {
    if (static_cast<int64_t>(slot.size()) != layout.parameter_floats())
      throw Error("a checkpoint's optimizer state does not fit its model's layout");
  }
  const auto tensors = layout.tensors(&state, static_cast<int>(state.optimizer_steps.size()));
  const std::string json = info_json(info, layout.fingerprint(), nullptr, state.schedule);
  return safetensors::encode(tensors, metadata(json, checksum(json, tensors)));
}

uint64_t checkpoint_file_size(const CheckpointLayout& layout, const CheckpointInfo& info,
                              int optimizers) {
  const std::string json = info_json(info, layout.fingerprint());
  // The checksum's length is fixed: 64 hex digits.
  return safetensors::encoded_size(layout.tensors(nullptr, optimizers),
                                   metadata(json, std::string(64, '0')));
}

namespace {

// The file's metadata checked (format, checksum) and read; `format` is the
// one the caller expects.
CheckpointInfo read_info(const safetensors::File& file, const std::string& path, const char* format,
                         std::string* spec_yaml, std::optional<ScheduleState>* schedule = nullptr) {
  const std::string& has = required(file.metadata, "format", path);
  if (has == kModelFormat && std::string(format) == kFormat) {
    throw DataError(path,
                    "a model file (a run's final weights, without the optimizer's state), "
                    "not a checkpoint: a run cannot resume from it");
  }
  if (has == kFormat && std::string(format) == kModelFormat) {
    throw DataError(path,
                    "a checkpoint, not a model file: the run directory's model.safetensors "
                    "holds the final weights");
  }
  if (has != format) {
    throw DataError(path, "format " + has + ", this build reads " + format);
  }
  const std::string& json = required(file.metadata, "distlab", path);
  if (checksum(json, file.tensors) != required(file.metadata, "sha256", path)) {
    throw DataError(path, "corrupt: its contents do not match their SHA-256 checksum");
  }
  CheckpointInfo info;
  try {
    const auto j = nlohmann::json::parse(json);
    info.step = j.at("step").get<int64_t>();
    info.epoch = j.at("epoch").get<int64_t>();
    info.batch_in_epoch = j.at("batch_in_epoch").get<int64_t>();
    info.model_fingerprint = j.at("model_fingerprint").get<std::string>();
    const auto& run = j.at("run");
    info.facts = {.scenario = run.at("scenario").get<std::string>(),
                  .strategy = run.at("strategy").get<std::string>(),
                  .data = run.at("data").get<std::string>(),
                  .backend = run.at("backend").get<std::string>(),
                  .seed = run.at("seed").get<uint64_t>(),
                  .batch_size = run.at("batch_size").get<int64_t>(),
                  .replicas = run.at("replicas").get<int>(),
                  .ps = run.at("parameter_servers").get<int>()};
    if (schedule) *schedule = read_schedule(j);
    if (spec_yaml) *spec_yaml = j.at("model_spec").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw DataError(path, std::string("malformed distlab metadata: ") + e.what());
  }
  if (info.step < 0) throw DataError(path, "step " + std::to_string(info.step) + " is negative");
  return info;
}

// Copies every tensor the layout expects (with `optimizers` optimizers)
// from the file into `state`, sized here.
void fill_state(const safetensors::File& file, const std::string& path,
                const CheckpointLayout& layout, int optimizers, TrainingState& state) {
  const auto expected = layout.tensors(nullptr, optimizers);
  if (expected.size() != file.tensors.size()) {
    throw DataError(path, std::to_string(file.tensors.size()) + " tensors where this model has " +
                              std::to_string(expected.size()));
  }
  state.parameters.assign(layout.parameter_floats(), 0.0f);
  state.model_state.assign(layout.state_floats(), 0.0f);
  if (optimizers > 0) {
    state.optimizer_slots.assign(layout.slots(),
                                 std::vector<float>(layout.parameter_floats(), 0.0f));
    state.optimizer_steps.assign(optimizers, 0);
  }
  // Every expected tensor, found by name and copied into its place: the
  // layout's own tensors(), pointed at the state being filled, say where.
  const auto places = layout.tensors(&state, optimizers);
  for (const auto& place : places) {
    const safetensors::Tensor* t = file.find(place.name);
    if (!t) throw DataError(path, "tensor " + place.name + " is missing");
    if (t->shape != place.shape || t->dtype != place.dtype) {
      throw DataError(path,
                      "tensor " + place.name + " has another shape or type than this model's");
    }
    std::memcpy(const_cast<std::byte*>(place.data.data()), t->data.data(), t->data.size());
  }
}

}  // namespace

LoadedCheckpoint decode_checkpoint(std::span<const std::byte> bytes, const std::string& path,
                                   const CheckpointLayout& layout) {
  const safetensors::File file = safetensors::decode(bytes, path);
  LoadedCheckpoint loaded;
  loaded.path = path;
  loaded.info = read_info(file, path, kFormat, nullptr, &loaded.state.schedule);
  if (loaded.info.model_fingerprint != layout.fingerprint()) {
    throw DataError(path, "a checkpoint of another model or optimizer (scenario " +
                              loaded.info.facts.scenario +
                              "): its layers, shapes or optimizer state differ from this one's");
  }
  const safetensors::Tensor* steps = file.find("optimizer/steps");
  if (!steps || steps->shape.size() != 1 || steps->shape[0] < 1) {
    throw DataError(path, "optimizer/steps is missing or not a vector");
  }
  loaded.state.step = loaded.info.step;
  fill_state(file, path, layout, static_cast<int>(steps->shape[0]), loaded.state);
  return loaded;
}

std::vector<std::byte> encode_model(const CheckpointLayout& layout, const TrainingState& weights,
                                    const CheckpointInfo& info, const std::string& spec_yaml) {
  if (static_cast<int64_t>(weights.parameters.size()) != layout.parameter_floats() ||
      static_cast<int64_t>(weights.model_state.size()) != layout.state_floats()) {
    throw Error("a model's weights do not fit its layout");
  }
  const auto tensors = layout.tensors(&weights, 0);
  const std::string json = info_json(info, layout.weights_fingerprint(), &spec_yaml);
  return safetensors::encode(tensors, metadata(json, checksum(json, tensors), kModelFormat));
}

LoadedModel read_model_header(std::span<const std::byte> bytes, const std::string& path) {
  const safetensors::File file = safetensors::decode(bytes, path);
  LoadedModel loaded;
  loaded.path = path;
  loaded.info = read_info(file, path, kModelFormat, &loaded.spec_yaml);
  return loaded;
}

LoadedModel decode_model(std::span<const std::byte> bytes, const std::string& path,
                         const CheckpointLayout& layout) {
  const safetensors::File file = safetensors::decode(bytes, path);
  LoadedModel loaded;
  loaded.path = path;
  loaded.info = read_info(file, path, kModelFormat, &loaded.spec_yaml);
  if (loaded.info.model_fingerprint != layout.weights_fingerprint()) {
    throw DataError(path, "a model of other layers (scenario " + loaded.info.facts.scenario +
                              "): its tensors' names or shapes differ from this spec's");
  }
  loaded.weights.step = loaded.info.step;
  fill_state(file, path, layout, 0, loaded.weights);
  return loaded;
}

std::vector<std::string> resume_differences(const RunFacts& was, const RunFacts& now) {
  std::vector<std::string> lines;
  auto compare = [&](const char* what, const auto& a, const auto& b) {
    if (a == b) return;
    std::ostringstream line;
    line << what << ": " << a << " in the checkpoint, " << b << " now";
    lines.push_back(line.str());
  };
  compare("strategy", was.strategy, now.strategy);
  compare("data", was.data, now.data);
  compare("seed", was.seed, now.seed);
  compare("batch_size", was.batch_size, now.batch_size);
  compare("replicas", was.replicas, now.replicas);
  compare("parameter servers", was.ps, now.ps);
  return lines;
}

}  // namespace distlab::checkpoint
