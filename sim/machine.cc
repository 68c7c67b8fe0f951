#include "sim/machine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>

#include "common/config_node.h"
#include "common/error.h"
#include "common/shipped_files.h"

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

// A figure that must be above zero (as_double's range includes its ends).
double positive(const ConfigNode& node, double max) {
  const double value = node.as_double(0, max);
  if (value <= 0) node.fail("must be above 0");
  return value;
}

// A CPU's or GPU's figures for one kind of operation: the fraction of peak
// it reaches and its fixed cost per dispatch.
struct KindFigures {
  double efficiency = 0;
  double op_seconds = 0;
  double region_seconds = 0;
};

constexpr std::array<strategy::OpKind, strategy::kOpKinds> kAllKinds = {
    strategy::OpKind::kDense, strategy::OpKind::kConvolution, strategy::OpKind::kEmbedding,
    strategy::OpKind::kElementwise};

std::vector<std::string> kind_names() {
  std::vector<std::string> names;
  for (strategy::OpKind kind : kAllKinds) names.emplace_back(strategy::op_kind_name(kind));
  return names;
}

// `efficiency` and `op_us` of an entry, then `kinds: {dense: {efficiency,
// op_us}, ...}` for the kinds that differ.
std::array<KindFigures, strategy::kOpKinds> kind_figures(const ConfigNode& entry) {
  const double efficiency = entry.at("efficiency").as_double(0, 1);
  if (efficiency <= 0) entry.at("efficiency").fail("must be above 0");
  const double op_seconds = entry.get_double("op_us", 0, 0, 1e6) * 1e-6;
  const double region_seconds = entry.get_double("region_us", 0, 0, 1e6) * 1e-6;
  std::array<KindFigures, strategy::kOpKinds> figures;
  figures.fill({efficiency, op_seconds, region_seconds});
  if (auto kinds = entry.find("kinds")) {
    const auto names = kind_names();
    kinds->allow_only(names);
    for (std::size_t k = 0; k < names.size(); ++k) {
      auto node = kinds->find(names[k]);
      if (!node) continue;
      node->allow_only({"efficiency", "op_us", "region_us"});
      figures[k].efficiency = node->get_double("efficiency", efficiency, 0, 1);
      if (figures[k].efficiency <= 0) node->at("efficiency").fail("must be above 0");
      figures[k].op_seconds = node->get_double("op_us", op_seconds * 1e6, 0, 1e6) * 1e-6;
      figures[k].region_seconds =
          node->get_double("region_us", region_seconds * 1e6, 0, 1e6) * 1e-6;
    }
  }
  return figures;
}

DeviceRates rates_from(const std::array<KindFigures, strategy::kOpKinds>& kinds, double peak,
                       double memory_bandwidth) {
  DeviceRates rates;
  for (std::size_t k = 0; k < rates.size(); ++k) {
    rates[k] = {.op_seconds = kinds[k].op_seconds,
                .region_seconds = kinds[k].region_seconds,
                .flops = peak * kinds[k].efficiency,
                .bytes_per_second = memory_bandwidth};
  }
  return rates;
}

// One entry of a machine's calibrated `compute:` list: the threads it was
// measured at and, for every kind, {op_us, region_us, gflops, gb_per_s} as
// ./calibrate fitted them.
// `core_sharing: {correlation_us: C, spread_by_load: [[LOAD, SPREAD], ...]}`,
// the loads (threads per core) growing.
CoreSharing core_sharing_of(const ConfigNode& node) {
  node.allow_only({"correlation_us", "spread_by_load"});
  CoreSharing sharing;
  sharing.correlation_seconds = node.at("correlation_us").as_double(0, 1e6) * kMicro;
  const ConfigNode points = node.at("spread_by_load");
  if (!points.is_sequence() || points.size() == 0) {
    points.fail("lists no load", "a list of [threads per core, spread] pairs");
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ConfigNode point = points[i];
    if (!point.is_sequence() || point.size() != 2) {
      point.fail("is not a pair", "[threads per core, spread], e.g. [3, 0.12]");
    }
    const double load = point[0].as_double(1, 1e4);
    const double spread = point[1].as_double(0, 5);
    if (!sharing.spread_by_load.empty() && load <= sharing.spread_by_load.back().first) {
      point[0].fail("loads must grow from one pair to the next");
    }
    sharing.spread_by_load.emplace_back(load, spread);
  }
  return sharing;
}

