// Free ports on 127.0.0.1, for clusters that run on this machine: the local
// launcher's, the tests', the benchmarks' and ./calibrate's loopback probe.
#pragma once

#include <cstdint>
#include <vector>

namespace distlab::net {

// Ports on 127.0.0.1 the kernel says are free now, all different. Another
// process may take one before it is bound; binding then fails loudly.
std::vector<uint16_t> free_loopback_ports(int count);

}  // namespace distlab::net
