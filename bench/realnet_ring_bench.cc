// Ring all-reduce over the TCP runtime, measured as torch_allreduce.py
// measures Gloo (see realnet_allreduce.cc for the protocol).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "nn/kernels/kernels.h"
#include "realnet_bench.h"
#include "strategy/ring_allreduce.h"

namespace distlab::bench {
namespace {

// This machine's memcpy of `bytes`, bytes copied per second: the median of
// 7 copies between buffers already faulted in, the yardstick of the bus
// bandwidth (issue 14 asks for a share of it).
double memcpy_bytes_per_second(int64_t bytes) {
  std::vector<char> from(static_cast<std::size_t>(bytes), 1),
      to(static_cast<std::size_t>(bytes), 0);
  std::vector<double> seconds;
  for (int i = 0; i < 7; ++i) {
    const auto start = std::chrono::steady_clock::now();
    std::memcpy(to.data(), from.data(), from.size());
    seconds.push_back(seconds_since(start));
  }
  return static_cast<double>(bytes) / median(seconds);
}

}  // namespace

using strategy::FloatRange;
using strategy::TaskId;

void run_ring_benchmark(net::TcpRuntime& runtime, const std::vector<Size>& sizes,
                        const Options& o) {
  const auto& cluster = runtime.cluster();
  const std::vector<TaskId> ring = cluster.tasks();
  const int p = static_cast<int>(ring.size());
  const int rank = cluster.ordinal(runtime.self());
  int64_t step = 0;
  const int64_t segment_floats = o.segment_bytes / 4;
  auto allreduce = [&](FloatRange data, int64_t at_step) {
    strategy::ring_allreduce(runtime, ring, rank, data, at_step, segment_floats);
  };
  for (const Size& size : sizes) {
    const int64_t n = size.bytes / 4;
    std::vector<float> data(n, 1.0f);
    const int iters = iters_for(size.bytes, o.iter_scale);
    for (int i = 0; i < o.warmup; ++i) allreduce(FloatRange(data), step++);
    // Each rank's times in its own slots; summed over ranks, every slot
    // holds one rank's time exactly (x + 0 = x).
    std::vector<float> times(static_cast<std::size_t>(p) * iters, 0.0f);
    // This rank's accounting over the timed all-reduces (--breakdown).
    double in_ops = 0, adding = 0, waiting = 0, receiving = 0;
    for (int it = 0; it < iters; ++it) {
      std::fill(data.begin(), data.end(), 1.0f);
      barrier(runtime, ring, rank, step);
      const strategy::TaskLog& log = runtime.log();
      adding -= log.compute_seconds;
      waiting -= log.waiting_seconds;
      receiving -= log.communication_seconds;
      const auto start = std::chrono::steady_clock::now();
      allreduce(FloatRange(data), step++);
      const double elapsed = seconds_since(start);
      adding += log.compute_seconds;
      waiting += log.waiting_seconds;
      receiving += log.communication_seconds;
      in_ops += elapsed;
      times[static_cast<std::size_t>(rank) * iters + it] = static_cast<float>(elapsed);
      const bool last = it + 1 == iters;
      const auto wrong = last ? std::find_if(data.begin(), data.end(),
                                             [&](float v) { return v != static_cast<float>(p); })
                              : (data.front() != static_cast<float>(p)  ? data.begin()
                                 : data.back() != static_cast<float>(p) ? data.end() - 1
                                                                        : data.end());
      if (wrong != data.end()) {
        throw Error("all-reduce of " + size.name + ": element " +
                    std::to_string(wrong - data.begin()) + " is " + std::to_string(*wrong) +
                    ", not " + std::to_string(p));
      }
    }
    if (o.breakdown) {
      // Where this rank's time in the timed all-reduces went, per iteration:
      // adding, blocked before a message began to arrive, receiving it, and
      // the rest (copying chunks into messages, sending, this loop).
      const double other = in_ops - adding - waiting - receiving;
      std::fprintf(stderr,
                   "rank %d %s: %.3f ms an iteration: add %.3f, wait %.3f, receive+send %.3f, "
                   "other %.3f\n",
                   rank, size.name.c_str(), in_ops / iters * 1e3, adding / iters * 1e3,
                   waiting / iters * 1e3, receiving / iters * 1e3, other / iters * 1e3);
    }
    strategy::ring_allreduce(runtime, ring, rank, FloatRange(times), step++);
    // Rank 0 times memcpy while the others wait in a barrier, idle.
    const double memcpy_GBps = rank == 0 ? memcpy_bytes_per_second(size.bytes) / 1e9 : 0;
    barrier(runtime, ring, rank, step);
    std::vector<double> slowest(iters, 0.0);
    for (int r = 0; r < p; ++r) {
      for (int it = 0; it < iters; ++it) {
        slowest[it] = std::max(slowest[it], static_cast<double>(times[r * iters + it]));
      }
    }
    if (rank == 0) {
      const double med = median(slowest);
      const nlohmann::json row = {{"mode", "allreduce"},
                                  {"p", p},
                                  {"size", size.name},
                                  {"bytes", size.bytes},
                                  {"iters", iters},
                                  {"median_s", med},
                                  {"min_s", *std::min_element(slowest.begin(), slowest.end())},
                                  {"algbw_GBps", size.bytes / med / 1e9},
                                  {"busbw_GBps", 2.0 * (p - 1) / p * size.bytes / med / 1e9},
                                  {"memcpy_GBps", memcpy_GBps},
                                  // The ring's sums run on this level's kernels.
                                  {"isa", nn::kernels::kernels().level}};
      std::printf("%s\n", row.dump().c_str());
      std::fflush(stdout);
    }
  }
}

}  // namespace distlab::bench
