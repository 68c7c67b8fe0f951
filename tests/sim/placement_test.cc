// cluster.placement: one_host. Every task computes on one multi-core host
// (SimGrid shares its cores among the executions on it) and talks over one
// shared loopback link, or over links of its own when the scenario sets a
// bandwidth. Against per_task placement, where each task has a host of its
// own, on a catalog of our own whose figures make the expected times exact.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "child_process.h"
#include "common/error.h"
#include "run/run_files.h"
#include "run/scenario.h"
#include "sim/machine.h"
#include "sim/measured_costs.h"
#include "sim/platform.h"
#include "sim/simulation.h"
#include "simulation_harness.h"
#include "strategy/phase.h"
#include "support/error_message.h"

namespace {

namespace fs = std::filesystem;
using distlab::strategy::Phase;
using distlab::testing::simulate_yaml;
using distlab::testing::TinyModelFolder;
using nlohmann::json;

// Figures of the test machine `box`.
struct Box {
  int cores = 1;             // vCPUs: the shared host's cores under one_host
  int threads = 1;           // compute.threads: the threads of each task's compute
  double dense_op_us = 0;    // fixed cost of each dense layer pass
  double loopback_gb = 1e5;  // GB/s of the shared loopback (1e5: the catalog's maximum)
  // The CPU a message costs, both sides: 10 us + bytes at this rate (0: not
  // measured, the one-way time stands in).
  double loopback_cpu_gb = 0;
  // The machine's core_sharing entry's value ("": none, the cores shared
  // evenly).
  std::string core_sharing;
};

// A catalog whose machine `box` is calibrated: every rate at the catalog's
// maximum (1e9 GFLOP/s, 1e5 GB/s), so that an operation costs its op_us
// and nothing measurable besides; only dense passes have a fixed cost. Its
// NIC (per_task) is at the maximum too, and its loopback has no latency.
// `gpubox` has a GPU, `box2` is `box` under another name and `plain` has
// no loopback figures.
std::string write_catalog(const std::string& folder, const Box& box) {
  const std::string rates = "gflops: 1000000000, gb_per_s: 100000}\n";
  std::string machine =
      "    cpu: slow\n    vcpus: " + std::to_string(box.cores) +
      "\n    memory_gib: 4\n    nic_gbps: 100000\n    disk_write_mb_per_s: 100\n"
      "    loopback: {latency_us: 0, gb_per_s: " +
      std::to_string(box.loopback_gb) +
      (box.loopback_cpu_gb > 0
           ? ", cpu_us: 10, cpu_gb_per_s: " + std::to_string(box.loopback_cpu_gb)
           : std::string()) +
      "}\n" +
      (box.core_sharing.empty() ? std::string() : "    core_sharing: " + box.core_sharing + "\n") +
      "    compute:\n      threads: " + std::to_string(box.threads) +
      "\n      dense: {op_us: " + std::to_string(box.dense_op_us) + ", " + rates +
      "      convolution: {op_us: 0, " + rates + "      embedding: {op_us: 0, " + rates +
      "      elementwise: {op_us: 0, " + rates;
  const std::string path = folder + "/placement_machines.yaml";
  std::ofstream(path) << "cpus:\n"
                         "  - name: slow\n    ghz: 1\n    flops_per_cycle_per_vcpu: 1\n"
                         "    efficiency: 1\n    memory_gb_per_s_per_vcpu: 1\n"
                         "    memory_gb_per_s_max: 1\n"
                         "series: []\n"
                         "interconnects:\n"
                         "  - {name: bus, gb_per_s: 10, latency_us: 5}\n"
                         "gpus:\n"
                         "  - {name: gpu, peak_tflops: 10, memory_gb_per_s: 500, memory_gib: 16,\n"
                         "     launch_us: 5, efficiency: 0.5, interconnect: bus}\n"
                         "machines:\n"
                         "  - name: box\n" +
                             machine + "  - name: box2\n" + machine + "  - name: gpubox\n" +
                             machine +
                             "    gpus: {type: gpu, count: 1}\n"
                             "  - name: plain\n    cpu: slow\n    vcpus: 2\n    memory_gib: 4\n"
                             "    nic_gbps: 10\n    disk_write_mb_per_s: 100\n";
  return path;
}

// Allreduce between a chief and a worker (two replicas) on the tiny model,
// timing fidelity. `cluster_extra` and `extra` add keys to `cluster` and to
// the scenario.
// Two replicas of 8 examples a step (a global batch of 16).
std::string allreduce(const std::string& placement, int steps, const std::string& extra = "",
                      const std::string& cluster_extra = "") {
  return "model: tiny.yaml\ndata: synthetic:640\nfidelity: timing\ncluster:\n  machine: box\n"
         "  chief: 1\n  workers: 1\n  placement: " +
         placement + "\n" + cluster_extra +
         "strategy:\n  name: allreduce\ntraining:\n  batch_size: 16\n  steps: " +
         std::to_string(steps) + "\n" + extra;
}

// The scenario's network latency (default 50 us), which per_task links
// have and the shared loopback does not (it has the machine type's).
const std::string kNoLatency = "network:\n  latency_us: 0\n";

// Durations of a task's steps, from one step's start to the next.
std::vector<double> step_durations(const json& task) {
  const json& starts = task["step_starts"];
  std::vector<double> durations;
  for (std::size_t s = 0; s + 1 < starts.size(); ++s) {
    durations.push_back(starts[s + 1].get<double>() - starts[s].get<double>());
  }
  return durations;
}

}  // namespace

