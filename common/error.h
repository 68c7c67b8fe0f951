// One exception family for the whole project. Every message carries the
// context a user needs to act on it: the input file and line, the key, the
// data file, or (later) the task, peer and tag of a failed message.
#pragma once

#include <stdexcept>
#include <string>

namespace distlab {

// Exit statuses shared by every command: bad input is the user's to fix.
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Input the user must fix (a file, a name, an option), as opposed to a
// failure of the run itself: commands exit with kExitBadInput for these.
class InputError : public Error {
 public:
  using Error::Error;
};

// A configuration file (model spec, scenario) that cannot be used.
// what(): "path:line: key: problem (hint)".
class ConfigError : public InputError {
 public:
  ConfigError(const std::string& path, int line, const std::string& key, const std::string& problem,
              const std::string& hint = "");

  const std::string& path() const { return path_; }
  int line() const { return line_; }
  const std::string& key() const { return key_; }

 private:
  std::string path_;
  int line_;
  std::string key_;
};

// A data file that is missing, truncated or malformed. what(): "path: problem".
class DataError : public InputError {
 public:
  DataError(const std::string& path, const std::string& problem);

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace distlab
