// Machine types of the simulated cluster, read from scenarios/machines.yaml:
// the published figures of cloud instance types (vCPUs, memory, network
// egress cap, disk) and of the accelerators attached to them.
#pragma once

#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/core_sharing.h"
#include "strategy/work.h"

namespace distlab::sim {

// What a device does with one kind of operation (strategy::OpKind): a
// fixed cost per dispatch, then the longer of its arithmetic and its
// memory traffic at these rates.
struct OpRates {
  double op_seconds = 0;        // per dispatch: the framework's overhead
  double region_seconds = 0;    // per CPU parallel region: waking the thread team
  double flops = 0;             // FLOP/s this kind reaches
  double bytes_per_second = 0;  // memory traffic this kind streams

  friend bool operator==(const OpRates&, const OpRates&) = default;
};
using DeviceRates = std::array<OpRates, strategy::kOpKinds>;

inline const OpRates& rates_of(const DeviceRates& rates, strategy::OpKind kind) {
  return rates[static_cast<std::size_t>(kind)];
}

// The loopback path between processes of one machine, as the real runtime
// sees it (one way, runtime to runtime): the link of `one_host` placement.
struct Loopback {
  double latency = 0;    // seconds
  double bandwidth = 0;  // bytes/s, shared by every flow
  // What a message costs the CPU, sender and receiver together, as
  // ./calibrate measured it: cpu_seconds + bytes / cpu_bandwidth. Both 0
  // when not measured (the one-way time stands in for it).
  double cpu_seconds = 0;
  double cpu_bandwidth = 0;  // bytes per CPU second

  bool cpu_measured() const { return cpu_bandwidth > 0; }
};

// One accelerator model (a GPU die, as the framework sees it).
struct GpuType {
  std::string name;             // "k80", "p100", "v100", "t4"
  double peak_flops = 0;        // FP32 FLOP/s at boost clock
  double memory_bandwidth = 0;  // bytes/s
  double memory_bytes = 0;
  double kernel_launch_seconds = 0;  // fixed overhead per kernel launch
  double efficiency = 0;  // fraction of peak that NN kernels reach (default of every kind)
  // What a whole step costs beyond its operations' arithmetic and traffic
  // (fitted to measured steps: scenarios/machines.yaml says how):
  double kernel_device_seconds = 0;  // the device's own time per kernel: start, tail, gaps
  double step_host_seconds = 0;      // the host's per training step: the framework's loop
  double memory_efficiency = 1;      // share of memory_bandwidth that the counted bytes reach
  double mixed_halved_share = 1;     // share of those bytes that mixed precision halves
  // Dense Tensor Core peaks, FLOP/s; 0 where the GPU has none.
  double tf32_flops = 0;
  double float16_flops = 0;
  double bfloat16_flops = 0;
  std::string compute_capability;  // "7.0"; "" when the catalog does not say
  // Per kind of operation. Float32 products and convolutions run at the
  // TF32 peak where there is one (TensorFlow's default since 2.4); float16
  // and bfloat16 ones at their Tensor Core peaks, or at float32's rates on
  // a GPU without them (strategy::Precision).
  DeviceRates rates;
  DeviceRates float16_rates;
  DeviceRates bfloat16_rates;
};

struct MachineType {
  std::string name;         // "n1-standard-4", "complex_model_m_gpu"...
  std::string description;  // where the figures come from, in a few words
  // The machine type a cloud rents it as: its own name, or its base's for
  // a type that adds GPUs to one (complex_model_m_gpu: n1-standard-16).
  std::string instance_type;
  int vcpus = 0;
  double memory_bytes = 0;
  double cpu_peak_flops = 0;  // FP32 FLOP/s of all vCPUs together
  double cpu_ghz = 0;         // a vCPU's clock (input pipelines scale with it)
  double cpu_efficiency = 0;  // fraction of peak that NN kernels reach (default of every kind)
  DeviceRates cpu_rates;      // per kind of operation, at cpu_threads threads
  int cpu_threads = 0;        // compute threads the rates assume: all vCPUs unless calibrated
  bool calibrated = false;    // cpu_rates and loopback measured by ./calibrate
  // Calibrated machines: the rates measured at each thread count, fewest
  // threads first (the last is cpu_rates); empty otherwise.
  std::vector<std::pair<int, DeviceRates>> cpu_rates_by_threads;
  Loopback loopback;                // between processes of this machine
  CoreSharing core_sharing;         // how unevenly the scheduler shares the cores (./calibrate)
  double memory_bandwidth = 0;      // bytes/s, host memory
  double nic_bandwidth = 0;         // bytes/s, egress cap
  double disk_write_bandwidth = 0;  // bytes/s
  double disk_file_seconds = 0;     // fixed cost of writing one file (create, fsync, rename)
  int gpu_count = 0;
  std::string gpu;           // a GpuType name, "" without GPUs
  double bus_bandwidth = 0;  // bytes/s between devices (PCIe or NVLink), per device
  double bus_latency = 0;    // seconds
};

// A host's CPU, as far as an input pipeline sees it.
struct InputCpu {
  double ghz = 0;  // a vCPU's clock
  int vcpus = 0;
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
  // Reads a catalog and then overlays on it, in order: each overlay has the
  // catalog's shape, and an entry replaces the entry of its list with the
  // same name (./calibrate's machines.local.yaml replaces `local`).
  static MachineCatalog load(const std::vector<std::string>& paths);
  // The catalog shipped in scenarios/machines.yaml, with the overlay that
  // ./calibrate writes (default_overlay_path()) when there is one.
  static MachineCatalog load_default();
  // scenarios/machines.local.yaml, or $DISTLAB_MACHINES_OVERLAY when set.
  static std::string default_overlay_path();
  // The files load_default() reads: the catalog, and the overlay if any.
  static std::vector<std::string> default_paths();

  // Throws InputError listing the closest names for an unknown type.
  const MachineType& machine(const std::string& name) const;
  const GpuType& gpu(const std::string& name) const;
  bool has_machine(const std::string& name) const;
  std::vector<std::string> machine_names() const;

  // What the catalog holds, filled in by its reader (machine.cc).
  struct Tables {
    std::map<std::string, MachineType> machines;
    std::map<std::string, GpuType> gpus;
  };

 private:
  std::string path_;  // the files it was read from, for error messages
  Tables tables_;
};

}  // namespace distlab::sim
