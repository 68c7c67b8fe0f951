// The simulated cluster of a scenario: one host per task, on the machine
// type its role names, each joined to a central switch by its own
// full-duplex link (its NIC: bandwidth from the machine type or the
// scenario, half the host-to-host latency). A mirrored scenario is one
// machine: its devices are the hosts and its bus (PCIe or NVLink) the links.
// With `placement: one_host`, every task runs on one machine of the chief's
// type, as `./realnet --launch` runs them: their computations share its
// cores (they execute on one multi-core host, and SimGrid divides its cores
// among the executions on it) and their messages share its loopback (the
// machine type's calibrated figures), or, when the scenario sets a
// bandwidth, go through links of their own (tasks in network namespaces).
#pragma once

#include <string>
#include <vector>

#include "run/provenance.h"
#include "run/scenario.h"
#include "sim/compute_model.h"
#include "sim/machine.h"
#include "sim/sim_runtime.h"
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
  InputCpu input_cpu;         // where its input pipeline runs
  // one_host: what a message costs the CPU it shares with the other tasks,
  // on each side (sender and receiver), as cores of the shared host.
  MessageCpu message_cpu;
  // Its role's costs as a real run measured them (--calibrate-from); the
  // model's own by default.
  TaskCosts costs;
  // one_host: its share of the cores, as unevenly as ./calibrate measured
  // the machine's scheduler to share them at this many tasks.
  ShareUnevenness share;
  // one_host with more threads than cores: the messages that arrived while
  // the task was busy are taken in turn by sender (messages_in_turn.h).
  bool takes_messages_in_turn = false;
};

struct ClusterPlan {
  strategy::ClusterSpec cluster;  // the tasks the strategy sees
  std::vector<HostPlan> hosts;    // one per task, in cluster order
  // one_host placement: every task computes on one host of `cores` cores;
  // messages cost that host's CPU (HostPlan::message_cpu: on one machine,
  // moving bytes between processes is the kernel copying them), and then
  // cross a loopback link that adds nothing more (loopback_shared), or
  // links of the hosts' link_* figures (the scenario's bandwidth).
  bool one_host = false;
  int cores = 0;
  bool loopback_shared = true;
};

// Checks the scenario's machine types against the catalog (InputError
// naming the key and the closest types) and lays out the cluster; with
// `measured`, each task's work costs what a real run measured.
ClusterPlan plan_cluster(const run::Scenario& scenario, const MachineCatalog& catalog,
                         const MeasuredCosts* measured = nullptr);

// The machine types the plan uses, each once, with the catalog's figures
// (for summary.json and a report).
std::vector<run::MachineFacts> machine_facts(const ClusterPlan& plan,
                                             const MachineCatalog& catalog);

// For each host of `plan`, in order, the device its task's runtime reads:
// the first host's device that is alike in every field. A simulation of a
// thousand tasks on machines of a few types then has a few devices, which
// stay in the caches as the tasks take turns.
std::vector<const ComputeDevice*> shared_devices(const ClusterPlan& plan);

// Configures SimGrid's network model (before the platform is built).
void configure_network_model(run::NetworkModel model);

// Creates the hosts and links of the plan in the current engine: a host per
// task, in cluster order (with one_host, the same host for every task).
std::vector<simgrid::s4u::Host*> build_platform(const ClusterPlan& plan);

// Speed of one core of a simulated host. Compute time comes from the
// compute model; a shared host turns it into work of this many FLOP per
// second so that SimGrid can share the cores (sim_runtime.cc).
inline constexpr double kCoreSpeed = 1e9;
// The host every task of a one_host plan computes on.
inline constexpr const char* kSharedCpuHost = "one-host/cpu";
// A link that never limits (the loopback of one_host, whose cost is CPU).
inline constexpr double kFreeLinkBandwidth = 1e15;

}  // namespace distlab::sim
