#include "checkpoint/checkpoint_store.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "common/atomic_file.h"
#include "common/error.h"

namespace distlab::checkpoint {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPrefix = "step-";
constexpr const char* kSuffix = ".safetensors";

// The step in a checkpoint's file name; -1 for any other name.
int64_t step_of(const std::string& name) {
  const std::string prefix = kPrefix, suffix = kSuffix;
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return -1;
  }
  const std::string digits =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.empty() || digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return -1;
  }
  return std::stoll(digits);
}

LoadedCheckpoint load(const std::string& path, const CheckpointLayout& layout) {
  const std::vector<std::byte> bytes = read_file_bytes(path);
  return decode_checkpoint(bytes, path, layout);
}

}  // namespace

std::string checkpoint_file_name(int64_t step) {
  char name[64];
  std::snprintf(name, sizeof name, "%s%09lld%s", kPrefix, static_cast<long long>(step), kSuffix);
  return name;
}

void save_model_file(const std::string& path, const nn::Model& model, const CheckpointInfo& info,
                     const std::string& spec_yaml) {
  TrainingState weights;
  weights.step = info.step;
  weights.parameters.assign(model.parameters().begin(), model.parameters().end());
  weights.model_state.assign(model.state().begin(), model.state().end());
  const std::vector<std::byte> file =
      encode_model(CheckpointLayout(model), weights, info, spec_yaml);
  const std::filesystem::path at(path);
  if (at.has_parent_path()) std::filesystem::create_directories(at.parent_path());
  write_file_atomically(path, file);
}

void save_checkpoint(const std::string& folder, int64_t step, std::span<const std::byte> file,
                     int keep) {
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) throw Error(folder + ": cannot create the checkpoint folder: " + ec.message());
  write_file_atomically((fs::path(folder) / checkpoint_file_name(step)).string(), file);
  const std::vector<std::string> all = list_checkpoints(folder);
  for (std::size_t i = static_cast<std::size_t>(std::max(keep, 1)); i < all.size(); ++i) {
    fs::remove(all[i], ec);  // a file that cannot go is kept, not fatal
  }
}

std::vector<std::string> list_checkpoints(const std::string& folder) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const int64_t step = step_of(entry.path().filename().string());
    if (step >= 0 && entry.is_regular_file(ec)) found.emplace_back(step, entry.path().string());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a > b; });
  std::vector<std::string> paths;
  for (auto& [step, path] : found) paths.push_back(std::move(path));
  return paths;
}

ResumeChoice choose_checkpoint(const std::string& path, const CheckpointLayout& layout) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError("--resume " + path + ": no such file or folder");
  if (!fs::is_directory(path, ec)) {
    try {
      return {.checkpoint = load(path, layout), .skipped = {}};
    } catch (const DataError& e) {
      throw InputError(std::string("--resume: ") + e.what());
    }
  }
  fs::path folder = path;
  if (fs::is_directory(folder / "checkpoints", ec)) folder /= "checkpoints";
  ResumeChoice choice;
  for (const std::string& file : list_checkpoints(folder.string())) {
    try {
      choice.checkpoint = load(file, layout);
      return choice;
    } catch (const DataError& e) {
      choice.skipped.push_back(e.what());
    }
  }
  std::string why = "--resume " + path + ": no valid checkpoint in " + folder.string();
  if (choice.skipped.empty()) {
    why += " (none written: checkpoints need checkpoint.every_steps or every_seconds)";
  }
  for (const std::string& skipped : choice.skipped) why += "\n  skipped " + skipped;
  throw InputError(why);
}

}  // namespace distlab::checkpoint
