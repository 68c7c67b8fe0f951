// The settings that keep a task's freed memory for its next buffers, as
// glibc reads them at a process's start (common/kept_memory.h).
#include "common/kept_memory.h"

#include <catch2/catch.hpp>
#include <string>

using distlab::kept_memory_tunables;

namespace {
const std::string kOurs = "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=1073741824";
}

TEST_CASE("the malloc settings are added to GLIBC_TUNABLES, after a user's own others") {
  CHECK(kept_memory_tunables(nullptr) == kOurs);
  CHECK(kept_memory_tunables("") == kOurs);
  CHECK(kept_memory_tunables("glibc.cpu.hwcaps=-AVX512F") == "glibc.cpu.hwcaps=-AVX512F:" + kOurs);
}

TEST_CASE("a process whose GLIBC_TUNABLES sets how malloc maps or trims is left as it is") {
  // Already restarted with them (no second restart), or the user's choice.
  CHECK_FALSE(kept_memory_tunables(kOurs.c_str()));
  CHECK_FALSE(kept_memory_tunables("glibc.malloc.mmap_threshold=65536"));
  CHECK_FALSE(kept_memory_tunables("glibc.cpu.hwcaps=-AVX:glibc.malloc.trim_threshold=0"));
  CHECK_FALSE(kept_memory_tunables("glibc.malloc.mmap_max=4"));
}
