#include "sim/compute_model.h"

#include <algorithm>

#include "common/error.h"

namespace distlab::sim {

ComputeDevice cpu_device(const MachineType& machine) {
  return {.name = machine.name + " cpu",
          .rates = machine.cpu_rates,
          .launch_seconds = 0,
          .threads = machine.cpu_threads};
}

ComputeDevice cpu_device(const MachineType& machine, int threads) {
  ComputeDevice device = cpu_device(machine);
  if (machine.cpu_rates_by_threads.empty()) return device;
  const auto* chosen = &machine.cpu_rates_by_threads.front();
  for (const auto& entry : machine.cpu_rates_by_threads) {
    if (entry.first <= threads) chosen = &entry;
  }
  device.threads = chosen->first;
  device.rates = chosen->second;
  return device;
}

ComputeDevice gpu_device(const GpuType& gpu) {
  return {.name = gpu.name,
          .rates = gpu.rates,
          .launch_seconds = gpu.kernel_launch_seconds,
          .threads = 0};
}

ComputeDevice uniform_device(std::string name, double flops, double memory_bandwidth,
                             double launch_seconds) {
  ComputeDevice device{.name = std::move(name), .rates = {}, .launch_seconds = launch_seconds};
  device.rates.fill({.op_seconds = 0, .flops = flops, .bytes_per_second = memory_bandwidth});
  return device;
}

double roofline_seconds(const strategy::Work& work, const ComputeDevice& device) {
  double seconds = 0;
  for (const auto& item : work.items) {
    const OpRates& rates = rates_of(device.rates, item.kind);
    if (!(rates.flops > 0) || !(rates.bytes_per_second > 0)) {
      throw Error("device '" + device.name + "' has no compute rate or memory bandwidth for " +
                  strategy::op_kind_name(item.kind) + " operations: cannot time '" + work.label +
                  "'");
    }
    seconds += item.ops * rates.op_seconds + item.regions * rates.region_seconds +
               std::max(item.flops / rates.flops, item.bytes / rates.bytes_per_second) +
               item.kernels * device.launch_seconds;
  }
  return seconds;
}

}  // namespace distlab::sim