TEST_CASE("one_host shares its cores among the tasks' compute, per_task hosts do not") {
  // The tiny model is two dense layers: a step runs 2 forward and 2
  // backward dense passes (the first layer's weights need a gradient), at
  // 1 ms each; everything else (the update, the ring's additions, the
  // messages) costs nothing measurable (rates and links at the catalog's
  // maximum: 172 bytes at 1e14 B/s). So a task alone computes C = 4 ms a
  // step, and both replicas compute at the same moments (the ring keeps
  // them in step). On one_host, SimGrid divides the host's cores among the
  // executions: two tasks of T threads each on K cores each get
  // min(T, K / 2) cores' worth, so a step takes C * T / min(T, K / 2)
  // (K >= T: a task's threads are capped at the host's cores).
  struct Case {
    std::string placement;
    int cores;
    int threads;
    double step;  // seconds
  };
  const Case c = GENERATE(Case{"per_task", 1, 1, 4e-3}, Case{"one_host", 1, 1, 8e-3},
                          Case{"one_host", 2, 1, 4e-3}, Case{"one_host", 2, 2, 8e-3},
                          Case{"one_host", 4, 2, 4e-3});
  INFO(c.placement << ", " << c.cores << " cores, " << c.threads << " threads per task");
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  const std::string catalog =
      write_catalog(dir, {.cores = c.cores, .threads = c.threads, .dense_op_us = 1000});
  const json run = simulate_yaml(dir, "shared", allreduce(c.placement, 5, kNoLatency), catalog);
  REQUIRE(run["replicas"] == 2);
  for (const json& task : run["tasks"]) {
    INFO(task["name"]);
    REQUIRE(task["steps"] == 5);
    // The compute a task's log counts is the time it took, shared or not.
    for (const json& compute : task["compute"]) CHECK(compute.get<double>() == Approx(c.step));
    for (double step : step_durations(task)) CHECK(step == Approx(c.step).epsilon(1e-3));
  }
  fs::remove_all(dir);
}

TEST_CASE("on one_host a slowed task holds a core for its extra time, and no longer") {
  // One core, two replicas slowed 3x (the chief) and 2x (the worker): after
  // each dense pass (1 ms alone, shared while both compute) each holds
  // the core for 2 and 1 times the pass's time, the holds sharing the core
  // where they meet. A real spinning thread ends on time, whatever share
  // it got; so does the simulated hold, and each computation takes its
  // factor's time exactly: the extra is (f - 1) / f of the compute.
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  const std::string catalog = write_catalog(dir, {.cores = 1, .threads = 1, .dense_op_us = 1000});
  const json run =
      simulate_yaml(dir, "held",
                    allreduce("one_host", 3,
                              kNoLatency + "slowdowns:\n  - {task: chief:0, factor: 3}\n"
                                           "  - {task: worker:0, factor: 2}\n"),
                    catalog);
  const json& chief = distlab::testing::task_named(run, "chief:0");
  const json& worker = distlab::testing::task_named(run, "worker:0");
  CHECK(chief["slowdown_seconds"].get<double>() ==
        Approx(chief["compute_seconds"].get<double>() * 2 / 3));
  CHECK(worker["slowdown_seconds"].get<double>() ==
        Approx(worker["compute_seconds"].get<double>() / 2));
  // The holds met: the worker's held the core beside the chief's.
  CHECK(worker["compute_seconds"].get<double>() > 3 * 4e-3 * 2);
}

