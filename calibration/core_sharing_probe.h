// How unevenly this machine's scheduler shares its cores among more
// threads than it has: the probe behind the machine type's core_sharing
// (sim/core_sharing.h).
//
// Tasks of `threads_per_task` threads each, as many as make 2, 3, 4 and 6
// threads per core, do what a training task does on a crowded machine:
// each thread of a task computes a burst of its own CPU time, the task
// waits for all of them, then sleeps a little (a message it waits for).
// Over windows of 1 to 16 ms, the logarithm of each task's share of the
// CPU the tasks got, against the mean, varies from task to task and from
// window to window: its standard deviation over 1 ms windows is the
// spread at that load, and how fast it falls with longer windows tells
// how long an uneven share lasts.
#pragma once

#include <utility>
#include <vector>

#include "sim/core_sharing.h"

namespace distlab::calibration {

struct CoreSharingMeasurement {
  sim::CoreSharing sharing;
  // At each load: (window seconds, standard deviation of the log share).
  std::vector<std::vector<std::pair<double, double>>> spread_by_window;
};

CoreSharingMeasurement measure_core_sharing(int cores, int threads_per_task, double budget_seconds);

// The windowed standard deviations of a share that is constant over
// exponentially distributed times of mean `correlation` and independent
// between them, relative to the first window's: sqrt(g(W/c) / g(W0/c)),
// with g(x) = 2 (x - 1 + e^-x) / x^2 the variance of such a share's mean
// over a window of x correlation times.
double relative_windowed_spread(double window, double first_window, double correlation);

// The correlation time that fits the fall of `spread_by_window` (window
// seconds, spread; the first window first) best, in the logarithm, over
// 0.05 to 100 ms.
double fit_correlation_seconds(const std::vector<std::pair<double, double>>& spread_by_window);

}  // namespace distlab::calibration
