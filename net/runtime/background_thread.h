// A computation that runs beside the task's own thread, which meanwhile
// sends and receives (strategy::Runtime::start_background: the backward
// pass that gradient communication overlaps). One thread, made at the
// first computation and kept for the task's life, so that the NN core's
// parallel team is not made again every step; one computation at a time.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "strategy/runtime.h"

namespace distlab::net {

class BackgroundThread {
 public:
  // `prepare` runs first on the new thread (the NN core's thread count is
  // a setting of each thread); `clock` is the task's (Runtime::now).
  BackgroundThread(std::function<void()> prepare, std::function<double()> clock);
  ~BackgroundThread();
  BackgroundThread(const BackgroundThread&) = delete;
  BackgroundThread& operator=(const BackgroundThread&) = delete;

  // Runs `work_fn` on the thread, which tells each of the `pieces` done in
  // turn. A slowed task's piece (`factor` above 1) then keeps its core busy
  // for factor - 1 times its time, as Runtime::compute holds one.
  void start(std::size_t pieces, double factor, strategy::Runtime::BackgroundFn work_fn);
  // Blocks until piece k is done (the last: until the computation has
  // returned) and returns when it was; rethrows what the computation threw.
  double await(std::size_t piece);

 private:
  void loop();
  void piece_done();

  std::function<void()> prepare_;
  std::function<double()> clock_;
  std::mutex mutex_;
  std::condition_variable changed_;
  strategy::Runtime::BackgroundFn job_;  // the next computation; empty: none
  std::size_t pieces_ = 0;
  double factor_ = 1;
  double last_end_ = 0;       // on the thread: when the previous piece ended
  std::vector<double> ends_;  // the pieces done so far
  std::exception_ptr failure_;
  bool stopping_ = false;
  std::thread thread_;  // last: started once the rest is in place
};

}  // namespace distlab::net