TEST_CASE("one_host shares the cores as unevenly as the machine's core_sharing says") {
  // A ring of four replicas of 1 thread on 2 cores: 2 threads per core.
  // Each step computes 4 ms alone; evenly shared, every step of every
  // replica takes the same time. Drawn unevenly, a replica that got a
  // small share holds the ring back, and the steps vary.
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  const std::string ring =
      "model: tiny.yaml\ndata: synthetic:640\nfidelity: timing\n"
      "cluster:\n  machine: box\n  chief: 1\n  workers: 3\n"
      "  placement: one_host\nstrategy:\n  name: allreduce\n"
      "training:\n  batch_size: 16\n  steps: 12\n";
  auto step_spread = [&](const std::string& name, const std::string& sharing) {
    const std::string catalog = write_catalog(
        dir, {.cores = 2, .threads = 1, .dense_op_us = 1000, .core_sharing = sharing});
    std::ofstream(dir + "/ring.yaml") << ring;
    const auto plan = distlab::sim::plan_cluster(distlab::run::load_scenario(dir + "/ring.yaml"),
                                                 distlab::sim::MachineCatalog::load(catalog));
    const json run = simulate_yaml(dir, name, ring, catalog);
    const std::vector<double> steps = step_durations(run["tasks"][0]);
    const auto [low, high] = std::minmax_element(steps.begin(), steps.end());
    return std::pair{plan.hosts[0].share.spread, *high / *low - 1};
  };
  const auto [even_spread, even] = step_spread("even", "");
  CHECK(even_spread == 0);
  CHECK(even < 1e-6);
  // At 2 threads per core the entry's 0.8, lasting 0.1 ms on average.
  const auto [uneven_spread, uneven] =
      step_spread("uneven", "{correlation_us: 100, spread_by_load: [[2, 0.8], [4, 1.0]]}");
  CHECK(uneven_spread == Approx(0.8));
  CHECK(uneven > 0.05);
  // The same seed, the same steps.
  CHECK(
      step_spread("again", "{correlation_us: 100, spread_by_load: [[2, 0.8], [4, 1.0]]}").second ==
      Approx(uneven));
  fs::remove_all(dir);
}

