// Runs a collective alone on a simulated star of identical hosts (no model,
// no training), to hold its simulated time and bytes against the
// alpha-beta model. Call inside in_child_process: it starts an engine.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "strategy/runtime.h"

namespace distlab::testing {

struct CollectiveRun {
  double seconds = 0;                // when the last task finished
  std::vector<double> finished_at;   // per task
  std::vector<uint64_t> bytes_sent;  // per task
  std::vector<uint64_t> bytes_received;
};

struct CollectiveOptions {
  // Every task takes the messages that have arrived in turn by sender, as
  // on a crowded host (SimRuntime::take_messages_in_turn).
  bool messages_in_turn = false;
  // Sends kept until delivered, as in a simulation without faults
  // (SimRuntime::keep_sends_until_delivered); false: detached, as with.
  bool keep_sends = true;
};

// `tasks` workers (no chief, no ps), each host's link `bandwidth` bytes/s,
// host-to-host latency `latency` s, CM02 network model, compute free.
CollectiveRun run_collective(int tasks, double latency, double bandwidth,
                             strategy::Fidelity fidelity,
                             const std::function<void(strategy::Runtime&, int rank)>& body,
                             const CollectiveOptions& options = {});

}  // namespace distlab::testing
