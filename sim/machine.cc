#include "sim/machine.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "common/config_node.h"
#include "common/error.h"

namespace distlab::sim {
namespace {

// Units of the catalog's keys, converted to SI here and nowhere else.
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;  // memory_gib
constexpr double kGB = 1e9;                        // *_gb_per_s: bytes
constexpr double kMB = 1e6;                        // *_mb_per_s: bytes
constexpr double kGbit = 1e9 / 8;                  // *_gbps: bits, as bytes
constexpr double kGHz = 1e9;
constexpr double kTera = 1e12;
constexpr double kMicro = 1e-6;

// Generous bounds: they catch a figure typed in the wrong unit, not a
// machine that does not exist yet.
constexpr double kMaxBandwidthGB = 100'000;  // bytes/s in GB/s
constexpr double kMaxGbps = 100'000;
constexpr double kMaxMemoryGiB = 1'000'000;
constexpr double kMaxFileMs = 60'000;  // a minute per file

// What a vCPU computes, and how much memory bandwidth a machine of it gets.
struct CpuPlatform {
  double flops_per_vcpu = 0;  // peak FLOP/s of one vCPU
  double efficiency = 0;
  double memory_per_vcpu = 0;  // bytes/s
  double memory_max = 0;       // bytes/s
};

// A machine series (n1): its CPU and the rules for network and disk.
struct Series {
  std::string cpu;
  double nic_per_vcpu = 0;  // bytes/s
  double nic_max = 0;       // bytes/s
  double disk_write = 0;    // bytes/s
  double disk_file = 0;     // seconds per file written
};

struct Interconnect {
  double bandwidth = 0;  // bytes/s per direction, per device
  double latency = 0;    // seconds
};

// A figure that must be above zero (as_double's range includes its ends).
double positive(const ConfigNode& node, double max) {
  const double value = node.as_double(0, max);
  if (value <= 0) node.fail("must be above 0");
  return value;
}

// An entry's `name`: present, not empty, not used by an earlier entry.
template <typename Map>
std::string entry_name(const ConfigNode& entry, const Map& earlier) {
  const ConfigNode node = entry.at("name");
  std::string name = node.as_string();
  if (name.empty()) node.fail("must not be empty");
  if (earlier.count(name)) node.fail("name '" + name + "' given twice");
  return name;
}

template <typename Map>
std::vector<std::string> names_of(const Map& map) {
  std::vector<std::string> out;
  out.reserve(map.size());
  for (const auto& [name, value] : map) out.push_back(name);
  return out;
}

// A list section: absent reads as empty, anything else must be a list.
std::size_t list_size(const ConfigNode& root, const std::string& key, bool required) {
  if (!required && !root.has(key)) return 0;
  return root.at(key).size();
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ", ";
    out += "'" + w + "'";
  }
  return out;
}

// Up to three candidates close to `word`, closest first.
std::vector<std::string> closest_names(const std::string& word, std::vector<std::string> pool) {
  std::vector<std::string> out;
  while (out.size() < 3) {
    const std::string best = closest_match(word, pool);
    if (best.empty()) break;
    out.push_back(best);
    pool.erase(std::find(pool.begin(), pool.end(), best));
  }
  return out;
}

[[noreturn]] void unknown_name(const std::string& what, const std::string& name,
                               const std::string& path, const std::vector<std::string>& known) {
  const auto close = closest_names(name, known);
  throw InputError(
      fmt::format("unknown {} '{}' in {} ({})", what, name, path,
                  close.empty() ? "known: " + join(known) : "did you mean " + join(close) + "?"));
}

}  // namespace

