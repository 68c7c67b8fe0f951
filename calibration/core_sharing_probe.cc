#include "calibration/core_sharing_probe.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <memory>
#include <thread>

#include "common/error.h"

namespace distlab::calibration {
namespace {

constexpr double kBurstSeconds = 200e-6;          // of each thread's own CPU, as a short layer pass
constexpr double kSleepSeconds = 100e-6;          // the task then waits (for a message)
constexpr double kWarmUpShare = 0.1;              // of each load's time, not counted
const std::vector<double> kLoads = {2, 3, 4, 6};  // threads per core
const std::vector<double> kWindows = {1e-3, 2e-3, 4e-3, 8e-3, 16e-3};

double clock_seconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

void spin_cpu_for(double seconds) {
  const double start = clock_seconds(CLOCK_THREAD_CPUTIME_ID);
  volatile double x = 1;
  while (clock_seconds(CLOCK_THREAD_CPUTIME_ID) - start < seconds) {
    for (int i = 0; i < 256; ++i) x = x * 1.0000001;
  }
}

// When each of a task's bursts ended (monotonic seconds).
using BurstEnds = std::vector<double>;

// `tasks` tasks of `threads` threads for `seconds`.
std::vector<BurstEnds> run_tasks(int tasks, int threads, double seconds) {
  std::vector<BurstEnds> ends(static_cast<std::size_t>(tasks));
  std::vector<std::unique_ptr<std::barrier<>>> together;
  for (int t = 0; t < tasks; ++t) together.push_back(std::make_unique<std::barrier<>>(threads));
  const double start = clock_seconds(CLOCK_MONOTONIC) + 0.01;
  std::vector<std::atomic<bool>> stop(static_cast<std::size_t>(tasks));
  std::vector<std::thread> running;
  for (int t = 0; t < tasks; ++t) {
    for (int m = 0; m < threads; ++m) {
      running.emplace_back([&, t, m] {
        while (clock_seconds(CLOCK_MONOTONIC) < start) std::this_thread::yield();
        std::barrier<>& all = *together[static_cast<std::size_t>(t)];
        for (;;) {
          all.arrive_and_wait();
          if (stop[static_cast<std::size_t>(t)]) break;
          spin_cpu_for(kBurstSeconds);
          all.arrive_and_wait();
          if (m != 0) continue;
          const double now = clock_seconds(CLOCK_MONOTONIC);
          ends[static_cast<std::size_t>(t)].push_back(now);
          if (now - start >= seconds) stop[static_cast<std::size_t>(t)] = true;
          const timespec pause{0, static_cast<long>(kSleepSeconds * 1e9)};
          nanosleep(&pause, nullptr);
        }
      });
    }
  }
  for (std::thread& t : running) t.join();
  for (BurstEnds& e : ends) {
    for (double& at : e) at -= start;
  }
  return ends;
}

// Bursts a task finished by `at`, counting the one under way in part.
double bursts_by(const BurstEnds& ends, double at) {
  const auto next = std::upper_bound(ends.begin(), ends.end(), at);
  const auto done = static_cast<double>(next - ends.begin());
  if (next == ends.end()) return done;
  const double from = next == ends.begin() ? 0 : *(next - 1);
  return done + (at - from) / (*next - from);
}

// The standard deviation of log(share / mean share) over windows of
// `window` seconds from `from` to `to`.
double log_share_spread(const std::vector<BurstEnds>& ends, double window, double from, double to) {
  std::vector<double> logs;
  const double floor = 0.02;  // a task that got nothing in a window: 2% of its share
  for (double at = from; at + window <= to; at += window) {
    std::vector<double> got;
    double mean = 0;
    for (const BurstEnds& e : ends) {
      got.push_back(bursts_by(e, at + window) - bursts_by(e, at));
      mean += got.back() / static_cast<double>(ends.size());
    }
    if (!(mean > 0)) continue;
    for (const double g : got) logs.push_back(std::log(std::max(g / mean, floor)));
  }
  if (logs.size() < 2) return 0;
  double mean = 0, square = 0;
  for (const double l : logs) mean += l / static_cast<double>(logs.size());
  for (const double l : logs) square += (l - mean) * (l - mean) / static_cast<double>(logs.size());
  return std::sqrt(square);
}

double variance_of_mean(double x) {
  if (x < 1e-6) return 1 - x / 3;  // the series near 0
  return 2 * (x - 1 + std::exp(-x)) / (x * x);
}

}  // namespace

double relative_windowed_spread(double window, double first_window, double correlation) {
  return std::sqrt(variance_of_mean(window / correlation) /
                   variance_of_mean(first_window / correlation));
}

double fit_correlation_seconds(const std::vector<std::pair<double, double>>& spread_by_window) {
  if (spread_by_window.size() < 2 || !(spread_by_window.front().second > 0)) return 0;
  const double first = spread_by_window.front().first;
  double best = 0, best_error = INFINITY;
  for (double c = 0.05e-3; c <= 100e-3; c *= 1.05) {
    double error = 0;
    for (const auto& [window, spread] : spread_by_window) {
      const double measured = std::max(spread, 1e-6) / spread_by_window.front().second;
      const double d = std::log(measured) - std::log(relative_windowed_spread(window, first, c));
      error += d * d;
    }
    if (error < best_error) {
      best_error = error;
      best = c;
    }
  }
  return best;
}

CoreSharingMeasurement measure_core_sharing(int cores, int threads_per_task,
                                            double budget_seconds) {
  if (cores < 1 || threads_per_task < 1) throw Error("core sharing probe: no cores or threads");
  CoreSharingMeasurement m;
  const double seconds = budget_seconds / static_cast<double>(kLoads.size());
  std::vector<double> correlations;
  for (const double load : kLoads) {
    const int tasks = std::max(
        2, static_cast<int>(std::lround(load * cores / static_cast<double>(threads_per_task))));
    const double real_load = static_cast<double>(tasks * threads_per_task) / cores;
    // Loads that rounding made equal are measured once.
    auto& points = m.sharing.spread_by_load;
    if (!points.empty() && points.back().first == real_load) continue;
    const std::vector<BurstEnds> ends = run_tasks(tasks, threads_per_task, seconds);
    std::vector<std::pair<double, double>> by_window;
    for (const double window : kWindows) {
      by_window.emplace_back(window,
                             log_share_spread(ends, window, kWarmUpShare * seconds, seconds));
    }
    points.emplace_back(real_load, by_window.front().second);
    correlations.push_back(fit_correlation_seconds(by_window));
    m.spread_by_window.push_back(std::move(by_window));
  }
  std::sort(correlations.begin(), correlations.end());
  m.sharing.correlation_seconds = correlations[correlations.size() / 2];
  return m;
}

}  // namespace distlab::calibration
