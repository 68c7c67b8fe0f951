#include "common/kept_memory.h"

#include <unistd.h>

#include <cstdlib>

namespace distlab {
namespace {

constexpr long kKeptAtTop = 1L << 30;

}  // namespace

std::optional<std::string> kept_memory_tunables(const char* current) {
  const std::string now = current == nullptr ? "" : current;
  for (const char* setting :
       {"glibc.malloc.mmap_max=", "glibc.malloc.mmap_threshold=", "glibc.malloc.trim_threshold="}) {
    if (now.find(setting) != std::string::npos) return std::nullopt;
  }
  const std::string ours =
      "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=" + std::to_string(kKeptAtTop);
  return now.empty() ? ours : now + ":" + ours;
}

void restart_with_kept_memory(char** argv) {
#if defined(__GLIBC__) && defined(__linux__)
  const auto tunables = kept_memory_tunables(std::getenv("GLIBC_TUNABLES"));
  if (!tunables || argv == nullptr || argv[0] == nullptr) return;
  if (setenv("GLIBC_TUNABLES", tunables->c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Only a failed exec returns: go on as before, with the variable set so
  // that the processes this one starts read it at their start.
#else
  (void)argv;
#endif
}

}  // namespace distlab
