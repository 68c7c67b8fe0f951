// Receives posted before their messages come (Runtime::post_recv), by
// (peer ordinal, tag, sequence): the io thread claims the one a message
// stands for and reads its payload straight into the posting's floats.
// A posting without floats of its own to fill (timing fidelity) is not
// kept: its message is received as it comes.
//
// Thread-safe: the task's thread adds and withdraws postings; the io
// thread claims and releases them.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "strategy/runtime.h"

namespace distlab::net {

class PostedReceives {
 public:
  using Key = std::tuple<int, strategy::Tag, uint64_t>;  // peer ordinal, tag, sequence

  void add(const strategy::Posting& posting);
  // Forgets a posting. If its payload is being read at this moment (a task
  // giving up on an error), `end_read` is called to end that read (it ends
  // the connection), and this waits until the read is over, so that nothing
  // writes into the floats after it returns.
  void withdraw(const strategy::Posting& posting, const std::function<void()>& end_read);

  // The floats of the posting that a message from `peer` with this header
  // stands for, claimed for the io thread's read; none when no posting
  // matches it (sequence, lives of both tasks, size) or when it is claimed
  // already. The message is then received as it comes.
  std::optional<strategy::FloatRange> claim(int peer, strategy::Tag tag, uint64_t sequence,
                                            uint32_t from_incarnation, uint32_t to_incarnation,
                                            uint64_t bytes);
  // The read into a claimed posting is over, done or abandoned.
  void release(const Key& key);

 private:
  struct Entry {
    strategy::Posting posting;
    bool reading = false;
  };
  std::mutex mutex_;
  std::condition_variable released_;
  std::map<Key, Entry> posted_;
};

}  // namespace distlab::net
