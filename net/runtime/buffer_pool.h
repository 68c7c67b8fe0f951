// Float buffers of messages already written, kept for payloads still to be
// read. In a ring all-reduce every received segment is passed on, so the
// buffers a task writes out are the ones it needs for the next reads: with
// them, a steady exchange of same-sized messages allocates, faults in and
// zero-fills nothing (from 1 MB up, glibc would otherwise hand out fresh
// pages, which the kernel zeroes, for every message).
//
// Thread-safe: the io thread takes buffers for its reads, and both it and
// the task's thread give back the buffers they have written.
#pragma once

#include <cstddef>
#include <mutex>
#include <vector>

namespace distlab::net {

class BufferPool {
 public:
  // At most this many buffers are kept, so that take() stays a short scan.
  static constexpr std::size_t kMaxBuffers = 64;

  // Keeps buffers up to `max_bytes` of capacity in all.
  explicit BufferPool(std::size_t max_bytes) : max_bytes_(max_bytes) {}

  // A buffer of `count` floats: the smallest kept one that can hold them,
  // else a new one. Its values are unspecified (the caller overwrites them).
  std::vector<float> take(std::size_t count);
  // Keeps `buffer` for a later take() if it fits under the limit.
  void give(std::vector<float> buffer);

  std::size_t kept_bytes() const;
  std::size_t kept_buffers() const;

 private:
  mutable std::mutex mutex_;
  std::size_t max_bytes_;
  std::size_t kept_bytes_ = 0;
  std::vector<std::vector<float>> kept_;
};

}  // namespace distlab::net