DeviceRates calibrated_rates(const ConfigNode& compute, int& threads) {
  auto names = kind_names();
  std::vector<std::string> allowed = names;
  allowed.emplace_back("threads");
  compute.allow_only(allowed);
  threads = static_cast<int>(compute.at("threads").as_int(1, 4096));
  DeviceRates rates;
  for (std::size_t k = 0; k < names.size(); ++k) {
    const ConfigNode node = compute.at(names[k]);
    node.allow_only({"op_us", "region_us", "gflops", "gb_per_s"});
    rates[k] = {.op_seconds = node.at("op_us").as_double(0, 1e6) * 1e-6,
                .region_seconds = node.get_double("region_us", 0, 0, 1e6) * 1e-6,
                .flops = positive(node.at("gflops"), 1e9) * 1e9,
                .bytes_per_second = positive(node.at("gb_per_s"), kMaxBandwidthGB) * kGB};
  }
  return rates;
}

// What a vCPU computes, and how much memory bandwidth a machine of it gets.
struct CpuPlatform {
  double flops_per_vcpu = 0;  // peak FLOP/s of one vCPU
  double ghz = 0;
  double efficiency = 0;  // of every kind not in kinds
  std::array<KindFigures, strategy::kOpKinds> kinds;
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

// An entry's `name`: present, not empty, not used by an earlier entry of
// the same list in the same file (an overlay may replace an entry of the
// file before it).
std::string entry_name(const ConfigNode& entry, std::set<std::string>& named_in_file) {
  const ConfigNode node = entry.at("name");
  std::string name = node.as_string();
  if (name.empty()) node.fail("must not be empty");
  if (!named_in_file.insert(name).second) node.fail("name '" + name + "' given twice");
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

// Reads catalog files one after the other into the same tables: a later
// file's entry replaces an earlier one of the same name.
class CatalogReader {
 public:
  explicit CatalogReader(MachineCatalog::Tables& tables) : t_(tables) {}
  void read(const std::string& path);

 private:
  void read_cpus(const ConfigNode& root);
  void read_series(const ConfigNode& root);
  void read_interconnects(const ConfigNode& root);
  void read_gpus(const ConfigNode& root);
  void read_machines(const ConfigNode& root, bool required);
  MachineType machine_of_platform(const ConfigNode& e);

  MachineCatalog::Tables& t_;
  std::map<std::string, CpuPlatform> cpus_;
  std::map<std::string, Series> series_;
  std::map<std::string, Interconnect> links_;
  std::map<std::string, std::string> gpu_link_;  // each GPU's usual interconnect
};

void CatalogReader::read(const std::string& path) {
  const ConfigNode root = ConfigNode::load_file(path);
  root.allow_only({"cpus", "series", "interconnects", "gpus", "machines"});
  const bool first = t_.machines.empty();
  if (first) list_size(root, "cpus", true);  // the catalog itself must list CPUs
  read_cpus(root);
  read_series(root);
  read_interconnects(root);
  read_gpus(root);
  read_machines(root, first);
}

void CatalogReader::read_cpus(const ConfigNode& root) {
  std::set<std::string> named;
  const std::size_t count = list_size(root, "cpus", false);
  for (std::size_t i = 0; i < count; ++i) {
    const ConfigNode e = root.at("cpus")[i];
    e.allow_only({"name", "description", "ghz", "flops_per_cycle_per_vcpu", "efficiency", "op_us",
                  "region_us", "kinds", "memory_gb_per_s_per_vcpu", "memory_gb_per_s_max"});
    const std::string name = entry_name(e, named);
    CpuPlatform cpu;
    cpu.ghz = positive(e.at("ghz"), 10);
    cpu.flops_per_vcpu = cpu.ghz * kGHz * positive(e.at("flops_per_cycle_per_vcpu"), 1024);
    cpu.efficiency = positive(e.at("efficiency"), 1);
    cpu.kinds = kind_figures(e);
    cpu.memory_per_vcpu = positive(e.at("memory_gb_per_s_per_vcpu"), kMaxBandwidthGB) * kGB;
    cpu.memory_max = positive(e.at("memory_gb_per_s_max"), kMaxBandwidthGB) * kGB;
    cpus_[name] = cpu;
  }
}

void CatalogReader::read_series(const ConfigNode& root) {
  std::set<std::string> named;
  const auto cpu_names = names_of(cpus_);
  const std::size_t count = list_size(root, "series", false);
  for (std::size_t i = 0; i < count; ++i) {
    const ConfigNode e = root.at("series")[i];
    e.allow_only({"name", "description", "cpu", "nic_gbps_per_vcpu", "nic_gbps_max",
                  "disk_write_mb_per_s", "disk_file_ms"});
    const std::string name = entry_name(e, named);
    Series s;
    s.cpu = e.at("cpu").as_choice(cpu_names);
    s.nic_per_vcpu = positive(e.at("nic_gbps_per_vcpu"), kMaxGbps) * kGbit;
    s.nic_max = positive(e.at("nic_gbps_max"), kMaxGbps) * kGbit;
    s.disk_write = positive(e.at("disk_write_mb_per_s"), kMaxBandwidthGB * 1000) * kMB;
    s.disk_file = e.get_double("disk_file_ms", 0, 0, kMaxFileMs) * 1e-3;
    series_[name] = s;
  }
}

void CatalogReader::read_interconnects(const ConfigNode& root) {
  std::set<std::string> named;
  const std::size_t count = list_size(root, "interconnects", false);
  for (std::size_t i = 0; i < count; ++i) {
    const ConfigNode e = root.at("interconnects")[i];
    e.allow_only({"name", "description", "gb_per_s", "latency_us"});
    const std::string name = entry_name(e, named);
    links_[name] = {.bandwidth = positive(e.at("gb_per_s"), kMaxBandwidthGB) * kGB,
                    .latency = e.at("latency_us").as_double(0, 1e6) * kMicro};
  }
}

void CatalogReader::read_gpus(const ConfigNode& root) {
  std::set<std::string> named;
  const auto link_names = names_of(links_);
  const std::size_t count = list_size(root, "gpus", false);
  for (std::size_t i = 0; i < count; ++i) {
    const ConfigNode e = root.at("gpus")[i];
    e.allow_only({"name", "description", "peak_tflops", "tf32_tflops", "fp16_tflops", "bf16_tflops",
                  "memory_gb_per_s", "memory_gib", "launch_us", "efficiency", "op_us", "region_us",
                  "kinds", "interconnect", "compute_capability", "kernel_device_us", "step_us",
                  "memory_efficiency", "mixed_halved_share"});
    GpuType gpu;
    gpu.name = entry_name(e, named);
    gpu.peak_flops = positive(e.at("peak_tflops"), 10'000) * kTera;
    gpu.memory_bandwidth = positive(e.at("memory_gb_per_s"), kMaxBandwidthGB) * kGB;
    gpu.memory_bytes = positive(e.at("memory_gib"), kMaxMemoryGiB) * kGiB;
    gpu.kernel_launch_seconds = e.at("launch_us").as_double(0, 1e6) * kMicro;
    gpu.efficiency = positive(e.at("efficiency"), 1);
    gpu.kernel_device_seconds = e.get_double("kernel_device_us", 0, 0, 1e6) * kMicro;
    gpu.step_host_seconds = e.get_double("step_us", 0, 0, 1e7) * kMicro;
    gpu.memory_efficiency = e.get_double("memory_efficiency", 1, 0, 1);
    if (gpu.memory_efficiency <= 0) e.at("memory_efficiency").fail("must be above 0");
    gpu.mixed_halved_share = e.get_double("mixed_halved_share", 1, 0, 1);
    gpu.tf32_flops = e.get_double("tf32_tflops", 0, 0, 100'000) * kTera;
    gpu.float16_flops = e.get_double("fp16_tflops", 0, 0, 100'000) * kTera;
    gpu.bfloat16_flops = e.get_double("bf16_tflops", 0, 0, 100'000) * kTera;
    if (auto cc = e.find("compute_capability")) gpu.compute_capability = cc->as_string();
    const auto kinds = kind_figures(e);
    gpu.rates = rates_from(kinds, gpu.peak_flops, gpu.memory_bandwidth * gpu.memory_efficiency);
    // In mixed precision activations take two bytes a value: the share of
    // the traffic that is theirs moves at twice the rate (the weights,
    // their float32 copies and the statistics of normalisation stay four
    // bytes a value). Products and convolutions are
    // what Tensor Cores run; a GPU without them runs those at float32's
    // rate (Keras' guide: "Older GPUs offer no math performance benefit for
    // using mixed precision, however memory and bandwidth savings can
    // enable some speedups").
    gpu.float16_rates = gpu.rates;
    for (OpRates& r : gpu.float16_rates) r.bytes_per_second /= 1 - gpu.mixed_halved_share / 2;
    gpu.bfloat16_rates = gpu.float16_rates;
    for (strategy::OpKind kind : {strategy::OpKind::kDense, strategy::OpKind::kConvolution}) {
      const auto k = static_cast<std::size_t>(kind);
      if (gpu.tf32_flops > 0) gpu.rates[k].flops = gpu.tf32_flops * kinds[k].efficiency;
      gpu.float16_rates[k].flops =
          gpu.float16_flops > 0 ? gpu.float16_flops * kinds[k].efficiency : gpu.rates[k].flops;
      gpu.bfloat16_rates[k].flops =
          gpu.bfloat16_flops > 0 ? gpu.bfloat16_flops * kinds[k].efficiency : gpu.rates[k].flops;
    }
    gpu_link_[gpu.name] = e.at("interconnect").as_choice(link_names);
    t_.gpus[gpu.name] = gpu;
  }
}

MachineType CatalogReader::machine_of_platform(const ConfigNode& e) {
  MachineType m;
  std::optional<Series> s;
  std::string cpu_name;
  if (auto series_node = e.find("series")) {
    const std::string series_name = series_node->as_choice(names_of(series_));
    s = series_.at(series_name);
    cpu_name = s->cpu;
    m.description = series_name + " series on " + cpu_name;
  } else {
    cpu_name = e.at("cpu").as_choice(names_of(cpus_));
    m.description = cpu_name;
  }
  const CpuPlatform& cpu = cpus_.at(cpu_name);
  m.vcpus = static_cast<int>(e.at("vcpus").as_int(1, 4096));
  m.memory_bytes = positive(e.at("memory_gib"), kMaxMemoryGiB) * kGiB;
  m.cpu_peak_flops = m.vcpus * cpu.flops_per_vcpu;
  m.cpu_ghz = cpu.ghz;
  m.cpu_efficiency = cpu.efficiency;
  m.memory_bandwidth = std::min(m.vcpus * cpu.memory_per_vcpu, cpu.memory_max);
  m.cpu_rates = rates_from(cpu.kinds, m.cpu_peak_flops, m.memory_bandwidth);
  m.cpu_threads = m.vcpus;
  if (auto compute = e.find("compute")) {
    // A list of entries, one per thread count (or one entry as a map).
    const std::size_t entries = compute->is_sequence() ? compute->size() : 1;
    if (entries == 0) compute->fail("lists no measurement");
    for (std::size_t i = 0; i < entries; ++i) {
      const ConfigNode entry = compute->is_sequence() ? (*compute)[i] : *compute;
      int threads = 0;
      DeviceRates rates = calibrated_rates(entry, threads);
      if (!m.cpu_rates_by_threads.empty() && threads <= m.cpu_rates_by_threads.back().first) {
        entry.at("threads").fail("thread counts must grow from one entry to the next");
      }
      m.cpu_rates_by_threads.emplace_back(threads, rates);
    }
    m.cpu_threads = m.cpu_rates_by_threads.back().first;
    m.cpu_rates = m.cpu_rates_by_threads.back().second;
    m.calibrated = true;
  }
  if (auto loopback = e.find("loopback")) {
    loopback->allow_only({"latency_us", "gb_per_s", "cpu_us", "cpu_gb_per_s"});
    m.loopback = {.latency = loopback->at("latency_us").as_double(0, 1e6) * kMicro,
                  .bandwidth = positive(loopback->at("gb_per_s"), kMaxBandwidthGB) * kGB};
    // The CPU a message costs comes as a pair, or not at all.
    if (loopback->has("cpu_us") || loopback->has("cpu_gb_per_s")) {
      m.loopback.cpu_seconds = loopback->at("cpu_us").as_double(0, 1e6) * kMicro;
      m.loopback.cpu_bandwidth = positive(loopback->at("cpu_gb_per_s"), kMaxBandwidthGB) * kGB;
    }
  }
  if (auto sharing = e.find("core_sharing")) m.core_sharing = core_sharing_of(*sharing);
  // Network and disk: the machine's own figure, or its series' rule.
  if (e.has("nic_gbps") || !s) {
    m.nic_bandwidth = positive(e.at("nic_gbps"), kMaxGbps) * kGbit;
  } else {
    m.nic_bandwidth = std::min(m.vcpus * s->nic_per_vcpu, s->nic_max);
  }
  if (e.has("disk_write_mb_per_s") || !s) {
    m.disk_write_bandwidth = positive(e.at("disk_write_mb_per_s"), kMaxBandwidthGB * 1000) * kMB;
  } else {
    m.disk_write_bandwidth = s->disk_write;
  }
  m.disk_file_seconds = e.has("disk_file_ms") || !s
                            ? e.get_double("disk_file_ms", 0, 0, kMaxFileMs) * 1e-3
                            : s->disk_file;
  return m;
}

void CatalogReader::read_machines(const ConfigNode& root, bool required) {
  std::set<std::string> named;
  const std::size_t count = list_size(root, "machines", required);
  if (required && count == 0) root.at("machines").fail("the catalog lists no machine types");
  const auto gpu_names = names_of(t_.gpus);
  const auto link_names = names_of(links_);
  for (std::size_t i = 0; i < count; ++i) {
    const ConfigNode e = root.at("machines")[i];
    e.allow_only({"name", "description", "base", "series", "cpu", "vcpus", "memory_gib", "nic_gbps",
                  "disk_write_mb_per_s", "disk_file_ms", "compute", "loopback", "core_sharing",
                  "gpus"});
    const std::string name = entry_name(e, named);
    const int kinds = int(e.has("base")) + int(e.has("series")) + int(e.has("cpu"));
    if (kinds != 1) {
      e.fail("give exactly one of 'base', 'series' or 'cpu'",
             "base: another machine type plus GPUs; series: a type of a series such as n1; "
             "cpu: a machine described in full");
    }

    MachineType m;
    if (auto base = e.find("base")) {
      for (const char* key : {"vcpus", "memory_gib", "nic_gbps", "disk_write_mb_per_s",
                              "disk_file_ms", "compute", "loopback", "core_sharing"}) {
        if (auto given = e.find(key)) {
          given->fail("not allowed beside 'base'", "the machine takes it from its base");
        }
      }
      const std::string base_name = base->as_string();
      auto found = t_.machines.find(base_name);
      if (found == t_.machines.end() || base_name == name) {
        const std::string guess = closest_match(base_name, names_of(t_.machines));
        base->fail("unknown machine type '" + base_name + "'",
                   guess.empty() ? "a base must be listed above the machine that names it"
                                 : "did you mean '" + guess + "'?");
      }
      m = found->second;
      m.description = base_name;
    } else {
      m = machine_of_platform(e);
      m.instance_type = name;
    }
    m.name = name;

    if (auto gpus = e.find("gpus")) {
      gpus->allow_only({"type", "count", "interconnect"});
      m.gpu = gpus->at("type").as_choice(gpu_names);
      m.gpu_count = static_cast<int>(gpus->at("count").as_int(1, 64));
      const std::string link = gpus->get_choice("interconnect", gpu_link_.at(m.gpu), link_names);
      m.bus_bandwidth = links_.at(link).bandwidth;
      m.bus_latency = links_.at(link).latency;
      m.description += fmt::format(" + {} x {} on {}", m.gpu_count, m.gpu, link);
    }
    if (auto description = e.find("description")) m.description += "; " + description->as_string();
    t_.machines[name] = m;
  }
}

}  // namespace

MachineCatalog MachineCatalog::load(const std::string& path) {
  return load(std::vector<std::string>{path});
}

MachineCatalog MachineCatalog::load(const std::vector<std::string>& paths) {
  MachineCatalog catalog;
  CatalogReader reader(catalog.tables_);
  for (const std::string& path : paths) {
    reader.read(path);
    catalog.path_ += (catalog.path_.empty() ? "" : " + ") + path;
  }
  return catalog;
}

std::string MachineCatalog::default_overlay_path() {
  if (const char* overlay = std::getenv("DISTLAB_MACHINES_OVERLAY")) return overlay;
  return shipped_scenarios_folder() + "/machines.local.yaml";
}

std::vector<std::string> MachineCatalog::default_paths() {
  std::vector<std::string> paths = {shipped_scenarios_folder() + "/machines.yaml"};
  const std::string overlay = default_overlay_path();
  if (!overlay.empty() && std::filesystem::exists(overlay)) paths.push_back(overlay);
  return paths;
}

MachineCatalog MachineCatalog::load_default() {
  return load(default_paths());
}

const MachineType& MachineCatalog::machine(const std::string& name) const {
  auto found = tables_.machines.find(name);
  if (found == tables_.machines.end()) unknown_name("machine type", name, path_, machine_names());
  return found->second;
}

const GpuType& MachineCatalog::gpu(const std::string& name) const {
  auto found = tables_.gpus.find(name);
  if (found == tables_.gpus.end()) unknown_name("GPU type", name, path_, names_of(tables_.gpus));
  return found->second;
}

bool MachineCatalog::has_machine(const std::string& name) const {
  return tables_.machines.count(name) > 0;
}

std::vector<std::string> MachineCatalog::machine_names() const {
  return names_of(tables_.machines);
}

}  // namespace distlab::sim
