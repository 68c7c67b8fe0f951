#include "sim/platform.h"

#include <algorithm>
#include <simgrid/s4u.hpp>

#include "common/error.h"
#include "run/training_inputs.h"
#include "strategy/strategies.h"

namespace distlab::sim {

using strategy::ClusterSpec;
using strategy::Role;

namespace {

std::string host_name(strategy::TaskId task) {
  std::string name = strategy::role_name(task.role);
  name += '-';
  name += std::to_string(task.index);
  return name;
}

// Scenarios loaded with the catalog's names have valid machine types; the
// catalog's own error (with suggestions) covers any other caller.
const MachineType& machine_for(const run::Scenario& scenario, const MachineCatalog& catalog,
                               Role role) {
  return catalog.machine(scenario.cluster.machine_of(role));
}

Disk disk_of(const MachineType& machine) {
  return {.write_bandwidth = machine.disk_write_bandwidth,
          .file_seconds = machine.disk_file_seconds};
}

// The CPU a task's input pipeline runs on: its host's, or its share of it
// where `sharing` tasks or replicas feed from one machine.
InputCpu input_cpu_of(const MachineType& machine, int sharing = 1) {
  return {.ghz = machine.cpu_ghz, .vcpus = std::max(1, machine.vcpus / std::max(1, sharing))};
}

// One machine, one replica per device (mirrored).
ClusterPlan plan_devices_of_one_host(const run::Scenario& scenario, const MachineCatalog& catalog) {
  const MachineType& machine = machine_for(scenario, catalog, Role::kChief);
  if (machine.gpu_count == 0) {
    throw ConfigError(scenario.path, 0, "cluster.machine",
                      "mirrored needs a machine type with GPUs; " + machine.name + " has none",
                      "complex_model_m_gpu, say");
  }
  const int devices = scenario.strategy.devices > 0 ? scenario.strategy.devices : machine.gpu_count;
  if (devices > machine.gpu_count) {
    throw ConfigError(scenario.path, 0, "strategy.devices",
                      std::to_string(devices) + " devices asked, " + machine.name + " has " +
                          std::to_string(machine.gpu_count));
  }
  ClusterPlan plan;
  plan.cluster = run::tasks_of(scenario, devices);
  const ComputeDevice gpu = gpu_device(catalog.gpu(machine.gpu));
  for (const strategy::TaskId task : plan.cluster.tasks()) {
    plan.hosts.push_back({.name = "gpu-" + std::to_string(plan.cluster.ordinal(task)),
                          .machine = machine.name,
                          .device = gpu,
                          .link_bandwidth = machine.bus_bandwidth,
                          .link_latency = machine.bus_latency / 2,
                          .disk = disk_of(machine),
                          .input_cpu = input_cpu_of(machine, devices)});
  }
  return plan;
}

// Refuses what one_host cannot place: roles on other machine types, a
// machine without loopback figures, GPUs.
void check_one_host(const run::Scenario& scenario, const MachineType& machine) {
  for (const strategy::TaskId task : scenario.cluster.spec.tasks()) {
    if (scenario.cluster.machine_of(task.role) != machine.name) {
      throw ConfigError(scenario.path, 0, "cluster.placement",
                        std::string("one_host puts every task on one machine, but the ") +
                            strategy::role_name(task.role) + " tasks are on " +
                            scenario.cluster.machine_of(task.role) + ", not " + machine.name,
                        "give every role the same machine type, or placement: per_task");
    }
  }
  if (!(machine.loopback.bandwidth > 0)) {
    throw ConfigError(scenario.path, 0, "cluster.placement",
                      "one_host needs the loopback figures of machine type " + machine.name +
                          ", and the catalog has none",
                      "use machine: local (./calibrate measures it), or add loopback: "
                      "{latency_us, gb_per_s} to the machine type");
  }
  if (machine.gpu_count > 0 || scenario.cluster.gpus_per_task > 1) {
    throw ConfigError(scenario.path, 0, "cluster.placement",
                      "one_host shares a machine's CPU cores; " + machine.name +
                          " has GPUs, which one_host does not share",
                      "placement: per_task");
  }
}

// On one machine, a message is the kernel copying it between processes, on
// the cores the tasks compute on, half on the sender's side and half on the
// receiver's: the CPU time ./calibrate measured a message to cost, or, for a
// machine type without that figure, its one-way time on an idle machine.
MessageCpu message_cpu_of(const Loopback& loopback) {
  if (loopback.cpu_measured()) {
    return {.seconds = loopback.cpu_seconds / 2, .seconds_per_byte = 0.5 / loopback.cpu_bandwidth};
  }
  return {.seconds = loopback.latency / 2, .seconds_per_byte = 0.5 / loopback.bandwidth};
}

// Every task on one host of the chief's machine type, sharing its cores and
// its loopback.
ClusterPlan plan_one_host(const run::Scenario& scenario, const MachineCatalog& catalog) {
  const strategy::ClusterSpec& spec = scenario.cluster.spec;
  const MachineType& machine = machine_for(scenario, catalog, spec.tasks().front().role);
  check_one_host(scenario, machine);
  ClusterPlan plan;
  plan.cluster = spec;
  plan.one_host = true;
  plan.cores = machine.vcpus;
  // A bandwidth in the scenario: links of their own between the tasks
  // (network namespaces on the one machine), each NIC half the latency.
  plan.loopback_shared = !(scenario.network.bandwidth > 0);
  const MessageCpu message_cpu = message_cpu_of(machine.loopback);
  // Each task computes on its share of the cores, at most on the threads
  // it has (the machine's calibrated count, as ./realnet --threads). Thread
  // teams that outnumber the cores do not run in parallel, they take
  // turns: a team of two on a share of one core steps as fast as one
  // thread (measured on the development machine: two processes of 2
  // threads on 2 cores step like two of 1 thread), so the rates are those
  // measured at the share's thread count.
  const int share = std::max(1, machine.vcpus / static_cast<int>(spec.tasks().size()));
  const ComputeDevice device =
      cpu_device(machine, std::min(std::max(1, machine.cpu_threads), share));
  // The threads every task really runs (./realnet gives each the machine's
  // calibrated count), per core: the load at which ./calibrate measured
  // how unevenly the cores are shared.
  const double load = static_cast<double>(spec.tasks().size()) * std::max(1, machine.cpu_threads) /
                      std::max(1, machine.vcpus);
  const ShareUnevenness uneven{.spread = spread_at(machine.core_sharing, load),
                               .correlation_seconds = machine.core_sharing.correlation_seconds};
  for (const strategy::TaskId task : spec.tasks()) {
    plan.hosts.push_back({.name = host_name(task),
                          .machine = machine.name,
                          .device = device,
                          .link_bandwidth = plan.loopback_shared ? machine.loopback.bandwidth
                                                                 : scenario.network.bandwidth,
                          .link_latency = plan.loopback_shared
                                              ? machine.loopback.latency
                                              : scenario.network.latency_seconds / 2,
                          .disk = disk_of(machine),
                          .input_cpu = input_cpu_of(machine, static_cast<int>(spec.tasks().size())),
                          .message_cpu = message_cpu,
                          .share = uneven,
                          .takes_messages_in_turn = load > 1});
  }
  return plan;
}

// The hosts of the scenario's placement, at the model's costs.
ClusterPlan plan_hosts(const run::Scenario& scenario, const MachineCatalog& catalog) {
  if (strategy::describe(scenario.strategy.kind).placement ==
      strategy::Placement::kDevicesOfOneHost) {
    return plan_devices_of_one_host(scenario, catalog);
  }
  if (scenario.cluster.placement == run::Placement::kOneHost) {
    return plan_one_host(scenario, catalog);
  }
  ClusterPlan plan;
  plan.cluster = scenario.cluster.spec;
  for (const strategy::TaskId task : plan.cluster.tasks()) {
    const MachineType& machine = machine_for(scenario, catalog, task.role);
    // Replicas train on the machine's first GPU if it has one; parameter
    // servers apply updates on the CPU, as TensorFlow places them.
    const bool on_gpu = task.role != Role::kPs && machine.gpu_count > 0;
    const double bandwidth =
        scenario.network.bandwidth > 0 ? scenario.network.bandwidth : machine.nic_bandwidth;
    ComputeDevice device = on_gpu ? gpu_device(catalog.gpu(machine.gpu)) : cpu_device(machine);
    const int gpus = scenario.cluster.gpus_per_task;
    if (task.role != Role::kPs && gpus > 1) {
      if (gpus > machine.gpu_count) {
        throw ConfigError(scenario.path, 0, "cluster.gpus_per_task",
                          std::to_string(gpus) + " GPUs per task, but the " +
                              strategy::role_name(task.role) + " tasks' " + machine.name + " has " +
                              std::to_string(machine.gpu_count),
                          machine.gpu_count > 0 ? "at most " + std::to_string(machine.gpu_count)
                                                : "a machine type with GPUs: complex_model_m_gpu, "
                                                  "a2-highgpu-4g...");
      }
      device.devices = gpus;
      device.bus_bandwidth = machine.bus_bandwidth;
      device.bus_latency = machine.bus_latency;
    }
    plan.hosts.push_back({.name = host_name(task),
                          .machine = machine.name,
                          .device = device,
                          .link_bandwidth = bandwidth,
                          .link_latency = scenario.network.latency_seconds / 2,
                          .disk = disk_of(machine),
                          .input_cpu = input_cpu_of(machine)});
  }
  return plan;
}

}  // namespace

ClusterPlan plan_cluster(const run::Scenario& scenario, const MachineCatalog& catalog,
                         const MeasuredCosts* measured) {
  ClusterPlan plan = plan_hosts(scenario, catalog);
  const std::vector<strategy::TaskId> tasks = plan.cluster.tasks();
  for (std::size_t t = 0; t < plan.hosts.size(); ++t) {
    // Each task's own draws, the scenario's seed deciding them all.
    plan.hosts[t].costs.seed = scenario.seed * 0x9E3779B97F4A7C15ULL + t;
    if (measured) plan.hosts[t].costs.phases = measured->of(tasks[t].role);
  }
  return plan;
}

std::vector<const ComputeDevice*> shared_devices(const ClusterPlan& plan) {
  std::vector<const ComputeDevice*> distinct;  // a few: machine types and thread counts
  std::vector<const ComputeDevice*> devices;
  devices.reserve(plan.hosts.size());
  for (const HostPlan& host : plan.hosts) {
    const auto alike = std::find_if(distinct.begin(), distinct.end(),
                                    [&](const ComputeDevice* d) { return *d == host.device; });
    if (alike != distinct.end()) {
      devices.push_back(*alike);
    } else {
      distinct.push_back(&host.device);
      devices.push_back(&host.device);
    }
  }
  return devices;
}

void configure_network_model(run::NetworkModel model) {
  auto& engine = *simgrid::s4u::Engine::get_instance();
  if (model == run::NetworkModel::kCm02) {
    // Plain alpha-beta: a message of n bytes on a free route takes latency
    // plus n / bandwidth. LV08's corrections (latency x13.01, bandwidth
    // x0.97, 5% cross-traffic for acknowledgements) and the TCP window cap
    // (gamma / 2 latency) are off.
    engine.set_config("network/model:CM02");
    engine.set_config("network/crosstraffic:0");
    engine.set_config("network/TCP-gamma:0");
  } else {
    engine.set_config("network/model:LV08");
  }
}

namespace {

// A host per task for its messages, and one more, kSharedCpuHost with
// plan.cores cores, where every task computes. Messages go through one
// loopback link that all flows share, or, when the scenario sets a
// bandwidth (tasks in network namespaces joined by rate-limited links),
// through each task's own full-duplex link of that bandwidth.
std::vector<simgrid::s4u::Host*> build_one_host(const ClusterPlan& plan) {
  auto* zone = simgrid::s4u::create_full_zone("one-host");
  simgrid::s4u::Host* cpu = zone->create_host(kSharedCpuHost, kCoreSpeed);
  cpu->set_core_count(plan.cores);
  cpu->seal();
  std::vector<simgrid::s4u::Host*> hosts;
  std::vector<simgrid::s4u::SplitDuplexLink*> nics;
  simgrid::s4u::Link* loopback = nullptr;
  if (plan.loopback_shared) {
    // The loopback's time is the CPU's (HostPlan::message_cpu): the link
    // itself adds none.
    loopback = zone->create_link("loopback", kFreeLinkBandwidth);
    loopback->set_sharing_policy(simgrid::s4u::Link::SharingPolicy::FATPIPE);
    loopback->set_latency(0);
    loopback->seal();
  }
  for (const HostPlan& h : plan.hosts) {
    simgrid::s4u::Host* host = zone->create_host(h.name, kCoreSpeed);
    host->seal();
    hosts.push_back(host);
    if (!loopback) {
      auto* nic = zone->create_split_duplex_link(h.name + "/nic", h.link_bandwidth);
      nic->set_latency(h.link_latency);
      nic->seal();
      nics.push_back(nic);
    }
  }
  using simgrid::s4u::LinkInRoute;
  for (std::size_t a = 0; a < hosts.size(); ++a) {
    for (std::size_t b = 0; b < hosts.size(); ++b) {
      if (a == b) continue;
      std::vector<LinkInRoute> route;
      if (loopback) {
        route = {LinkInRoute(loopback)};
      } else {
        route = {LinkInRoute(nics[a], LinkInRoute::Direction::UP),
                 LinkInRoute(nics[b], LinkInRoute::Direction::DOWN)};
      }
      zone->add_route(hosts[a]->get_netpoint(), hosts[b]->get_netpoint(), nullptr, nullptr, route,
                      false);
    }
  }
  zone->seal();
  return hosts;
}

}  // namespace

std::vector<simgrid::s4u::Host*> build_platform(const ClusterPlan& plan) {
  if (plan.one_host) return build_one_host(plan);
  auto* zone = simgrid::s4u::create_star_zone("cluster");
  std::vector<simgrid::s4u::Host*> hosts;
  hosts.reserve(plan.hosts.size());
  for (const HostPlan& h : plan.hosts) {
    // Compute time comes from the roofline model (actors sleep), so the
    // host's speed only matters to SimGrid's bookkeeping.
    simgrid::s4u::Host* host = zone->create_host(h.name, 1e9);
    auto* link = zone->create_split_duplex_link(h.name + "/nic", h.link_bandwidth);
    link->set_latency(h.link_latency);
    link->seal();
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                    {{link, simgrid::s4u::LinkInRoute::Direction::UP}}, true);
    host->seal();
    hosts.push_back(host);
  }
  zone->seal();
  return hosts;
}

