// The readers a fuzz target feeds take paths: its inputs go into files of
// a folder of the process's own ($TMPDIR/distlab-<target>-<pid>), made at
// the first use and removed as the process ends.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace distlab::fuzz {

class ScratchFolder {
 public:
  explicit ScratchFolder(const std::string& target) {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::filesystem::path(dir && *dir ? dir : "/tmp") /
            ("distlab-" + target + "-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Writes `bytes` to `path`, a file of the scratch folder.
inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (out == nullptr) std::abort();  // the scratch folder is this process's own
  std::fwrite(bytes.data(), 1, bytes.size(), out);
  std::fclose(out);
}

}  // namespace distlab::fuzz
