// What the two halves of bench/realnet_allreduce share: its options, the
// buffer sizes and iteration counts of ../shared/peers/torch_allreduce.py,
// and the two benchmarks, each run by every process of the cluster.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "net/runtime/tcp_runtime.h"
#include "strategy/config.h"

namespace distlab::bench {

struct Size {
  std::string name;
  int64_t bytes = 0;
};

struct Options {
  int procs = 2;
  std::optional<int> rank;
  std::vector<uint16_t> ports;
  bool tf_config = false;
  bool ps = false;
  std::vector<std::string> sizes = {"1KB", "1MB", "25MB", "100MB"};
  double iter_scale = 1.0;
  int warmup = 2;
  double timeout_s = 600;
  bool breakdown = false;
  bool same_host_reads = false;
  int64_t segment_bytes = strategy::StrategyConfig{}.segment_bytes;
};

// "1KB", "25MB", "1GB" (binary multiples, as the peer's sizes), or bytes.
Size parse_size(const std::string& text);
// The peer's iteration counts (torch_allreduce.py, iters_for).
int iters_for(int64_t bytes, double scale);
double seconds_since(std::chrono::steady_clock::time_point start);
double median(std::vector<double> v);
// Everybody in `ring` has entered (a ring all-reduce cannot finish before
// every member has sent its first chunk).
void barrier(strategy::Runtime& runtime, const std::vector<strategy::TaskId>& ring, int rank,
             int64_t& step);

// The ring all-reduce benchmark (realnet_ring_bench.cc): rank 0 prints a
// JSON line per size.
void run_ring_benchmark(net::TcpRuntime& runtime, const std::vector<Size>& sizes, const Options& o);
// The parameter-server benchmark (realnet_ps_bench.cc): the PS prints a
// JSON line per size.
void run_ps_benchmark(net::TcpRuntime& runtime, const std::vector<Size>& sizes, const Options& o);

}  // namespace distlab::bench
