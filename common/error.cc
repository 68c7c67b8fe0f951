#include "common/error.h"

#include <fmt/format.h>

namespace distlab {
namespace {

std::string config_message(const std::string& path, int line, const std::string& key,
                           const std::string& problem, const std::string& hint) {
  std::string m = path;
  if (line > 0) m += fmt::format(":{}", line);
  m += ": ";
  if (!key.empty()) m += fmt::format("{}: ", key);
  m += problem;
  if (!hint.empty()) m += fmt::format(" ({})", hint);
  return m;
}

}  // namespace

ConfigError::ConfigError(const std::string& path, int line, const std::string& key,
                         const std::string& problem, const std::string& hint)
    : InputError(config_message(path, line, key, problem, hint)),
      path_(path),
      line_(line),
      key_(key) {}

DataError::DataError(const std::string& path, const std::string& problem)
    : InputError(path + ": " + problem), path_(path) {}

}  // namespace distlab
