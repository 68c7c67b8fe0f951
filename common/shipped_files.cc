#include "common/shipped_files.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "common/error.h"

namespace distlab {
namespace {

namespace fs = std::filesystem;

bool holds_catalog(const fs::path& folder) {
  std::error_code ec;
  return fs::is_regular_file(folder / "scenarios" / "machines.yaml", ec);
}

// PREFIX/share/distlab for a binary in PREFIX/bin; "" when the binary
// cannot be found (no /proc) or is not installed that way.
fs::path installed_folder() {
  std::error_code ec;
  const fs::path binary = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const fs::path folder = binary.parent_path().parent_path() / "share" / "distlab";
  return holds_catalog(folder) ? folder : fs::path();
}

}  // namespace

std::string shipped_files_folder() {
  if (const char* home = std::getenv("DISTLAB_HOME"); home != nullptr && *home != '\0') {
    if (!holds_catalog(home)) {
      throw InputError(std::string("DISTLAB_HOME=") + home +
                       ": no scenarios/machines.yaml there; set it to the folder that holds "
                       "distlab's scenarios/, or unset it");
    }
    return home;
  }
  static const fs::path installed = installed_folder();
  if (!installed.empty()) return installed.string();
  return DISTLAB_SOURCE_DIR;
}

std::string shipped_scenarios_folder() {
  return shipped_files_folder() + "/scenarios";
}

}  // namespace distlab
