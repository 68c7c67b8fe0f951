#include "calibration/overlay.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/shipped_files.h"
#include "nn/kernels/kernels.h"
#include "sim/machine.h"

namespace distlab::calibration {
namespace {

// The value of `key` in the first line of `file` that starts with it
// ("model name	: Intel..."), or "".
std::string proc_value(const std::string& file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    return value;
  }
  return "";
}

double memory_gib() {
  const std::string kb = proc_value("/proc/meminfo", "MemTotal");
  return kb.empty() ? 1.0 : std::stod(kb) / (1024.0 * 1024.0);
}

// Peak FP32 FLOP per cycle of one vCPU, from the ISA level the kernels run
// at: one FMA unit of the widest vectors (judgment: how many FMA units a
// core has is not visible from inside a VM).
int flops_per_cycle(const std::string& level) {
  if (level == "x86-64-v4") return 32;  // 16 lanes x 2 (multiply and add)
  if (level == "x86-64-v3") return 16;  // 8 lanes x 2
  return 8;                             // SSE: 4 lanes x 2
}

// A kind's rates: a rate the fit found no evidence of (every sample bound
// by the other term) takes the machine's peak or its memory bandwidth, so
// that it never binds below what was measured.
struct Rates {
  double gflops;
  double gb_per_s;
};
Rates rates_or_peak(const KindFit& fit, double peak_gflops, double memory_gb_per_s) {
  return {fit.flops_rate > 0 ? fit.flops_rate / 1e9 : peak_gflops,
          fit.byte_rate > 0 ? fit.byte_rate / 1e9 : memory_gb_per_s};
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", &tm);
  return text;
}

// The loopback entry's CPU keys; none when the probe found no cost per
// byte (the simulator then takes the one-way time for it).
std::string loopback_cpu(const LinkMeasurement& link) {
  if (!(link.cpu_bandwidth > 0)) return "";
  return fmt::format(", cpu_us: {:.2f}, cpu_gb_per_s: {:.3f}", link.cpu_seconds * 1e6,
                     link.cpu_bandwidth / 1e9);
}

// The machine's core_sharing entry, or nothing when it was not measured.
std::string core_sharing_entry(const sim::CoreSharing& sharing) {
  if (!sharing.measured()) return "";
  std::string points;
  for (const auto& [load, spread] : sharing.spread_by_load) {
    points += fmt::format("{}[{:.2f}, {:.3f}]", points.empty() ? "" : ", ", load, spread);
  }
  return fmt::format(
      "    # How unevenly the scheduler shares the cores among more threads than\n"
      "    # cores (tasks of the threads above computing 200 us bursts and sleeping\n"
      "    # 100 us): at each load (threads per core), the standard deviation of the\n"
      "    # logarithm of a task's share over 1 ms, and how long an uneven share lasts.\n"
      "    core_sharing: {{correlation_us: {:.0f}, spread_by_load: [{}]}}\n",
      sharing.correlation_seconds * 1e6, points);
}

}  // namespace

std::string default_overlay_path() {
  return sim::MachineCatalog::default_overlay_path();
}