MachineCatalog MachineCatalog::load(const std::string& path) {
  const ConfigNode root = ConfigNode::load_file(path);
  root.allow_only({"cpus", "series", "interconnects", "gpus", "machines"});

  MachineCatalog catalog;
  catalog.path_ = path;

  std::map<std::string, CpuPlatform> cpus;
  const std::size_t cpu_count = list_size(root, "cpus", true);
  for (std::size_t i = 0; i < cpu_count; ++i) {
    const ConfigNode e = root.at("cpus")[i];
    e.allow_only({"name", "description", "ghz", "flops_per_cycle_per_vcpu", "efficiency",
                  "memory_gb_per_s_per_vcpu", "memory_gb_per_s_max"});
    const std::string name = entry_name(e, cpus);
    CpuPlatform cpu;
    cpu.flops_per_vcpu =
        positive(e.at("ghz"), 10) * kGHz * positive(e.at("flops_per_cycle_per_vcpu"), 1024);
    cpu.efficiency = positive(e.at("efficiency"), 1);
    cpu.memory_per_vcpu = positive(e.at("memory_gb_per_s_per_vcpu"), kMaxBandwidthGB) * kGB;
    cpu.memory_max = positive(e.at("memory_gb_per_s_max"), kMaxBandwidthGB) * kGB;
    cpus[name] = cpu;
  }
  const auto cpu_names = names_of(cpus);

  std::map<std::string, Series> series;
  const std::size_t series_count = list_size(root, "series", false);
  for (std::size_t i = 0; i < series_count; ++i) {
    const ConfigNode e = root.at("series")[i];
    e.allow_only({"name", "description", "cpu", "nic_gbps_per_vcpu", "nic_gbps_max",
                  "disk_write_mb_per_s", "disk_file_ms"});
    const std::string name = entry_name(e, series);
    Series s;
    s.cpu = e.at("cpu").as_choice(cpu_names);
    s.nic_per_vcpu = positive(e.at("nic_gbps_per_vcpu"), kMaxGbps) * kGbit;
    s.nic_max = positive(e.at("nic_gbps_max"), kMaxGbps) * kGbit;
    s.disk_write = positive(e.at("disk_write_mb_per_s"), kMaxBandwidthGB * 1000) * kMB;
    s.disk_file = e.get_double("disk_file_ms", 0, 0, kMaxFileMs) * 1e-3;
    series[name] = s;
  }
  const auto series_names = names_of(series);

  std::map<std::string, Interconnect> links;
  const std::size_t link_count = list_size(root, "interconnects", false);
  for (std::size_t i = 0; i < link_count; ++i) {
    const ConfigNode e = root.at("interconnects")[i];
    e.allow_only({"name", "description", "gb_per_s", "latency_us"});
    const std::string name = entry_name(e, links);
    links[name] = {.bandwidth = positive(e.at("gb_per_s"), kMaxBandwidthGB) * kGB,
                   .latency = e.at("latency_us").as_double(0, 1e6) * kMicro};
  }
  const auto link_names = names_of(links);

  std::map<std::string, std::string> gpu_link;  // each GPU's usual interconnect
  const std::size_t gpu_count = list_size(root, "gpus", false);
  for (std::size_t i = 0; i < gpu_count; ++i) {
    const ConfigNode e = root.at("gpus")[i];
    e.allow_only({"name", "description", "peak_tflops", "memory_gb_per_s", "memory_gib",
                  "launch_us", "efficiency", "interconnect"});
    GpuType gpu;
    gpu.name = entry_name(e, catalog.gpus_);
    gpu.peak_flops = positive(e.at("peak_tflops"), 10'000) * kTera;
    gpu.memory_bandwidth = positive(e.at("memory_gb_per_s"), kMaxBandwidthGB) * kGB;
    gpu.memory_bytes = positive(e.at("memory_gib"), kMaxMemoryGiB) * kGiB;
    gpu.kernel_launch_seconds = e.at("launch_us").as_double(0, 1e6) * kMicro;
    gpu.efficiency = positive(e.at("efficiency"), 1);
    gpu_link[gpu.name] = e.at("interconnect").as_choice(link_names);
    catalog.gpus_[gpu.name] = gpu;
  }
  const auto gpu_names = names_of(catalog.gpus_);

  const std::size_t machine_count = list_size(root, "machines", true);
  if (machine_count == 0) root.at("machines").fail("the catalog lists no machine types");
  for (std::size_t i = 0; i < machine_count; ++i) {
    const ConfigNode e = root.at("machines")[i];
    e.allow_only({"name", "description", "base", "series", "cpu", "vcpus", "memory_gib", "nic_gbps",
                  "disk_write_mb_per_s", "disk_file_ms", "gpus"});
    const std::string name = entry_name(e, catalog.machines_);
    const int kinds = int(e.has("base")) + int(e.has("series")) + int(e.has("cpu"));
    if (kinds != 1) {
      e.fail("give exactly one of 'base', 'series' or 'cpu'",
             "base: another machine type plus GPUs; series: a type of a series such as n1; "
             "cpu: a machine described in full");
    }

    MachineType m;
    if (auto base = e.find("base")) {
      for (const char* key :
           {"vcpus", "memory_gib", "nic_gbps", "disk_write_mb_per_s", "disk_file_ms"}) {
        if (auto given = e.find(key)) {
          given->fail("not allowed beside 'base'", "the machine takes it from its base");
        }
      }
      const std::string base_name = base->as_string();
      auto found = catalog.machines_.find(base_name);
      if (found == catalog.machines_.end()) {
        const std::string guess = closest_match(base_name, names_of(catalog.machines_));
        base->fail("unknown machine type '" + base_name + "'",
                   guess.empty() ? "a base must be listed above the machine that names it"
                                 : "did you mean '" + guess + "'?");
      }
      m = found->second;
      m.description = base_name;
    } else {
      std::optional<Series> s;
      std::string cpu_name;
      if (auto series_node = e.find("series")) {
        const std::string series_name = series_node->as_choice(series_names);
        s = series.at(series_name);
        cpu_name = s->cpu;
        m.description = series_name + " series on " + cpu_name;
      } else {
        cpu_name = e.at("cpu").as_choice(cpu_names);
        m.description = cpu_name;
      }
      const CpuPlatform& cpu = cpus.at(cpu_name);
      m.vcpus = static_cast<int>(e.at("vcpus").as_int(1, 4096));
      m.memory_bytes = positive(e.at("memory_gib"), kMaxMemoryGiB) * kGiB;
      m.cpu_peak_flops = m.vcpus * cpu.flops_per_vcpu;
      m.cpu_efficiency = cpu.efficiency;
      m.memory_bandwidth = std::min(m.vcpus * cpu.memory_per_vcpu, cpu.memory_max);
      // Network and disk: the machine's own figure, or its series' rule.
      if (e.has("nic_gbps") || !s) {
        m.nic_bandwidth = positive(e.at("nic_gbps"), kMaxGbps) * kGbit;
      } else {
        m.nic_bandwidth = std::min(m.vcpus * s->nic_per_vcpu, s->nic_max);
      }
      if (e.has("disk_write_mb_per_s") || !s) {
        m.disk_write_bandwidth =
            positive(e.at("disk_write_mb_per_s"), kMaxBandwidthGB * 1000) * kMB;
      } else {
        m.disk_write_bandwidth = s->disk_write;
      }
      m.disk_file_seconds = e.has("disk_file_ms") || !s
                                ? e.get_double("disk_file_ms", 0, 0, kMaxFileMs) * 1e-3
                                : s->disk_file;
    }
    m.name = name;

    if (auto gpus = e.find("gpus")) {
      gpus->allow_only({"type", "count", "interconnect"});
      m.gpu = gpus->at("type").as_choice(gpu_names);
      m.gpu_count = static_cast<int>(gpus->at("count").as_int(1, 64));
      const std::string link = gpus->get_choice("interconnect", gpu_link.at(m.gpu), link_names);
      m.bus_bandwidth = links.at(link).bandwidth;
      m.bus_latency = links.at(link).latency;
      m.description += fmt::format(" + {} x {} on {}", m.gpu_count, m.gpu, link);
    }
    if (auto description = e.find("description")) m.description += "; " + description->as_string();
    catalog.machines_[name] = m;
  }
  return catalog;
}

MachineCatalog MachineCatalog::load_default() {
  return load(DISTLAB_SOURCE_DIR "/scenarios/machines.yaml");
}

const MachineType& MachineCatalog::machine(const std::string& name) const {
  auto found = machines_.find(name);
  if (found == machines_.end()) unknown_name("machine type", name, path_, machine_names());
  return found->second;
}

const GpuType& MachineCatalog::gpu(const std::string& name) const {
  auto found = gpus_.find(name);
  if (found == gpus_.end()) unknown_name("GPU type", name, path_, names_of(gpus_));
  return found->second;
}

bool MachineCatalog::has_machine(const std::string& name) const {
  return machines_.count(name) > 0;
}

std::vector<std::string> MachineCatalog::machine_names() const {
  return names_of(machines_);
}

}  // namespace distlab::sim
