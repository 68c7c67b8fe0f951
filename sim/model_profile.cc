#include "sim/model_profile.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>

#include "common/error.h"
#include "common/sha256.h"
#include "sim/machine.h"

namespace distlab::sim {

namespace fs = std::filesystem;

std::string profile_folder(const std::string& model_path) {
  const std::string overlay = MachineCatalog::default_overlay_path();
  if (overlay.empty()) return "";
  std::ifstream in(model_path, std::ios::binary);
  if (!in) throw InputError(model_path + ": cannot read the model file");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string digest =
      sha256_hex(std::as_bytes(std::span<const char>(text.data(), text.size())));
  const std::string name = fs::path(model_path).stem().string() + "-" + digest.substr(0, 12);
  return (fs::path(overlay).parent_path() / "profiles" / name).string();
}

std::vector<std::string> profile_runs(const std::string& model_path) {
  const std::string folder = profile_folder(model_path);
  std::vector<std::string> runs;
  std::error_code error;
  if (folder.empty() || !fs::is_directory(folder, error)) return runs;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, error)) {
    if (fs::exists(entry.path() / "summary.json")) runs.push_back(entry.path().string());
  }
  std::sort(runs.begin(), runs.end());
  return runs;
}

}  // namespace distlab::sim
