// Time of a piece of work on a simulated device, by the roofline model: each
// kernel group takes the longer of its arithmetic at the device's effective
// peak and its memory traffic at the device's memory bandwidth, and each
// kernel launch adds a fixed overhead (GPUs only).
#pragma once

#include "sim/machine.h"
#include "strategy/work.h"

namespace distlab::sim {

struct ComputeDevice {
  std::string name;             // "n1-standard-4 cpu", "k80"
  double effective_flops = 0;   // peak times efficiency
  double memory_bandwidth = 0;  // bytes/s
  double launch_seconds = 0;    // per kernel
};

ComputeDevice cpu_device(const MachineType& machine);
ComputeDevice gpu_device(const GpuType& gpu);

double roofline_seconds(const strategy::Work& work, const ComputeDevice& device);

}  // namespace distlab::sim
