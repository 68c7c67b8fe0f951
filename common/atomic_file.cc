#include "common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/error.h"

namespace distlab {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& path, const std::string& what, int error) {
  throw Error(path + ": cannot " + what + ": " + std::strerror(error));
}

// Closes the descriptor on every path out.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

void write_file_atomically(const std::string& path, std::span<const std::byte> bytes) {
  const fs::path target(path);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const fs::path temporary =
      folder / ("." + target.filename().string() + ".tmp-" + std::to_string(::getpid()));
  {
    Descriptor file{::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
    if (file.fd < 0) fail(temporary.string(), "create", errno);
    std::size_t written = 0;
    while (written < bytes.size()) {
      const ssize_t n = ::write(file.fd, bytes.data() + written, bytes.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int error = errno;
        ::unlink(temporary.c_str());
        fail(temporary.string(), "write", error);
      }
      written += static_cast<std::size_t>(n);
    }
    if (::fsync(file.fd) != 0) {
      const int error = errno;
      ::unlink(temporary.c_str());
      fail(temporary.string(), "flush to disk", error);
    }
  }
  if (::rename(temporary.c_str(), target.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    fail(path, "rename the temporary file onto it", error);
  }
  // The rename is durable once the folder's entry is.
  Descriptor dir{::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dir.fd < 0 || ::fsync(dir.fd) != 0) fail(folder.string(), "flush the folder", errno);
}

std::vector<std::byte> read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(path, "cannot open the file");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0);
  std::vector<std::byte> bytes(static_cast<std::size_t>(std::max<std::streamoff>(size, 0)));
  if (!bytes.empty()) in.read(reinterpret_cast<char*>(bytes.data()), size);
  if (!in) throw DataError(path, "cannot read the file");
  return bytes;
}

std::string read_file_text(const std::string& path) {
  const std::vector<std::byte> bytes = read_file_bytes(path);
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace distlab
