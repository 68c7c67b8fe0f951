#include "net/runtime/send_loans.h"

#include <utility>

namespace distlab::net {

SendLoans::Wait SendLoans::wait_until_returned(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  const bool done = returned_.wait_for(lock, timeout, [&] { return out_ == 0 || broken_; });
  if (broken_) return Wait::kBroken;
  return done ? Wait::kReturned : Wait::kTimedOut;
}

void SendLoans::mark_broken() {
  std::lock_guard lock(mutex_);
  broken_ = true;
  returned_.notify_all();
}

SendLoan::SendLoan(std::shared_ptr<SendLoans> loans) : loans_(std::move(loans)) {
  std::lock_guard lock(loans_->mutex_);
  ++loans_->out_;
}

SendLoan& SendLoan::operator=(SendLoan&& other) noexcept {
  if (this != &other) {
    give_back();
    loans_ = std::move(other.loans_);
  }
  return *this;
}

SendLoan::~SendLoan() {
  give_back();
}

void SendLoan::give_back() noexcept {
  if (!loans_) return;
  const std::shared_ptr<SendLoans> loans = std::move(loans_);
  std::lock_guard lock(loans->mutex_);
  if (--loans->out_ == 0) loans->returned_.notify_all();
}

}  // namespace distlab::net
