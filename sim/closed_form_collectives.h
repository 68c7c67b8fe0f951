// Collectives timed in closed form rather than message by message
// (network.collectives: analytic), for simulations of thousands of
// replicas: a ring all-reduce among p members is 2(p-1) rounds, each a
// latency alpha plus a chunk at bandwidth beta on the ring's slowest link,
// the alpha-beta cost that the message-level ring meets on free links
// (tests/sim/ring_alpha_beta_test.cc). The members meet (the last to
// arrive starts the exchange, as the ring waits for its slowest member),
// then each sleeps the exchange's time. No values move: timing fidelity.
#pragma once

#include <simgrid/forward.h>

#include <cstdint>
#include <map>
#include <vector>

#include "strategy/task.h"

namespace distlab::sim {

// A task's link to the network's switch (sim/platform.h's HostPlan).
struct LinkFigures {
  double latency = 0;    // seconds, host to switch
  double bandwidth = 0;  // bytes/s, each direction
};

// The cost of `rounds` ring rounds of `chunk_bytes` on the slowest link
// between neighbours of `ring` (links by the cluster's ordinals).
double ring_rounds_seconds(const std::vector<strategy::TaskId>& ring,
                           const strategy::ClusterSpec& cluster,
                           const std::vector<LinkFigures>& links, uint64_t chunk_bytes, int rounds);

class ClosedFormCollectives {
 public:
  explicit ClosedFormCollectives(std::vector<LinkFigures> links) : links_(std::move(links)) {}

  // Called by each member of `ring` for its `sequence`-th collective (every
  // member calls them in the same order): blocks until every member has
  // arrived, then for the exchange's time. Returns when the last arrived.
  double exchange(uint64_t sequence, const std::vector<strategy::TaskId>& ring,
                  const strategy::ClusterSpec& cluster, uint64_t chunk_bytes, int rounds);

 private:
  struct Meeting {
    simgrid::s4u::BarrierPtr barrier;
    double seconds = 0;  // the exchange's, reckoned by the first to arrive
    int left = 0;        // members yet to leave it
  };
  std::vector<LinkFigures> links_;
  std::map<uint64_t, Meeting> meetings_;
};

}  // namespace distlab::sim
