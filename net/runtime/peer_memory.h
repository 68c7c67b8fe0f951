// Another process's memory, read in place: Linux's cross-memory attach
// (process_vm_readv), one copy from the sender's pages into the receiver's,
// where loopback TCP copies twice (into the kernel's buffers, out of them)
// and wakes both sides for every segment. MPI's and NCCL's transports take
// the same path between processes of one host (CMA, shared memory).
//
// The kernel allows a read where the reader could ptrace the process:
// the same user, in the same PID namespace, and no Yama restriction
// (kernel.yama.ptrace_scope 0) or the target's consent (PR_SET_PTRACER).
// A task therefore proves it can read a peer before it asks the peer to
// send in place: the peer offers 16 random bytes at an address, and the
// task must find them there (holds).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace distlab::net {

class PeerMemory {
 public:
  explicit PeerMemory(pid_t pid) : pid_(pid) {}

  pid_t pid() const { return pid_; }
  // Whether the peer's memory at `address` holds `expected`; false if it
  // cannot be read at all. Never throws.
  bool holds(uint64_t address, std::span<const std::byte> expected) const noexcept;
  // Copies `into.size()` bytes from `address` in the peer into `into`.
  // Throws Error naming the system's reason (the peer exited, the address
  // is not mapped there).
  void read(uint64_t address, std::span<std::byte> into) const;

 private:
  pid_t pid_;
};

// Lets peers of this process (the same user) read its memory where Yama
// would refuse them, as they must to accept its offers. Without Yama this
// changes nothing; where the call is refused, peers cannot read and send
// over TCP.
void allow_peer_reads() noexcept;

}  // namespace distlab::net
