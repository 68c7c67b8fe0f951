#include "net/runtime/peer_memory.h"

#include <sys/prctl.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "common/error.h"

namespace distlab::net {

namespace {

// Reads what it can; the number of bytes read, or -1 with errno set.
// process_vm_readv may stop short of the request (at most a few hundred
// MB a call on some kernels), so the caller loops.
ssize_t read_some(pid_t pid, uint64_t address, std::span<std::byte> into) {
  iovec local{into.data(), into.size()};
  iovec remote{reinterpret_cast<void*>(static_cast<uintptr_t>(address)), into.size()};
  return ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
}

}  // namespace

bool PeerMemory::holds(uint64_t address, std::span<const std::byte> expected) const noexcept {
  std::vector<std::byte> found(expected.size());
  const ssize_t got = read_some(pid_, address, found);
  return got == static_cast<ssize_t>(expected.size()) &&
         std::equal(found.begin(), found.end(), expected.begin());
}

void PeerMemory::read(uint64_t address, std::span<std::byte> into) const {
  while (!into.empty()) {
    const ssize_t got = read_some(pid_, address, into);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      const std::string why = got < 0 ? std::strerror(errno) : "nothing read";
      throw Error("cannot read " + std::to_string(into.size()) + " bytes of process " +
                  std::to_string(pid_) + "'s memory: " + why);
    }
    address += static_cast<uint64_t>(got);
    into = into.subspan(static_cast<std::size_t>(got));
  }
}

void allow_peer_reads() noexcept {
#ifdef PR_SET_PTRACER
  // Any process of this user, since the peers are only known once they
  // connect, and Yama keeps one named reader at a time. Such a process
  // could attach a debugger anyway, but for Yama.
  ::prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
}

}  // namespace distlab::net
