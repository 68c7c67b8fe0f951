// Machine types of the simulated cluster, read from scenarios/machines.yaml:
// the published figures of cloud instance types (vCPUs, memory, network
// egress cap, disk) and of the accelerators attached to them.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace distlab::sim {

// One accelerator model (a GPU die, as the framework sees it).
struct GpuType {
  std::string name;             // "k80", "p100", "v100", "t4"
  double peak_flops = 0;        // FP32 FLOP/s at boost clock
  double memory_bandwidth = 0;  // bytes/s
  double memory_bytes = 0;
  double kernel_launch_seconds = 0;  // fixed overhead per kernel launch
  double efficiency = 0;             // fraction of peak that NN kernels reach
};

struct MachineType {
  std::string name;         // "n1-standard-4", "complex_model_m_gpu"...
  std::string description;  // where the figures come from, in a few words
  int vcpus = 0;
  double memory_bytes = 0;
  double cpu_peak_flops = 0;        // FP32 FLOP/s of all vCPUs together
  double cpu_efficiency = 0;        // fraction of peak that NN kernels reach
  double memory_bandwidth = 0;      // bytes/s, host memory
  double nic_bandwidth = 0;         // bytes/s, egress cap
  double disk_write_bandwidth = 0;  // bytes/s
  double disk_file_seconds = 0;     // fixed cost of writing one file (create, fsync, rename)
  int gpu_count = 0;
  std::string gpu;           // a GpuType name, "" without GPUs
  double bus_bandwidth = 0;  // bytes/s between devices (PCIe or NVLink), per device
  double bus_latency = 0;    // seconds
};

// A host's disk, as far as checkpoints see it.
struct Disk {
  double write_bandwidth = 0;  // bytes/s
  double file_seconds = 0;     // fixed cost per file written
};

class MachineCatalog {
 public:
  // Reads a catalog; errors are ConfigErrors naming file, line and key.
  static MachineCatalog load(const std::string& path);
  // The catalog shipped in scenarios/machines.yaml.
  static MachineCatalog load_default();

  // Throws InputError listing the closest names for an unknown type.
  const MachineType& machine(const std::string& name) const;
  const GpuType& gpu(const std::string& name) const;
  bool has_machine(const std::string& name) const;
  std::vector<std::string> machine_names() const;

 private:
  std::string path_;  // the file it was read from, for error messages
  std::map<std::string, MachineType> machines_;
  std::map<std::string, GpuType> gpus_;
};

}  // namespace distlab::sim
