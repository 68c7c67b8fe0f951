// How unevenly a machine's scheduler shares its cores among the threads
// that outnumber them, as ./calibrate measured it, and the shares that the
// one_host simulation draws from that.
//
// SimGrid shares a host's cores evenly among the executions running on
// it: every task progresses at the same rate, so that asynchronous workers
// push in a fixed round-robin order and a ring never waits for a replica
// the scheduler held back. A real kernel does not: over a millisecond, one
// task of twelve threads on two cores gets half again its fair share and
// another half of it (measured with teams of two threads that compute and
// sleep as training tasks do: the logarithm of a task's share over 1 ms
// has a standard deviation of 0.24 with six such tasks on two cores, 0.06
// with three). The simulator gives each task's executions a weight in the
// sharing, exp(spread * z), with z a standard normal that the task draws
// anew after a random time of mean `correlation_seconds`: the measured
// unevenness, seeded, so a simulation stays deterministic.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace distlab::sim {

// ./calibrate's measurement: the spread of a task's share at each load
// (threads per core, all tasks counted), and how long an uneven share
// lasts.
struct CoreSharing {
  std::vector<std::pair<double, double>>
      spread_by_load;  // (threads per core, spread), loads growing
  double correlation_seconds = 0;

  bool measured() const { return !spread_by_load.empty(); }
};

// The spread at `load` threads per core: none at one thread a core or
// fewer, linear between the measured loads (and from (1, 0) to the first),
// the last measured beyond it.
double spread_at(const CoreSharing& sharing, double load);

// What one task's executions on a shared host weigh in the sharing: the
// spread at the host's load and the time an uneven share lasts.
struct ShareUnevenness {
  double spread = 0;
  double correlation_seconds = 0;

  bool uneven() const { return spread > 0; }
};

// A task's weights over time, from its own seed.
class ShareWeights {
 public:
  ShareWeights(ShareUnevenness unevenness, uint64_t seed);
  // The weight of an execution that starts at `now` (seconds): 1 when the
  // sharing is even.
  double at(double now);

 private:
  ShareUnevenness unevenness_;
  std::mt19937_64 random_;
  double weight_ = 1;
  double until_ = 0;  // when the task draws its next share
};

}  // namespace distlab::sim
