// Tasks of one cluster, each on a thread of this process, connected over
// loopback TCP: the runtime's tests without processes.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "net/cluster/cluster_config.h"
#include "net/runtime/loopback_ports.h"
#include "net/runtime/tcp_runtime.h"

namespace distlab::net::testing {

// The rank-th of run_tasks's workers.
inline strategy::TaskId worker(int rank) {
  return {strategy::Role::kWorker, rank};
}

// n floats first, first + 1, ...: a payload whose every value is known.
inline std::vector<float> counting(int64_t n, float first) {
  std::vector<float> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = first + static_cast<float>(i);
  return values;
}

// Runs `body` on `tasks` workers connected over loopback, one thread each,
// with the options `configure` sets for each rank (if given). Throws an
// Error that quotes every task's failure (one task's error also fails its
// peers' goodbyes).
inline void run_tasks(int tasks, const std::function<void(net::TcpRuntime&, int rank)>& body,
                      const std::function<void(net::TcpOptions&, int rank)>& configure = {}) {
  const strategy::ClusterSpec spec{.chiefs = 0, .workers = tasks, .ps = 0};
  const net::ClusterAddresses cluster =
      net::loopback_cluster(spec, net::free_loopback_ports(tasks));
  std::vector<std::exception_ptr> errors(tasks);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < tasks; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        net::TcpOptions options;
        options.connect_deadline = std::chrono::seconds(10);
        options.receive_timeout = std::chrono::seconds(20);
        if (configure) configure(options, rank);
        net::TcpRuntime runtime(spec.task_at(rank), cluster, options);
        runtime.set_span_limit(0);
        runtime.connect();
        body(runtime, rank);
        runtime.disconnect();
      } catch (...) {
        errors[rank] = std::current_exception();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  std::string failures;
  for (int rank = 0; rank < tasks; ++rank) {
    if (!errors[rank]) continue;
    try {
      std::rethrow_exception(errors[rank]);
    } catch (const std::exception& e) {
      failures += "rank " + std::to_string(rank) + ": " + e.what() + "\n";
    }
  }
  if (!failures.empty()) throw Error(failures);
}

}  // namespace distlab::net::testing
