#include "net/runtime/background_thread.h"

#include <string>
#include <utility>

#include "common/error.h"

namespace distlab::net {

BackgroundThread::BackgroundThread(std::function<void()> prepare, std::function<double()> clock)
    : prepare_(std::move(prepare)), clock_(std::move(clock)) {}

BackgroundThread::~BackgroundThread() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BackgroundThread::start(std::size_t pieces, double factor,
                             strategy::Runtime::BackgroundFn work_fn) {
  {
    const std::lock_guard lock(mutex_);
    if (job_) throw Error("a background computation is already running");
    job_ = std::move(work_fn);
    pieces_ = pieces;
    factor_ = factor;
    ends_.clear();
    failure_ = nullptr;
    last_end_ = clock_();
  }
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
  changed_.notify_all();
}

double BackgroundThread::await(std::size_t piece) {
  std::unique_lock lock(mutex_);
  // The last piece's end waits for the computation to return: what it does
  // after its last piece (the loss's penalties) is the caller's to read.
  const bool last = piece + 1 >= pieces_;
  changed_.wait(lock, [&] { return (ends_.size() > piece && !(last && job_)) || failure_; });
  if (failure_) std::rethrow_exception(failure_);
  return ends_[piece];
}

void BackgroundThread::loop() {
  if (prepare_) prepare_();
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || job_; });
    if (stopping_) return;
    const strategy::Runtime::BackgroundFn job = job_;
    lock.unlock();
    std::exception_ptr failure;
    try {
      job([this](std::size_t) { piece_done(); });
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    if (!failure && ends_.size() != pieces_) {
      failure = std::make_exception_ptr(Error("a background computation told " +
                                              std::to_string(ends_.size()) + " of its " +
                                              std::to_string(pieces_) + " pieces done"));
    }
    failure_ = failure;
    job_ = nullptr;
    changed_.notify_all();
  }
}

// On the thread, as the computation tells it.
void BackgroundThread::piece_done() {
  double end = clock_();
  if (factor_ > 1) {
    // A slow machine's extra time for this piece, spent as one: the core
    // stays busy, as Runtime::compute's hold keeps it.
    const double until = end + (factor_ - 1) * (end - last_end_);
    while ((end = clock_()) < until) {
    }
  }
  last_end_ = end;
  {
    const std::lock_guard lock(mutex_);
    ends_.push_back(end);
  }
  changed_.notify_all();
}

}  // namespace distlab::net
