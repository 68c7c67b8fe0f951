#include "net/runtime/message_memory.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace distlab::net {

bool keep_message_memory() {
#if defined(__GLIBC__)
  // 32 MiB is the largest mmap threshold glibc accepts on 64-bit hosts.
  constexpr int kLargestInHeap = 32 << 20;
  constexpr int kKeptAtTop = 128 << 20;
  return mallopt(M_MMAP_THRESHOLD, kLargestInHeap) == 1 &&
         mallopt(M_TRIM_THRESHOLD, kKeptAtTop) == 1;
#else
  return false;
#endif
}

}  // namespace distlab::net