std::string overlay_text(const MachineFigures& f) {
  const std::string model = proc_value("/proc/cpuinfo", "model name");
  const std::string mhz = proc_value("/proc/cpuinfo", "cpu MHz");
  const double ghz = mhz.empty() ? 2.0 : std::max(0.1, std::stod(mhz) / 1000);
  const int vcpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::string level = nn::kernels::kernels().level;
  const double peak_gflops = vcpus * ghz * flops_per_cycle(level);
  const double memory_gb_per_s = f.memory.bandwidth / 1e9;
  if (f.kernels.empty()) throw Error("the overlay needs at least one kernel measurement");
  const KernelMeasurement& used = f.kernels.back();
  const Rates dense = rates_or_peak(used.kinds[0], peak_gflops, memory_gb_per_s);
  const double efficiency = std::clamp(dense.gflops / peak_gflops, 0.001, 1.0);

  std::string text = fmt::format(
      "# Written by ./calibrate on {} (distlab {}): the figures of this machine,\n"
      "# measured. It replaces the `local` machine type of scenarios/machines.yaml;\n"
      "# run ./calibrate again when the machine changes, or delete this file to go\n"
      "# back to the rough figures there.\n"
      "#\n"
      "# CPU: {} ({} vCPUs, {:.2f} GHz, kernels at ISA level {}).\n"
      "# Peak FLOP/s = vCPUs x GHz x {} FLOP per cycle (one FMA unit of the level's\n"
      "# widest vectors: judgment, a VM does not show its FMA units); only the facts\n"
      "# of a run use it. What the simulator times with is `compute`, fitted to the\n"
      "# NN core's layer passes at each thread count of the list: per kind, a\n"
      "# fixed cost per pass (op_us) and per parallel region it opens\n"
      "# (region_us), plus the longer of FLOPs at `gflops` and bytes at\n"
      "# `gb_per_s`. A rate no sample was bound by is the peak or the memory\n"
      "# bandwidth. A task computes with the entry of the most threads it has\n"
      "# cores for (one_host shares the cores among the tasks).\n",
      utc_now(), f.version, model.empty() ? "unknown" : model, vcpus, ghz, level,
      flops_per_cycle(level));
  text += fmt::format(
      "cpus:\n"
      "  - name: local-calibrated\n"
      "    description: \"{}, calibrated\"\n"
      "    ghz: {:.3f}\n"
      "    flops_per_cycle_per_vcpu: {}\n"
      "    efficiency: {:.4f}                  # dense GFLOP/s below / peak\n"
      "    memory_gb_per_s_per_vcpu: {:.3f}\n"
      "    memory_gb_per_s_max: {:.3f}\n",
      model.empty() ? "this machine" : model, ghz, flops_per_cycle(level), efficiency,
      memory_gb_per_s / vcpus, memory_gb_per_s);
  text += fmt::format(
      "machines:\n"
      "  - name: local\n"
      "    description: this machine, calibrated by ./calibrate on {}\n"
      "    cpu: local-calibrated\n"
      "    vcpus: {}\n"
      "    memory_gib: {:.2f}\n"
      "    # Loopback is the only network of one machine: the NIC figure is its\n"
      "    # bandwidth, so that per_task placement on `local` sees the same path.\n"
      "    nic_gbps: {:.3f}\n"
      "    disk_write_mb_per_s: {:.1f}\n"
      "    disk_file_ms: {:.3f}\n"
      "    # One way through the runtime; then the CPU a message costs, sender and\n"
      "    # receiver together (both copy at once: more than the one-way time).\n"
      "    loopback: {{latency_us: {:.2f}, gb_per_s: {:.3f}{}}}\n"
      "{}"
      "    compute:\n",
      utc_now(), vcpus, memory_gib(), f.loopback.bandwidth * 8 / 1e9,
      std::max(1.0, f.disk.write_bandwidth / 1e6), f.disk.file_seconds * 1e3,
      f.loopback.latency_seconds * 1e6, f.loopback.bandwidth / 1e9, loopback_cpu(f.loopback),
      core_sharing_entry(f.core_sharing));
  for (const KernelMeasurement& kernels : f.kernels) {
    text += fmt::format("      - threads: {}\n", kernels.threads);
    for (int k = 0; k < strategy::kOpKinds; ++k) {
      const KindFit& fit = kernels.kinds[static_cast<std::size_t>(k)];
      const Rates r = rates_or_peak(fit, peak_gflops, memory_gb_per_s);
      text += fmt::format(
          "        {}: {{op_us: {:.3f}, region_us: {:.3f}, gflops: {:.3f}, gb_per_s: {:.3f}}}"
          "   # {} samples, median error {:.1f}%, worst {:.1f}%\n",
          strategy::op_kind_name(static_cast<strategy::OpKind>(k)), fit.op_seconds * 1e6,
          fit.region_seconds * 1e6, r.gflops, r.gb_per_s, fit.samples,
          100 * fit.quality.median_error, 100 * fit.quality.worst_error);
    }
  }
  return text;
}

void check_writable(const std::string& path) {
  const std::filesystem::path folder = std::filesystem::absolute(path).parent_path();
  if (!std::filesystem::is_directory(folder)) {
    throw InputError(path + ": its folder " + folder.string() + " does not exist");
  }
  if (access(folder.c_str(), W_OK) != 0) {
    throw InputError(path + ": its folder " + folder.string() + " is not writable");
  }
}

void write_overlay(const std::string& path, const MachineFigures& figures) {
  const std::string text = overlay_text(figures);
  // Checked against the catalog before it replaces anything.
  const std::string draft = path + ".draft";
  {
    std::ofstream out(draft);
    out << text;
    if (!out) throw Error(draft + ": cannot write the overlay");
  }
  try {
    const auto catalog = sim::MachineCatalog::load(
        std::vector<std::string>{shipped_scenarios_folder() + "/machines.yaml", draft});
    if (!catalog.machine("local").calibrated)
      throw Error("the overlay's `local` is not calibrated");
  } catch (...) {
    std::filesystem::remove(draft);
    throw;
  }
  std::filesystem::remove(draft);
  write_file_atomically(path, std::as_bytes(std::span(text.data(), text.size())));
}

}  // namespace distlab::calibration
