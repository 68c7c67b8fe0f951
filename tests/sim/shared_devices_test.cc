// The devices tasks' runtimes read (sim/platform.h, shared_devices): one
// for every host on a device alike in every field, and a host's own where
// no earlier host's is alike.
#include <catch2/catch.hpp>

#include "sim/compute_model.h"
#include "sim/platform.h"

TEST_CASE("hosts on devices alike share the first one's, the others keep their own") {
  using namespace distlab::sim;
  ClusterPlan plan;
  const ComputeDevice cpu = uniform_device("cpu", 1e12, 1e11, 0);
  ComputeDevice more_threads = cpu;
  more_threads.threads = cpu.threads + 3;
  ComputeDevice gpu = uniform_device("gpu", 1e14, 1e12, 5e-6);
  gpu.runs_ahead = true;
  for (const ComputeDevice& device : {cpu, gpu, cpu, more_threads, gpu, cpu}) {
    plan.hosts.push_back(HostPlan{.device = device});
  }
  const std::vector<const ComputeDevice*> devices = shared_devices(plan);
  REQUIRE(devices.size() == plan.hosts.size());
  CHECK(devices[0] == &plan.hosts[0].device);
  CHECK(devices[1] == &plan.hosts[1].device);
  CHECK(devices[2] == &plan.hosts[0].device);
  CHECK(devices[3] == &plan.hosts[3].device);  // alike but for its threads
  CHECK(devices[4] == &plan.hosts[1].device);
  CHECK(devices[5] == &plan.hosts[0].device);
  CHECK(shared_devices(ClusterPlan{}).empty());
}
