// The caller's floats that borrowed sends (Runtime::send_borrowed) are
// written from, counted until every one is written or dropped. A loan
// lives in a connection's queue, which can outlive the runtime (the io
// thread holds connections by shared pointer), so the count is its own
// shared object, under its own lock.
//
// Thread-safe: the task's thread takes loans and waits for them; the io
// thread returns them as it writes or drops their messages.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

namespace distlab::net {

class SendLoans {
 public:
  enum class Wait { kReturned, kBroken, kTimedOut };

  // Until no loan is out (kReturned), the run has failed (kBroken: a failed
  // connection hands its loans back unwritten, so the floats are free but
  // the sends did not happen), or `timeout` has passed (kTimedOut).
  Wait wait_until_returned(std::chrono::milliseconds timeout);
  // The run failed: what is out may never be written; waiters return.
  void mark_broken();

 private:
  friend class SendLoan;
  std::mutex mutex_;
  std::condition_variable returned_;
  int64_t out_ = 0;
  bool broken_ = false;
};

// One borrowed send's claim on the caller's floats, returned when it is
// destroyed: with its message, once written or dropped.
class SendLoan {
 public:
  SendLoan() = default;
  explicit SendLoan(std::shared_ptr<SendLoans> loans);
  SendLoan(SendLoan&& other) noexcept = default;
  SendLoan& operator=(SendLoan&& other) noexcept;
  ~SendLoan();

 private:
  void give_back() noexcept;
  std::shared_ptr<SendLoans> loans_;
};

}  // namespace distlab::net
