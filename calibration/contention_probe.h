// How much slower the NN core computes when tasks share this machine's
// cores, beyond what an ideal division of the cores gives. ./realnet
// --launch runs its tasks on one machine; SimGrid divides a host's cores
// among its executions perfectly, but real processes whose thread teams
// outnumber the cores also lose time to context switches, to teams waiting
// for a descheduled member at every parallel region, and to each other's
// caches. The probe times the same training steps in one process alone
// and in `processes` processes at once, and the ratio of the shared time
// to the ideal one (alone x threads x processes / cores) is the factor the
// simulator applies to compute on an oversubscribed one_host machine.
#pragma once

#include <string>
#include <vector>

namespace distlab::calibration {

struct ContentionMeasurement {
  int processes = 0;
  int threads = 0;  // per process
  int cores = 0;
  struct Model {
    std::string name;   // "mnist_cnn@64"
    double alone = 0;   // seconds per step, one process
    double shared = 0;  // seconds per step, median over the processes running at once
    double factor = 0;  // shared / (alone x max(1, processes x threads / cores))
  };
  std::vector<Model> models;
  double factor = 1;  // geometric mean over the models, at least 1
};

// Runs `self` (this executable) with --contention-worker, once alone and
// `processes` times at once.
ContentionMeasurement measure_contention(const std::string& self, int threads, int processes,
                                         int steps);

// The worker: times `steps` training steps of each probe model at
// `threads` threads and prints one line per model: "NAME SECONDS_PER_STEP".
int run_contention_worker(int threads, const std::string& models_dir, int steps);

}  // namespace distlab::calibration
