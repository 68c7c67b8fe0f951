// The machine catalog: the shipped scenarios/machines.yaml and its figures,
// unknown names, and malformed catalogs reported with file, line and key.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.h"
#include "sim/machine.h"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;
using distlab::ConfigError;
using distlab::InputError;
using distlab::sim::MachineCatalog;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// A catalog file in the temporary directory, removed at the end of scope.
class TempCatalog {
 public:
  explicit TempCatalog(const std::string& text) {
    static int counter = 0;
    path_ = (std::filesystem::temp_directory_path() /
             ("distlab-machines-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) +
              ".yaml"))
                .string();
    std::ofstream(path_) << text;
  }
  ~TempCatalog() { std::filesystem::remove(path_); }
  TempCatalog(const TempCatalog&) = delete;
  TempCatalog& operator=(const TempCatalog&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Loads `text` as a catalog and returns the ConfigError it must throw.
ConfigError load_error(const std::string& text) {
  const TempCatalog file(text);
  try {
    MachineCatalog::load(file.path());
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("the catalog loaded without an error:\n" << text);
  return ConfigError("", 0, "", "not reached");
}

// A small valid catalog; the tests below break one line of it at a time.
const std::string kHead =
    "cpus:\n"                                          // 1
    "  - name: cpu\n"                                  // 2
    "    ghz: 2.0\n"                                   // 3
    "    flops_per_cycle_per_vcpu: 32\n"               // 4
    "    efficiency: 0.5\n"                            // 5
    "    memory_gb_per_s_per_vcpu: 5\n"                // 6
    "    memory_gb_per_s_max: 20\n"                    // 7
    "interconnects:\n"                                 // 8
    "  - {name: pcie, gb_per_s: 16, latency_us: 5}\n"  // 9
    "gpus:\n"                                          // 10
    "  - name: g\n"                                    // 11
    "    peak_tflops: 10\n"                            // 12
    "    memory_gb_per_s: 500\n"                       // 13
    "    memory_gib: 16\n"                             // 14
    "    launch_us: 5\n"                               // 15
    "    efficiency: 0.5\n"                            // 16
    "    interconnect: pcie\n"                         // 17
    "machines:\n";                                     // 18

const std::string kBox =
    "  - name: box\n"                  // 19
    "    cpu: cpu\n"                   // 20
    "    vcpus: 8\n"                   // 21
    "    memory_gib: 32\n"             // 22
    "    nic_gbps: 16\n"               // 23
    "    disk_write_mb_per_s: 100\n";  // 24

}  // namespace

TEST_CASE("The shipped catalog loads with the published figures") {
  // The file itself, whatever overlay ./calibrate left on this machine.
  const auto catalog = MachineCatalog::load(DISTLAB_SOURCE_DIR "/scenarios/machines.yaml");

  SECTION("n1-standard-4: 4 vCPUs, 15 GiB, 8 Gbps egress, Skylake peak") {
    const auto& m = catalog.machine("n1-standard-4");
    CHECK(m.vcpus == 4);
    CHECK_THAT(m.memory_bytes, WithinRel(15 * kGiB, 1e-12));
    CHECK_THAT(m.nic_bandwidth, WithinRel(1e9, 1e-12));  // 8 Gbps
    // 4 hyperthreads = 2 cores x 2.0 GHz x 64 FLOP per cycle (AVX-512, 2 FMA).
    CHECK_THAT(m.cpu_peak_flops, WithinRel(256e9, 1e-12));
    CHECK(m.cpu_efficiency > 0);
    CHECK(m.cpu_efficiency < 1);
    CHECK(m.gpu_count == 0);
    CHECK(m.gpu.empty());
    CHECK(m.memory_bandwidth > 0);
    CHECK(m.disk_write_bandwidth > 0);
  }
  SECTION("current GPUs with their dense Tensor Core peaks, on the machine types that carry them") {
    const auto& h100 = catalog.gpu("h100-sxm");
    CHECK_THAT(h100.peak_flops, WithinRel(67e12, 1e-12));
    CHECK_THAT(h100.tf32_flops, WithinRel(494.5e12, 1e-12));
    CHECK_THAT(h100.float16_flops, WithinRel(989.5e12, 1e-12));
    CHECK_THAT(h100.bfloat16_flops, WithinRel(989.5e12, 1e-12));
    CHECK(h100.compute_capability == "9.0");
    CHECK_THAT(catalog.gpu("a100-80gb").memory_bandwidth, WithinRel(2039e9, 1e-12));
    CHECK_THAT(catalog.gpu("l4").float16_flops, WithinRel(121e12, 1e-12));
    CHECK(catalog.gpu("v100").bfloat16_flops == 0);
    CHECK(catalog.gpu("k80").float16_flops == 0);

    const auto& a3 = catalog.machine("a3-highgpu-8g");
    CHECK(a3.vcpus == 208);
    CHECK(a3.gpu == "h100-sxm");
    CHECK(a3.gpu_count == 8);
    CHECK_THAT(a3.bus_bandwidth, WithinRel(450e9, 1e-12));  // NVLink 4, per direction
    CHECK_THAT(a3.nic_bandwidth, WithinRel(1000e9 / 8, 1e-12));
    const auto& a2 = catalog.machine("a2-highgpu-4g");
    CHECK(a2.gpu_count == 4);
    CHECK_THAT(a2.bus_bandwidth, WithinRel(300e9, 1e-12));  // NVLink 3
    const auto& g2 = catalog.machine("g2-standard-48");
    CHECK(g2.gpu == "l4");
    CHECK(g2.gpu_count == 4);
    CHECK_THAT(g2.bus_bandwidth, WithinRel(31.5e9, 1e-12));  // PCIe 4.0 x16
    CHECK_THAT(catalog.machine("g2-standard-4").nic_bandwidth, WithinRel(10e9 / 8, 1e-12));
  }
  SECTION("egress is 2 Gbps per vCPU up to 32 Gbps") {
    CHECK_THAT(catalog.machine("n1-standard-8").nic_bandwidth, WithinRel(2e9, 1e-12));
    CHECK_THAT(catalog.machine("n1-standard-16").nic_bandwidth, WithinRel(4e9, 1e-12));
    CHECK_THAT(catalog.machine("n1-standard-32").nic_bandwidth, WithinRel(4e9, 1e-12));
    CHECK_THAT(catalog.machine("n1-highcpu-32").nic_bandwidth, WithinRel(4e9, 1e-12));
  }
  SECTION("the N1 memory ratios") {
    CHECK_THAT(catalog.machine("n1-highmem-8").memory_bytes, WithinRel(52 * kGiB, 1e-12));
    CHECK_THAT(catalog.machine("n1-highcpu-16").memory_bytes, WithinRel(14.4 * kGiB, 1e-12));
    CHECK(catalog.machine("n1-highcpu-32").vcpus == 32);
  }
  SECTION("AI Platform legacy types are N1 types plus GPUs") {
    const auto& standard = catalog.machine("standard");
    CHECK(standard.vcpus == 4);
    CHECK(standard.nic_bandwidth == catalog.machine("n1-standard-4").nic_bandwidth);
    CHECK(catalog.machine("complex_model_m").vcpus == 16);
    CHECK(catalog.machine("large_model").memory_bytes ==
          catalog.machine("n1-highmem-8").memory_bytes);

    const auto& m = catalog.machine("complex_model_m_gpu");
    CHECK(m.gpu_count == 4);
    CHECK(m.gpu == "k80");
    CHECK(m.vcpus == 16);
    CHECK_THAT(m.bus_bandwidth, WithinRel(15.75e9, 1e-12));  // PCIe 3.0 x16
    CHECK(m.bus_latency > 0);
    CHECK_THAT(m.description, Contains("n1-standard-16") && Contains("k80"));

    const auto& v = catalog.machine("complex_model_l_v100");
    CHECK(v.gpu_count == 8);
    CHECK(v.gpu == "v100");
    CHECK(v.vcpus == 32);
    CHECK(v.bus_bandwidth > m.bus_bandwidth);  // NVLink beats PCIe

    CHECK(catalog.machine("standard_gpu").gpu_count == 1);
    CHECK(catalog.machine("complex_model_l_gpu").gpu_count == 8);
    CHECK(catalog.machine("standard_p100").gpu == "p100");
    CHECK(catalog.machine("large_model_v100").memory_bytes ==
          catalog.machine("n1-highmem-8").memory_bytes);
  }
  SECTION("GPU figures are one die's, from the datasheets") {
    const auto& k80 = catalog.gpu("k80");
    CHECK_THAT(k80.peak_flops, WithinRel(4.37e12, 1e-12));  // half the board's 8.73
    CHECK_THAT(k80.memory_bandwidth, WithinRel(240e9, 1e-12));
    CHECK_THAT(k80.memory_bytes, WithinRel(12 * kGiB, 1e-12));
    CHECK(k80.kernel_launch_seconds >= 1e-6);
    CHECK(k80.kernel_launch_seconds <= 20e-6);
    CHECK_THAT(catalog.gpu("v100").peak_flops, WithinRel(15.7e12, 1e-12));
    CHECK_THAT(catalog.gpu("p100").memory_bandwidth, WithinRel(732e9, 1e-12));
    CHECK_THAT(catalog.gpu("t4").peak_flops, WithinRel(8.1e12, 1e-12));
  }
  SECTION("every machine type is complete and sane") {
    const auto names = catalog.machine_names();
    for (const char* legacy :
         {"standard", "large_model", "complex_model_s", "complex_model_m", "complex_model_l",
          "standard_gpu", "complex_model_m_gpu", "complex_model_l_gpu", "standard_p100",
          "complex_model_m_p100", "standard_v100", "large_model_v100", "complex_model_m_v100",
          "complex_model_l_v100", "local"}) {
      CHECK(catalog.has_machine(legacy));
    }
    for (const auto& name : names) {
      INFO(name);
      const auto& m = catalog.machine(name);
      CHECK(m.name == name);
      CHECK(!m.description.empty());
      CHECK(m.vcpus >= 1);
      CHECK(m.memory_bytes >= 1 * kGiB);
      CHECK(m.cpu_peak_flops >= 10e9);   // at least 10 GFLOP/s...
      CHECK(m.cpu_peak_flops <= 20e12);  // ...and not a GPU's (a3-highgpu-8g: 13.3)
      CHECK(m.cpu_efficiency > 0);
      CHECK(m.cpu_efficiency <= 1);
      CHECK(m.memory_bandwidth >= 1e9);
      CHECK(m.nic_bandwidth >= 1e8);
      CHECK(m.disk_write_bandwidth >= 1e6);
      if (m.gpu_count > 0) {
        CHECK(catalog.gpu(m.gpu).peak_flops > m.cpu_peak_flops);
        CHECK(m.bus_bandwidth > 1e9);
      } else {
        CHECK(m.gpu.empty());
        CHECK(m.bus_bandwidth == 0);
      }
    }
  }
  SECTION("the local machine is a rough stand-in until ./calibrate measures it") {
    const auto& local = catalog.machine("local");
    CHECK(local.vcpus == 2);
    CHECK(local.gpu_count == 0);
    CHECK_THAT(local.description, Contains("rough"));
    CHECK_FALSE(local.calibrated);
    CHECK(local.loopback.bandwidth > 0);
  }
}

TEST_CASE("An unknown machine or GPU name is an input error naming the closest") {
  const auto catalog = MachineCatalog::load_default();
  CHECK_FALSE(catalog.has_machine("n1-standard-5"));

  std::string message;
  try {
    catalog.machine("n1-standard-5");
  } catch (const ConfigError&) {
    FAIL("not a configuration file's error");
  } catch (const InputError& e) {
    message = e.what();
  }
  CHECK_THAT(message, Contains("unknown machine type 'n1-standard-5'"));
  CHECK_THAT(message, Contains("machines.yaml"));
  CHECK_THAT(message, Contains("did you mean 'n1-standard-4', 'n1-standard-8'"));

  CHECK_THROWS_WITH(catalog.machine("complex_model_m_gpus"),
                    Contains("did you mean 'complex_model_m_gpu'"));
  // Nothing close: the known names are listed.
  CHECK_THROWS_WITH(catalog.machine("quantum"), Contains("known: ") && Contains("'standard_gpu'"));
  CHECK_THROWS_AS(catalog.gpu("k8o"), InputError);
  CHECK_THROWS_WITH(catalog.gpu("k8o"),
                    Contains("unknown GPU type 'k8o'") && Contains("did you mean 'k80'"));
}

TEST_CASE("A small catalog file gives the figures it states, in SI units") {
  const TempCatalog file(kHead + kBox +
                         "  - {name: box_g, base: box, gpus: {type: g, count: 2}}\n"
                         "  - {name: slow, cpu: cpu, vcpus: 1, memory_gib: 2, nic_gbps: 1,\n"
                         "     disk_write_mb_per_s: 50}\n");
  const auto catalog = MachineCatalog::load(file.path());
  const auto& box = catalog.machine("box");
  CHECK_THAT(box.cpu_peak_flops, WithinRel(8 * 2.0e9 * 32, 1e-12));
  CHECK(box.cpu_efficiency == 0.5);
  CHECK_THAT(box.memory_bandwidth, WithinRel(20e9, 1e-12));  // capped: 8 x 5 > 20
  CHECK_THAT(box.nic_bandwidth, WithinRel(2e9, 1e-12));
  CHECK_THAT(box.disk_write_bandwidth, WithinRel(100e6, 1e-12));
  CHECK_THAT(catalog.machine("slow").memory_bandwidth, WithinRel(5e9, 1e-12));  // 1 x 5
  const auto& g = catalog.machine("box_g");
  CHECK(g.vcpus == 8);
  CHECK(g.gpu_count == 2);
  CHECK_THAT(g.bus_bandwidth, WithinRel(16e9, 1e-12));
  CHECK_THAT(g.bus_latency, WithinRel(5e-6, 1e-12));
  CHECK_THAT(catalog.gpu("g").kernel_launch_seconds, WithinRel(5e-6, 1e-12));
  CHECK(catalog.machine_names() == std::vector<std::string>{"box", "box_g", "slow"});
}

TEST_CASE("A malformed catalog is a config error with its line and key") {
  SECTION("a misspelt key") {
    std::string box = kBox;
    box.replace(box.find("memory_gib"), 10, "memory_gb");
    const auto e = load_error(kHead + box);
    CHECK(e.line() == 22);
    CHECK(e.key() == "machines[0].memory_gb");
    CHECK_THAT(e.what(), Contains("unknown key (did you mean 'memory_gib'?)"));
  }
  SECTION("a figure that is not a number") {
    std::string head = kHead;
    head.replace(head.find("peak_tflops: 10"), 15, "peak_tflops: ten");
    const auto e = load_error(head + kBox);
    CHECK(e.line() == 12);
    CHECK(e.key() == "gpus[0].peak_tflops");
  }
  SECTION("a figure of zero") {
    std::string box = kBox;
    box.replace(box.find("nic_gbps: 16"), 12, "nic_gbps: 0");
    const auto e = load_error(kHead + box);
    CHECK(e.line() == 23);
    CHECK(e.key() == "machines[0].nic_gbps");
    CHECK_THAT(e.what(), Contains("must be above 0"));
  }
  SECTION("an unknown GPU type suggests the closest") {
    const auto e =
        load_error(kHead + kBox + "  - {name: b2, base: box, gpus: {type: gg, count: 1}}\n");
    CHECK(e.line() == 25);
    CHECK(e.key() == "machines[1].gpus.type");
    CHECK_THAT(e.what(), Contains("did you mean 'g'?"));
  }
  SECTION("a base that is not listed above") {
    const auto e = load_error(kHead + "  - {name: b2, base: box}\n" + kBox);
    CHECK(e.line() == 19);
    CHECK(e.key() == "machines[0].base");
    CHECK_THAT(e.what(), Contains("unknown machine type 'box'"));
  }
  SECTION("a machine needs exactly one of base, series or cpu") {
    const auto e = load_error(kHead + kBox + "  - {name: b2, base: box, cpu: cpu, vcpus: 2}\n");
    CHECK(e.line() == 25);
    CHECK(e.key() == "machines[1]");
    CHECK_THAT(e.what(), Contains("exactly one of 'base', 'series' or 'cpu'"));
  }
  SECTION("a machine described in full needs its network figure") {
    std::string box = kBox;
    box.erase(box.find("    nic_gbps: 16\n"), 17);
    const auto e = load_error(kHead + box);
    CHECK(e.key() == "machines[0]");
    CHECK_THAT(e.what(), Contains("missing required key 'nic_gbps'"));
  }
  SECTION("a name given twice") {
    const auto e = load_error(kHead + kBox + "  - {name: box, base: box}\n");
    CHECK(e.line() == 25);
    CHECK(e.key() == "machines[1].name");
    CHECK_THAT(e.what(), Contains("given twice"));
  }
  SECTION("the file names itself in the message") {
    const auto e = load_error(kHead + kBox + "  - {name: b2, base: box, vcpus: 2}\n");
    CHECK_THAT(e.path(), Contains("distlab-machines-"));
    CHECK(e.key() == "machines[1].vcpus");
    CHECK_THAT(e.what(), Contains(e.path() + ":25: machines[1].vcpus: not allowed beside 'base'"));
  }
  SECTION("a missing file") {
    CHECK_THROWS_AS(MachineCatalog::load("/nonexistent/machines.yaml"), ConfigError);
  }
}

TEST_CASE("Per-kind figures: a CPU's efficiency and op cost, overridden kind by kind") {
  const TempCatalog file(
      "cpus:\n"
      "  - {name: cpu, ghz: 2.0, flops_per_cycle_per_vcpu: 32, efficiency: 0.5, op_us: 2,\n"
      "     kinds: {convolution: {efficiency: 0.25, op_us: 100}, embedding: {op_us: 1}},\n"
      "     memory_gb_per_s_per_vcpu: 5, memory_gb_per_s_max: 20}\n"
      "machines:\n" +
      kBox);
  const auto catalog = MachineCatalog::load(file.path());
  const auto& box = catalog.machine("box");
  using distlab::sim::rates_of;
  using distlab::strategy::OpKind;
  const double peak = 8 * 2.0e9 * 32;
  CHECK_THAT(rates_of(box.cpu_rates, OpKind::kDense).flops, WithinRel(0.5 * peak, 1e-12));
  CHECK_THAT(rates_of(box.cpu_rates, OpKind::kDense).op_seconds, WithinRel(2e-6, 1e-12));
  CHECK_THAT(rates_of(box.cpu_rates, OpKind::kConvolution).flops, WithinRel(0.25 * peak, 1e-12));
  CHECK_THAT(rates_of(box.cpu_rates, OpKind::kConvolution).op_seconds, WithinRel(100e-6, 1e-12));
  // A kind that gives op_us only keeps the CPU's efficiency.
  CHECK_THAT(rates_of(box.cpu_rates, OpKind::kEmbedding).flops, WithinRel(0.5 * peak, 1e-12));
  CHECK_THAT(rates_of(box.cpu_rates, OpKind::kEmbedding).op_seconds, WithinRel(1e-6, 1e-12));
  for (const auto& r : box.cpu_rates) CHECK_THAT(r.bytes_per_second, WithinRel(20e9, 1e-12));
  CHECK(box.cpu_threads == 8);
  CHECK_FALSE(box.calibrated);
}

TEST_CASE("A calibrated machine times compute by its measured rates and knows its loopback") {
  const TempCatalog file(kHead + kBox +
                         "    loopback: {latency_us: 20, gb_per_s: 3}\n"
                         "    compute:\n"
                         "      threads: 2\n"
                         "      dense: {op_us: 1.5, gflops: 80, gb_per_s: 5}\n"
                         "      convolution: {op_us: 150, gflops: 90, gb_per_s: 2}\n"
                         "      embedding: {op_us: 1, gflops: 100, gb_per_s: 4}\n"
                         "      elementwise: {op_us: 3, gflops: 100, gb_per_s: 22}\n");
  const auto catalog = MachineCatalog::load(file.path());
  const auto& box = catalog.machine("box");
  using distlab::sim::rates_of;
  using distlab::strategy::OpKind;
  CHECK(box.calibrated);
  CHECK(box.cpu_threads == 2);
  CHECK_THAT(rates_of(box.cpu_rates, OpKind::kDense).flops, WithinRel(80e9, 1e-12));
  CHECK_THAT(rates_of(box.cpu_rates, OpKind::kConvolution).op_seconds, WithinRel(150e-6, 1e-12));
  CHECK_THAT(rates_of(box.cpu_rates, OpKind::kElementwise).bytes_per_second,
             WithinRel(22e9, 1e-12));
  CHECK_THAT(box.loopback.latency, WithinRel(20e-6, 1e-12));
  CHECK_THAT(box.loopback.bandwidth, WithinRel(3e9, 1e-12));
  CHECK_FALSE(box.loopback.cpu_measured());

  // Every kind must be there: a partial calibration is refused by key.
  const ConfigError missing = load_error(kHead + kBox +
                                         "    compute:\n"
                                         "      threads: 2\n"
                                         "      dense: {op_us: 1.5, gflops: 80, gb_per_s: 5}\n");
  CHECK(missing.line() == 26);  // where the compute block's keys begin
  CHECK_THAT(missing.what(), Contains("convolution"));
}

TEST_CASE("A loopback's CPU per message comes as a pair of figures, or not at all") {
  const TempCatalog file(
      kHead + kBox + "    loopback: {latency_us: 20, gb_per_s: 3, cpu_us: 30, cpu_gb_per_s: 2}\n");
  const auto catalog = MachineCatalog::load(file.path());
  const auto& loopback = catalog.machine("box").loopback;
  CHECK(loopback.cpu_measured());
  CHECK_THAT(loopback.cpu_seconds, WithinRel(30e-6, 1e-12));
  CHECK_THAT(loopback.cpu_bandwidth, WithinRel(2e9, 1e-12));

  const ConfigError half =
      load_error(kHead + kBox + "    loopback: {latency_us: 20, gb_per_s: 3, cpu_us: 30}\n");
  CHECK(half.key() == "machines[0].loopback");
  CHECK_THAT(half.what(), Contains("cpu_gb_per_s"));
  const ConfigError zero = load_error(
      kHead + kBox + "    loopback: {latency_us: 20, gb_per_s: 3, cpu_us: 30, cpu_gb_per_s: 0}\n");
  CHECK(zero.key() == "machines[0].loopback.cpu_gb_per_s");
  CHECK_THAT(zero.what(), Contains("must be above 0"));
}

TEST_CASE("A machine's core_sharing: loads growing, each a pair, checked by key") {
  const TempCatalog file(kHead + kBox +
                         "    core_sharing: {correlation_us: 850, spread_by_load: [[2, 0.07], "
                         "[4, 0.2]]}\n");
  const auto sharing = MachineCatalog::load(file.path()).machine("box").core_sharing;
  CHECK(sharing.measured());
  CHECK_THAT(sharing.correlation_seconds, WithinRel(850e-6, 1e-12));
  REQUIRE(sharing.spread_by_load.size() == 2);
  CHECK(sharing.spread_by_load[1] == std::pair{4.0, 0.2});
  CHECK_FALSE(MachineCatalog::load(TempCatalog(kHead + kBox).path())
                  .machine("box")
                  .core_sharing.measured());

  const ConfigError backwards =
      load_error(kHead + kBox +
                 "    core_sharing: {correlation_us: 1, spread_by_load: [[4, 0.2], [2, 0.1]]}\n");
  CHECK(backwards.key() == "machines[0].core_sharing.spread_by_load[1][0]");
  CHECK_THAT(backwards.what(), Contains("must grow"));
  const ConfigError single =
      load_error(kHead + kBox + "    core_sharing: {correlation_us: 1, spread_by_load: [2]}\n");
  CHECK_THAT(single.what(), Contains("not a pair"));
  const ConfigError none =
      load_error(kHead + kBox + "    core_sharing: {spread_by_load: [[2, 1]]}\n");
  CHECK_THAT(none.what(), Contains("correlation_us"));
}

TEST_CASE("An overlay replaces entries of the catalog by name and adds its own") {
  const TempCatalog base(kHead + kBox +
                         "  - {name: other, cpu: cpu, vcpus: 2, memory_gib: 4, nic_gbps: 1,\n"
                         "     disk_write_mb_per_s: 50}\n");
  const TempCatalog overlay(
      "cpus:\n"
      "  - {name: fast, ghz: 3.0, flops_per_cycle_per_vcpu: 32, efficiency: 0.5,\n"
      "     memory_gb_per_s_per_vcpu: 10, memory_gb_per_s_max: 40}\n"
      "machines:\n"
      "  - {name: box, cpu: fast, vcpus: 4, memory_gib: 16, nic_gbps: 8,\n"
      "     disk_write_mb_per_s: 200}\n"
      "  - {name: extra, cpu: cpu, vcpus: 1, memory_gib: 1, nic_gbps: 1,\n"
      "     disk_write_mb_per_s: 10}\n");
  const auto catalog = MachineCatalog::load(std::vector<std::string>{base.path(), overlay.path()});
  CHECK(catalog.machine("box").vcpus == 4);
  CHECK_THAT(catalog.machine("box").cpu_peak_flops, WithinRel(4 * 3.0e9 * 32, 1e-12));
  CHECK(catalog.machine("other").vcpus == 2);  // untouched
  CHECK(catalog.machine("extra").vcpus == 1);
  // A name twice in one file is still a mistake.
  const TempCatalog twice(
      "machines:\n"
      "  - {name: x, cpu: cpu, vcpus: 1, memory_gib: 1, nic_gbps: 1,\n"
      "     disk_write_mb_per_s: 10}\n"
      "  - {name: x, cpu: cpu, vcpus: 1, memory_gib: 1, nic_gbps: 1,\n"
      "     disk_write_mb_per_s: 10}\n");
  CHECK_THROWS_AS(MachineCatalog::load(std::vector<std::string>{base.path(), twice.path()}),
                  ConfigError);
}
