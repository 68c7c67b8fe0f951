#include "sim/compute_model.h"

#include <algorithm>
#include <string>

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
          .kernel_device_seconds = gpu.kernel_device_seconds,
          .step_host_seconds = gpu.step_host_seconds,
          .runs_ahead = true,
          .threads = 0,
          .float16_rates = gpu.float16_rates,
          .bfloat16_rates = gpu.bfloat16_rates};
}

ComputeDevice uniform_device(std::string name, double flops, double memory_bandwidth,
                             double launch_seconds) {
  ComputeDevice device{.name = std::move(name), .rates = {}, .launch_seconds = launch_seconds};
  device.rates.fill({.op_seconds = 0, .flops = flops, .bytes_per_second = memory_bandwidth});
  return device;
}

namespace {

const DeviceRates& rates_at(const ComputeDevice& device, strategy::Precision precision) {
  switch (precision) {
    case strategy::Precision::kFloat16:
      return device.float16_rates ? *device.float16_rates : device.rates;
    case strategy::Precision::kBFloat16:
      return device.bfloat16_rates ? *device.bfloat16_rates : device.rates;
    case strategy::Precision::kFloat32:
      break;
  }
  return device.rates;
}

// The time of `work`: on a CPU in `seconds`; on a GPU (runs_ahead) the
// host's and the device's apart.
struct WorkTime {
  double seconds = 0;         // a CPU: everything in turn
  double host_seconds = 0;    // a GPU: dispatching its kernels...
  double device_seconds = 0;  // ...and running them
};

WorkTime work_time(const strategy::Work& work, const ComputeDevice& device) {
  WorkTime t;
  if (device.runs_ahead && work.starts_step) t.host_seconds = device.step_host_seconds;
  for (const auto& item : work.items) {
    const OpRates& rates = rates_of(rates_at(device, item.precision), item.kind);
    if (!(rates.flops > 0) || !(rates.bytes_per_second > 0)) {
      throw Error("device '" + device.name + "' has no compute rate or memory bandwidth for " +
                  strategy::op_kind_name(item.kind) + " operations: cannot time '" + work.label +
                  "'");
    }
    const double roofline = std::max(item.flops / rates.flops, item.bytes / rates.bytes_per_second);
    if (device.runs_ahead) {
      t.host_seconds += item.kernels * (device.launch_seconds + rates.op_seconds);
      t.device_seconds += roofline + item.kernels * device.kernel_device_seconds;
    } else {
      t.seconds += item.ops * rates.op_seconds + item.regions * rates.region_seconds + roofline +
                   item.kernels * device.launch_seconds;
    }
  }
  return t;
}

}  // namespace

double roofline_seconds(const strategy::Work& work, const ComputeDevice& device) {
  const WorkTime t = work_time(work, device);
  return device.runs_ahead ? std::max(t.host_seconds, t.device_seconds) : t.seconds;
}

HostAndDevice host_and_device_seconds(const strategy::Work& work, const ComputeDevice& device) {
  const WorkTime t = work_time(work, device);
  return {.host = t.host_seconds, .device = t.device_seconds};
}

double bus_collective_seconds(strategy::DeviceCollective collective, uint64_t bytes,
                              const ComputeDevice& device) {
  const int k = device.devices;
  if (k <= 1) return 0;
  if (!(device.bus_bandwidth > 0)) {
    throw Error("device '" + device.name + "' has " + std::to_string(k) +
                " GPUs and no bus between them");
  }
  const double steps = k - 1;
  const double part = static_cast<double>(bytes) / k / device.bus_bandwidth;
  switch (collective) {
    case strategy::DeviceCollective::kReduceScatter:
    case strategy::DeviceCollective::kAllGather:
      return steps * (device.bus_latency + part);
    case strategy::DeviceCollective::kReduce:
      return 2 * steps * (device.bus_latency + part);
    case strategy::DeviceCollective::kBroadcast:
      return steps * device.bus_latency + static_cast<double>(bytes) / device.bus_bandwidth;
  }
  return 0;
}

std::string precision_warning(const MachineType& machine, const GpuType* gpu,
                              strategy::Precision precision) {
  if (precision == strategy::Precision::kFloat32) return "";
  const std::string policy = strategy::precision_name(precision);
  if (gpu == nullptr) {
    // TensorFlow's guide: "mixed_bfloat16 on CPUs without AMX instructions
    // and mixed_float16 on all x86 CPUs will run significantly slower".
    return "warning: " + machine.name + " trains on its CPU, whose " + policy +
           " is timed as float32 (precision is modelled on GPUs; TensorFlow runs " + policy +
           " on most x86 CPUs slower than float32)";
  }
  const bool half = precision == strategy::Precision::kFloat16;
  const double tensor_flops = half ? gpu->float16_flops : gpu->bfloat16_flops;
  if (tensor_flops > 0) return "";
  const std::string capability = gpu->compute_capability.empty()
                                     ? ""
                                     : " (compute capability " + gpu->compute_capability + ")";
  return "warning: " + machine.name + "'s " + gpu->name + capability + " has no " +
         (half ? "float16" : "bfloat16") + " Tensor Cores: " + policy +
         " runs its products at the float32 rate, only activations move at half the bytes" +
         (half ? " (TensorFlow: \"Your GPU may run slowly with dtype policy mixed_float16 because "
                 "it does not have compute capability of at least 7.0\")"
               : " (bfloat16 Tensor Cores came with compute capability 8.0)");
}

}  // namespace distlab::sim
