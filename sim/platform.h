// The simulated cluster of a scenario: one host per task, on the machine
// type its role names, each joined to a central switch by its own
// full-duplex link (its NIC: bandwidth from the machine type or the
// scenario, half the host-to-host latency). A mirrored scenario is one
// machine: its devices are the hosts and its bus (PCIe or NVLink) the links.
#pragma once

#include <string>
#include <vector>

#include "run/provenance.h"
#include "run/scenario.h"
#include "sim/compute_model.h"
#include "sim/machine.h"
#include "strategy/task.h"

namespace simgrid::s4u {
class Host;
}

namespace distlab::sim {

struct HostPlan {
  std::string name;           // "worker-3", "gpu-1"
  std::string machine;        // machine type name
  ComputeDevice device;       // where the task's compute runs
  double link_bandwidth = 0;  // bytes/s, each direction
  double link_latency = 0;    // seconds, host to switch
  Disk disk;                  // where the task writes checkpoints
};

struct ClusterPlan {
  strategy::ClusterSpec cluster;  // the tasks the strategy sees
  std::vector<HostPlan> hosts;    // one per task, in cluster order
};

// Checks the scenario's machine types against the catalog (InputError
// naming the key and the closest types) and lays out the cluster.
ClusterPlan plan_cluster(const run::Scenario& scenario, const MachineCatalog& catalog);

// The machine types the plan uses, each once, with the catalog's figures
// (for summary.json and a report).
std::vector<run::MachineFacts> machine_facts(const ClusterPlan& plan,
                                             const MachineCatalog& catalog);

// Configures SimGrid's network model (before the platform is built).
void configure_network_model(run::NetworkModel model);

// Creates the hosts and links of the plan in the current engine.
std::vector<simgrid::s4u::Host*> build_platform(const ClusterPlan& plan);

}  // namespace distlab::sim