TEST_CASE("a replica's measured work is charged beside the other replicas on its machine") {
  // Forward passes measured at 1.0 of the model's CPU beside no other
  // replica and 0.25 more for each other one (up to three): a ring of two
  // pays 1.25 times the model's forward CPU, a ring of four 1.75 times,
  // every step, whatever else computes at the moment.
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  const std::string catalog = write_catalog(dir, {.cores = 4, .threads = 1, .dense_op_us = 1000});
  distlab::sim::MeasuredCosts measured;
  measured.measured[0] = true;
  auto& forward = measured.by_class[0][distlab::strategy::index_of(Phase::kForward)];
  forward = {.scale = 1.0, .scale_per_neighbour = 0.25, .max_neighbours = 3};
  auto forward_cpu = [&](const std::string& name, int workers, bool with_costs) {
    const std::string ring =
        "model: tiny.yaml\ndata: synthetic:640\nfidelity: timing\n"
        "cluster:\n  machine: box\n  chief: 1\n  workers: " +
        std::to_string(workers) +
        "\n  placement: one_host\nstrategy:\n  name: allreduce\n"
        "training:\n  batch_size: 16\n  steps: 4\n";
    const json run = simulate_yaml(dir, name, ring, catalog, {},
                                   with_costs ? std::optional(measured) : std::nullopt);
    std::vector<double> cpu;
    for (const json& step : run["tasks"][0]["step_phase_cpu"]) {
      cpu.push_back(step[distlab::strategy::index_of(Phase::kForward)].get<double>());
    }
    return cpu;
  };
  for (const auto& [workers, scale] : {std::pair{1, 1.25}, std::pair{3, 1.75}}) {
    INFO(workers + 1 << " replicas");
    const std::vector<double> model = forward_cpu("model", workers, false);
    const std::vector<double> charged = forward_cpu("charged", workers, true);
    REQUIRE(model.size() == charged.size());
    for (std::size_t i = 0; i < model.size(); ++i) {
      CHECK(model[i] > 0);
      CHECK(charged[i] == Approx(scale * model[i]).epsilon(1e-9));
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("one_host refuses what it cannot put on one machine, naming cluster.placement") {
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  const auto catalog = distlab::sim::MachineCatalog::load(write_catalog(dir, {}));
  auto plan_error = [&](const std::string& yaml) {
    const std::string path = dir + "/refused.yaml";
    std::ofstream(path) << yaml;
    const distlab::run::Scenario scenario = distlab::run::load_scenario(path);
    return distlab::testing::message_of<distlab::ConfigError>(
        [&] { distlab::sim::plan_cluster(scenario, catalog); });
  };
  using Catch::Contains;
  SECTION("a machine type without loopback figures") {
    CHECK(plan_error(allreduce("one_host", 2)).empty());  // `box` has them: the plan is made
    std::string yaml = allreduce("one_host", 2);
    yaml.replace(yaml.find("machine: box"), 12, "machine: plain");
    CHECK_THAT(plan_error(yaml),
               Contains("cluster.placement") && Contains("loopback") && Contains("plain"));
  }
  SECTION("roles on different machine types") {
    CHECK_THAT(plan_error(allreduce("one_host", 2, "", "  worker_machine: box2\n")),
               Contains("cluster.placement") && Contains("box2") && Contains("same machine"));
    // per_task places them as they are.
    CHECK(plan_error(allreduce("per_task", 2, "", "  worker_machine: box2\n")).empty());
  }
  SECTION("a machine with GPUs") {
    std::string yaml = allreduce("one_host", 2);
    yaml.replace(yaml.find("machine: box"), 12, "machine: gpubox");
    CHECK_THAT(plan_error(yaml), Contains("cluster.placement") && Contains("GPUs"));
  }
  fs::remove_all(dir);
}

TEST_CASE("a one_host plan: the machine's cores, its loopback shared, or the scenario's links") {
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  const auto catalog =
      distlab::sim::MachineCatalog::load(write_catalog(dir, {.cores = 3, .loopback_gb = 2}));
  auto plan_of = [&](const std::string& yaml) {
    const std::string path = dir + "/plan.yaml";
    std::ofstream(path) << yaml;
    return distlab::sim::plan_cluster(distlab::run::load_scenario(path), catalog);
  };
  const auto shared = plan_of(allreduce("one_host", 2));
  CHECK(shared.one_host);
  CHECK(shared.cores == 3);
  CHECK(shared.loopback_shared);
  REQUIRE(shared.hosts.size() == 2);
  for (const auto& host : shared.hosts) {
    CHECK(host.link_bandwidth == Approx(2e9));
    CHECK(host.link_latency == 0);
    CHECK(host.device.threads == 1);
    // Without a measured CPU per message, each side pays half the one-way
    // time (no latency here, 2 GB/s).
    CHECK(host.message_cpu.seconds == 0);
    CHECK(host.message_cpu.seconds_per_byte == Approx(0.5 / 2e9));
    // 2 threads on 3 cores: each task reads its messages as they come.
    CHECK_FALSE(host.takes_messages_in_turn);
  }
  // 2 threads on 1 core: what arrived while a task was busy is taken in
  // turn by sender.
  const auto one_core = distlab::sim::MachineCatalog::load(write_catalog(dir, {.cores = 1}));
  std::ofstream(dir + "/crowded.yaml") << allreduce("one_host", 2);
  for (const auto& host :
       distlab::sim::plan_cluster(distlab::run::load_scenario(dir + "/crowded.yaml"), one_core)
           .hosts) {
    CHECK(host.takes_messages_in_turn);
  }
  // With one, each side pays half of it.
  const auto measured = distlab::sim::MachineCatalog::load(
      write_catalog(dir, {.cores = 3, .loopback_gb = 2, .loopback_cpu_gb = 0.5}));
  std::ofstream(dir + "/measured.yaml") << allreduce("one_host", 2);
  const auto measured_plan =
      distlab::sim::plan_cluster(distlab::run::load_scenario(dir + "/measured.yaml"), measured);
  for (const auto& host : measured_plan.hosts) {
    CHECK(host.message_cpu.seconds == Approx(5e-6));
    CHECK(host.message_cpu.seconds_per_byte == Approx(0.5 / 0.5e9));
  }
  // A bandwidth in the scenario: each task's own link, half the latency.
  const auto links =
      plan_of(allreduce("one_host", 2, "network:\n  bandwidth_gbps: 4\n  latency_us: 100\n"));
  CHECK(links.one_host);
  CHECK_FALSE(links.loopback_shared);
  for (const auto& host : links.hosts) {
    CHECK(host.link_bandwidth == Approx(4e9 / 8));
    CHECK(host.link_latency == Approx(50e-6));
  }
  const auto per_task = plan_of(allreduce("per_task", 2));
  CHECK_FALSE(per_task.one_host);
  for (const auto& host : per_task.hosts) CHECK_FALSE(host.takes_messages_in_turn);
  fs::remove_all(dir);
}

namespace {

// Simulates `yaml` with `catalog`, writes its run directory as ./simulate
// does and returns its summary.json.
json simulated_summary(const std::string& dir, const std::string& name, const std::string& yaml,
                       const std::string& catalog) {
  const std::string path = dir + "/" + name + ".yaml";
  std::ofstream(path) << yaml;
  const std::string run_dir = dir + "/" + name + "-run";
  distlab::testing::in_child_process([&] {
    const auto scenario = distlab::run::load_scenario(path);
    const auto machines = distlab::sim::MachineCatalog::load(catalog);
    distlab::run::RunResult result = distlab::sim::simulate(scenario, machines, {});
    result.provenance.machines =
        distlab::sim::machine_facts(distlab::sim::plan_cluster(scenario, machines), machines);
    distlab::run::write_run_directory(run_dir, result);
    return std::string();
  });
  std::ifstream in(run_dir + "/summary.json");
  return json::parse(in);
}

}  // namespace

TEST_CASE("summary.json says where the tasks ran and times training from its first step") {
  const TinyModelFolder scratch(4);
  const std::string& dir = scratch.path();
  // 2 cores, 1 thread per task: each replica's step is its own 4 ms (see
  // the sharing test above).
  const std::string catalog = write_catalog(dir, {.cores = 2, .threads = 1, .dense_op_us = 1000});
  for (const std::string placement : {"one_host", "per_task"}) {
    INFO(placement);
    const json summary =
        simulated_summary(dir, placement, allreduce(placement, 6, kNoLatency), catalog);
    if (placement == "one_host") {
      CHECK(summary["placement"] ==
            json({{"kind", "one_host"}, {"host_cores", 2}, {"threads_per_task", 1}}));
    } else {
      CHECK(summary["placement"] == json({{"kind", "per_task"}}));
    }
    // A simulation starts at its first step.
    CHECK(summary["startup_seconds"] == 0.0);
    CHECK(summary["training_examples_per_second"].get<double>() ==
          Approx(summary["examples_per_second"].get<double>()));
    // 6 steps of 2 replicas x 8 examples (534 training examples: no epoch
    // ends).
    CHECK(summary["examples"] == 96);
    CHECK(summary["median_step_seconds"].get<double>() == Approx(4e-3).epsilon(1e-3));
    const double waiting = summary["waiting_fraction"].get<double>();
    CHECK(waiting >= 0);
    CHECK(waiting <= 1);
    CHECK(waiting <= summary["communication_fraction"].get<double>() + 1e-12);
  }
  fs::remove_all(dir);
}

TEST_CASE("one_host with a network bandwidth: each task's own link of it, not the loopback") {
  // Compute is free here (no op costs, rates at the maximum); a step is the
  // ring: with two replicas, one round of reduce-scatter and one of
  // all-gather, in which each sends the other half the gradient, n / 2
  // bytes, at the same time. No latency anywhere. On one machine a message
  // also costs the CPU what the loopback measured, half on each side:
  // (n / 2) / 2L for the sender and again for the receiver, on a core of
  // its own here (2 cores, 1 thread each), so n / 2L a round. On links of
  // their own (full duplex, B bytes/s each way) the two flows do not meet:
  // a round adds n / 2B, a step n / L + n / B. On the shared loopback the
  // CPU is the whole cost: a step takes n / L.
  const TinyModelFolder scratch(4000);
  const std::string& dir = scratch.path();
  // Loopback of 0.125 GB/s = 1 Gbit/s: the same as the first link below.
  const std::string catalog = write_catalog(dir, {.cores = 2, .loopback_gb = 0.125});
  auto median_step = [&](const std::string& name, const std::string& network) {
    const json run = simulate_yaml(dir, name, allreduce("one_host", 6, network), catalog);
    std::vector<double> steps = step_durations(run["tasks"][0]);
    std::sort(steps.begin(), steps.end());
    return std::pair{run["model_bytes"].get<double>(), steps[steps.size() / 2]};
  };
  const auto [n, one_gbit] =
      median_step("one-gbit", "network:\n  bandwidth_gbps: 1\n  latency_us: 0\n");
  const auto [n4, four_gbit] =
      median_step("four-gbit", "network:\n  bandwidth_gbps: 4\n  latency_us: 0\n");
  const auto [n_shared, shared] = median_step("loopback", "");
  INFO(n << " bytes: 1 Gbit/s links " << one_gbit << " s, 4 Gbit/s " << four_gbit
         << " s, shared loopback " << shared << " s");
  REQUIRE(n > 100e3);  // the tiny model of 4000 hidden units: 40,003 floats
  CHECK(one_gbit == Approx(n / 1.25e8 + n / 1.25e8).epsilon(0.03));
  CHECK(four_gbit == Approx(n / 1.25e8 + n / 5e8).epsilon(0.03));
  CHECK(shared == Approx(n / 1.25e8).epsilon(0.03));
  fs::remove_all(dir);
}
