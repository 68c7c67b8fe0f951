// Time of a piece of work on a simulated device. Each operation costs a
// fixed overhead per dispatch (the framework's) and per parallel region it
// opens (waking the CPU's thread team), which dominate small layers, then the longer of its
// arithmetic and its memory traffic at the rates of its kind (a roofline per kind: dense products,
// convolutions, embeddings and element-wise passes reach different
// fractions of a device's peak), and each kernel launch adds a fixed
// overhead (GPUs only).
#pragma once

#include <optional>

#include "sim/machine.h"
#include "strategy/work.h"

namespace distlab::sim {

// What every computation's timing reads comes first, the float32 rates
// and the scalars after them: an elementwise computation on a CPU, such as
// a ring's addition, reads one or two cache lines of it.
struct ComputeDevice {
  std::string name;           // "n1-standard-4 cpu", "k80"
  DeviceRates rates;          // per kind of operation, in float32
  double launch_seconds = 0;  // per kernel, on the host
  // A GPU's: the device's own time per kernel (its start and tail, and the
  // gap to the next), and the host's per training step (the framework's
  // loop around the operations: the step's call, the optimizer's
  // bookkeeping). 0 on CPUs, whose per-operation costs cover both.
  double kernel_device_seconds = 0;
  double step_host_seconds = 0;
  // A GPU: the host dispatches kernels (a framework op and a launch each)
  // ahead of the device, which runs them in turn, so a piece of work takes
  // the longer of the two (see roofline_seconds). A CPU does both itself.
  bool runs_ahead = false;
  // Threads a task's compute runs on (one_host placement shares the host's
  // cores among tasks by this count); 0 on GPUs.
  int threads = 0;
  // GPUs a task trains on (cluster.gpus_per_task) and the bus between them.
  int devices = 1;
  double bus_bandwidth = 0;  // bytes/s per direction, per device
  double bus_latency = 0;    // seconds per transfer
  // The rates for work in float16 and bfloat16 (strategy::Precision); a
  // device that has none (CPUs) times them as float32.
  std::optional<DeviceRates> float16_rates;
  std::optional<DeviceRates> bfloat16_rates;

  // Alike in every field: tasks on devices alike may share one.
  friend bool operator==(const ComputeDevice&, const ComputeDevice&) = default;
};

// The time of a collective of `bytes` among `device.devices` GPUs over their
// bus, as NCCL's rings run it: a reduce-scatter or an all-gather moves
// (k - 1)/k of the bytes through each device in k - 1 steps; a reduce is a
// reduce-scatter then a gather to one; a broadcast is pipelined through
// the chain, the bytes once plus a latency per hop. 0 with one device.
double bus_collective_seconds(strategy::DeviceCollective collective, uint64_t bytes,
                              const ComputeDevice& device);

ComputeDevice cpu_device(const MachineType& machine);
// The machine's CPU as a task computing on `threads` threads sees it: a
// calibrated machine's rates measured at the most threads not above it
// (its fewest if none), computing on that many threads.
ComputeDevice cpu_device(const MachineType& machine, int threads);
ComputeDevice gpu_device(const GpuType& gpu);
// Every kind at the same rates, no dispatch overhead (tests, simple models).
ComputeDevice uniform_device(std::string name, double flops, double memory_bandwidth,
                             double launch_seconds);

// The time of `work` on `device`. On a CPU, each operation costs its fixed
// costs (op_seconds per dispatch, region_seconds per parallel region) plus
// the longer of its FLOPs and its bytes at its kind's rates, one after the
// other. On a GPU (runs_ahead), the host spends launch_seconds plus its
// kind's op_seconds (the framework's dispatch) on every kernel while the
// device runs each operation's longer of FLOPs and bytes plus
// kernel_device_seconds a kernel; work that starts a training step adds
// step_host_seconds to the host's side. The host runs
// ahead, so the work takes the longer of the host's sum and the device's:
// small models are bound by dispatch, large ones by the device.
double roofline_seconds(const strategy::Work& work, const ComputeDevice& device);
// On a GPU (runs_ahead), the two sides of roofline_seconds: the host's
// dispatching and the device's running, which roofline_seconds takes the
// longer of.
struct HostAndDevice {
  double host = 0;
  double device = 0;
};
HostAndDevice host_and_device_seconds(const strategy::Work& work, const ComputeDevice& device);

// What a replica training on `machine` in mixed `precision` should be told,
// as TensorFlow tells it: a GPU without Tensor Cores for the format runs
// the products at float32's rate (only the activations' bytes halve), and a
// CPU is timed as in float32. Empty when the format runs at full speed.
std::string precision_warning(const MachineType& machine, const GpuType* gpu,
                              strategy::Precision precision);

}  // namespace distlab::sim
