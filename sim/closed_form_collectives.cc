#include "sim/closed_form_collectives.h"

#include <algorithm>
#include <simgrid/s4u.hpp>

namespace distlab::sim {

double ring_rounds_seconds(const std::vector<strategy::TaskId>& ring,
                           const strategy::ClusterSpec& cluster,
                           const std::vector<LinkFigures>& links, uint64_t chunk_bytes,
                           int rounds) {
  // Each round every member sends to the next at once: the round takes the
  // slowest pair's latency and transfer, and waits for it.
  double slowest = 0;
  const std::size_t p = ring.size();
  for (std::size_t i = 0; i < p; ++i) {
    const LinkFigures& from = links.at(static_cast<std::size_t>(cluster.ordinal(ring[i])));
    const LinkFigures& to = links.at(static_cast<std::size_t>(cluster.ordinal(ring[(i + 1) % p])));
    const double bandwidth = std::min(from.bandwidth, to.bandwidth);
    slowest =
        std::max(slowest, from.latency + to.latency + static_cast<double>(chunk_bytes) / bandwidth);
  }
  return rounds * slowest;
}

double ClosedFormCollectives::exchange(uint64_t sequence, const std::vector<strategy::TaskId>& ring,
                                       const strategy::ClusterSpec& cluster, uint64_t chunk_bytes,
                                       int rounds) {
  auto found = meetings_.find(sequence);
  if (found == meetings_.end()) {
    Meeting meeting;
    meeting.barrier = simgrid::s4u::Barrier::create(static_cast<unsigned>(ring.size()));
    meeting.seconds = ring_rounds_seconds(ring, cluster, links_, chunk_bytes, rounds);
    meeting.left = static_cast<int>(ring.size());
    found = meetings_.emplace(sequence, std::move(meeting)).first;
  }
  const simgrid::s4u::BarrierPtr barrier = found->second.barrier;
  const double seconds = found->second.seconds;
  barrier->wait();
  // The barrier opens at the last member's arrival.
  const double last_arrival = simgrid::s4u::Engine::get_clock();
  // Actors run one at a time: the entry is still there for every member.
  auto meeting = meetings_.find(sequence);
  if (--meeting->second.left == 0) meetings_.erase(meeting);
  if (seconds > 0) simgrid::s4u::this_actor::sleep_for(seconds);
  return last_arrival;
}

}  // namespace distlab::sim