std::vector<run::MachineFacts> machine_facts(const ClusterPlan& plan,
                                             const MachineCatalog& catalog) {
  std::vector<run::MachineFacts> facts;
  for (const HostPlan& host : plan.hosts) {
    const bool listed = std::any_of(facts.begin(), facts.end(), [&](const run::MachineFacts& f) {
      return f.name == host.machine;
    });
    if (listed) continue;
    const MachineType& m = catalog.machine(host.machine);
    run::MachineFacts f{.name = m.name, .description = m.description, .figures = {}};
    f.figures = {{"vcpus", m.vcpus},
                 {"memory_gib", m.memory_bytes / (1024.0 * 1024 * 1024)},
                 {"cpu_peak_gflops", m.cpu_peak_flops / 1e9},
                 {"nic_gbps", m.nic_bandwidth * 8 / 1e9},
                 {"disk_write_mb_per_s", m.disk_write_bandwidth / 1e6},
                 {"gpus", m.gpu_count}};
    if (m.gpu_count > 0) {
      const GpuType& gpu = catalog.gpu(m.gpu);
      f.description += (f.description.empty() ? "" : "; ") + std::string("GPU ") + gpu.name;
      f.figures.emplace_back("gpu_peak_tflops", gpu.peak_flops / 1e12);
      f.figures.emplace_back("gpu_memory_gib", gpu.memory_bytes / (1024.0 * 1024 * 1024));
    }
    facts.push_back(std::move(f));
  }
  return facts;
}

}  // namespace distlab::sim
