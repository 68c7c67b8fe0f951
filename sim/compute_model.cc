#include "sim/compute_model.h"

#include <algorithm>

#include "common/error.h"

namespace distlab::sim {

ComputeDevice cpu_device(const MachineType& machine) {
  return {.name = machine.name + " cpu",
          .effective_flops = machine.cpu_peak_flops * machine.cpu_efficiency,
          .memory_bandwidth = machine.memory_bandwidth,
          .launch_seconds = 0};
}

ComputeDevice gpu_device(const GpuType& gpu) {
  return {.name = gpu.name,
          .effective_flops = gpu.peak_flops * gpu.efficiency,
          .memory_bandwidth = gpu.memory_bandwidth,
          .launch_seconds = gpu.kernel_launch_seconds};
}

double roofline_seconds(const strategy::Work& work, const ComputeDevice& device) {
  if (!(device.effective_flops > 0) || !(device.memory_bandwidth > 0)) {
    throw Error("device '" + device.name +
                "' has no compute rate or memory bandwidth: cannot time '" + work.label + "'");
  }
  double seconds = 0;
  for (const auto& item : work.items) {
    seconds += std::max(item.flops / device.effective_flops, item.bytes / device.memory_bandwidth) +
               item.kernels * device.launch_seconds;
  }
  return seconds;
}

}  // namespace distlab::sim
