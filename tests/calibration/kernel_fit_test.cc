// The kernel probe's fit of a roofline with a fixed cost to layer passes,
// on synthetic samples of known figures, and the overlay ./calibrate writes
// from what it measured, read back through the machine catalog.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "calibration/kernel_probe.h"
#include "calibration/overlay.h"
#include "common/error.h"
#include "sim/machine.h"
#include "support/error_message.h"

using namespace distlab;
using namespace distlab::calibration;
using distlab::strategy::OpKind;
using distlab::testing::message_of;
namespace fs = std::filesystem;

namespace {

// t = op + max(flops / F, bytes / B): the model fit_kind fits.
KernelSample sample(double flops, double bytes, double op, double F, double B) {
  return {.model = "synthetic",
          .layer = "layer",
          .kind = OpKind::kDense,
          .flops = flops,
          .bytes = bytes,
          .seconds = op + std::max(flops / F, bytes / B)};
}

fs::path scratch() {
  std::random_device entropy;
  const fs::path dir = fs::temp_directory_path() / ("distlab-overlay-" + std::to_string(entropy()));
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("fit_kind recovers the fixed cost and both rates of a roofline") {
  constexpr double kOp = 5e-6, kFlops = 50e9, kBytes = 10e9;  // ridge: 5 FLOP per byte
  std::vector<KernelSample> samples;
  // Compute-bound passes (20 FLOP per byte: products of large matrices)
  // and memory-bound ones (0.1 to 2 FLOP per byte: activations, small
  // layers), each over five decades, from overhead-dominated to large.
  for (double flops = 1e4; flops <= 1e9; flops *= 10) {
    samples.push_back(sample(flops, flops / 20, kOp, kFlops, kBytes));
  }
  int i = 0;
  for (double bytes = 1e3; bytes <= 1e8; bytes *= 10, ++i) {
    samples.push_back(sample(bytes * (0.1 + 0.4 * (i % 5)), bytes, kOp, kFlops, kBytes));
  }
  const KindFit fit = fit_kind(samples, "synthetic");
  CHECK(fit.samples == static_cast<int>(samples.size()));
  CHECK(fit.op_seconds == Approx(kOp).epsilon(0.02));
  CHECK(fit.flops_rate == Approx(kFlops).epsilon(0.02));
  CHECK(fit.byte_rate == Approx(kBytes).epsilon(0.02));
  CHECK(fit.quality.median_error < 0.01);
  CHECK(fit.quality.worst_error < 0.02);
}

TEST_CASE("fit_kind gives no FLOP rate where every sample is bound by memory") {
  constexpr double kOp = 3e-6, kBytes = 20e9;
  std::vector<KernelSample> samples;
  // At most 2 FLOP per byte, against a ridge of 50 (1e12 / 20e9): the
  // arithmetic never binds, so the samples say nothing of its rate.
  int i = 0;
  for (double bytes = 1e3; bytes <= 1e9; bytes *= 10, ++i) {
    samples.push_back(sample(bytes * (0.25 * (i % 3) + 0.5), bytes, kOp, 1e12, kBytes));
  }
  const KindFit fit = fit_kind(samples, "memory-bound");
  CHECK(fit.flops_rate == 0);
  CHECK(fit.op_seconds == Approx(kOp).epsilon(0.02));
  CHECK(fit.byte_rate == Approx(kBytes).epsilon(0.02));
  CHECK(fit.quality.worst_error < 0.02);
}

TEST_CASE("fit_kind fits nothing to fewer than 3 samples, but counts them") {
  std::vector<KernelSample> samples;
  CHECK(fit_kind(samples, "none").samples == 0);
  samples.push_back(sample(1e6, 1e5, 1e-6, 1e10, 1e9));
  samples.push_back(sample(1e7, 1e6, 1e-6, 1e10, 1e9));
  const KindFit fit = fit_kind(samples, "two");
  CHECK(fit.samples == 2);
  CHECK(fit.op_seconds == 0);
  CHECK(fit.flops_rate == 0);
  CHECK(fit.byte_rate == 0);
}

namespace {

// Figures as ./calibrate would measure them. Each kind's fit: dense has
// both rates; convolution no byte rate, embedding no FLOP rate and
// elementwise neither (the catalog gets the peak or the memory bandwidth
// instead).
MachineFigures measured() {
  MachineFigures f;
  f.version = "test";
  // One thread: every kind at twice the 2-thread figures' costs (only the
  // dense op cost is checked); then the 2-thread measurement.
  f.kernels.resize(2);
  f.kernels[0].threads = 1;
  f.kernels[0].kinds[static_cast<std::size_t>(OpKind::kDense)] = {
      .op_seconds = 2.5e-6, .flops_rate = 40e9, .byte_rate = 5e9, .samples = 40};
  auto& kinds = f.kernels[1].kinds;
  kinds[static_cast<std::size_t>(OpKind::kDense)] = {
      .op_seconds = 1.23456e-6, .flops_rate = 80.1234567e9, .byte_rate = 5e9, .samples = 40};
  kinds[static_cast<std::size_t>(OpKind::kConvolution)] = {
      .op_seconds = 160e-6, .flops_rate = 90e9, .byte_rate = 0, .samples = 12};
  kinds[static_cast<std::size_t>(OpKind::kEmbedding)] = {
      .op_seconds = 1.2e-6, .flops_rate = 0, .byte_rate = 4e9, .samples = 8};
  kinds[static_cast<std::size_t>(OpKind::kElementwise)] = {
      .op_seconds = 3.25e-6, .flops_rate = 0, .byte_rate = 0, .samples = 30};
  f.kernels[1].threads = 2;
  f.memory.bandwidth = 12.5e9;
  f.loopback.latency_seconds = 17.25e-6;
  f.loopback.bandwidth = 2.5e9;
  f.disk.write_bandwidth = 350e6;
  f.disk.file_seconds = 2.5e-3;
  f.core_sharing = {.spread_by_load = {{2, 0.066}, {3, 0.148}, {6, 0.229}},
                    .correlation_seconds = 847e-6};
  return f;
}

sim::MachineCatalog with_overlay(const std::string& overlay) {
  return sim::MachineCatalog::load(
      std::vector<std::string>{DISTLAB_SOURCE_DIR "/scenarios/machines.yaml", overlay});
}

}  // namespace

TEST_CASE("the overlay makes `local` a calibrated machine of exactly the measured figures") {
  const fs::path dir = scratch();
  const std::string path = (dir / "machines.local.yaml").string();
  std::ofstream(path) << overlay_text(measured());
  const auto catalog = with_overlay(path);
  const sim::MachineType& local = catalog.machine("local");
  using Catch::Matchers::WithinAbs;
  using Catch::Matchers::WithinRel;
  using sim::rates_of;
  CHECK(local.calibrated);
  CHECK(local.cpu_threads == 2);
  // Both thread counts, fewest first; the last is the machine's own rates.
  REQUIRE(local.cpu_rates_by_threads.size() == 2);
  CHECK(local.cpu_rates_by_threads[0].first == 1);
  CHECK_THAT(rates_of(local.cpu_rates_by_threads[0].second, OpKind::kDense).op_seconds,
             WithinRel(2.5e-6, 1e-12));
  CHECK(local.cpu_rates_by_threads[1].first == 2);
  CHECK(local.gpu_count == 0);
  CHECK(local.vcpus == static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))));

  // Rates as written: op_us, gflops and gb_per_s to 3 decimals.
  const auto& dense = rates_of(local.cpu_rates, OpKind::kDense);
  CHECK_THAT(dense.op_seconds, WithinAbs(1.23456e-6, 0.0005e-6));
  CHECK_THAT(dense.flops, WithinAbs(80.1234567e9, 0.0005e9));
  CHECK_THAT(dense.bytes_per_second, WithinRel(5e9, 1e-12));
  const auto& convolution = rates_of(local.cpu_rates, OpKind::kConvolution);
  CHECK_THAT(convolution.op_seconds, WithinRel(160e-6, 1e-12));
  CHECK_THAT(convolution.flops, WithinRel(90e9, 1e-12));
  const auto& embedding = rates_of(local.cpu_rates, OpKind::kEmbedding);
  CHECK_THAT(embedding.op_seconds, WithinRel(1.2e-6, 1e-12));
  CHECK_THAT(embedding.bytes_per_second, WithinRel(4e9, 1e-12));
  const auto& elementwise = rates_of(local.cpu_rates, OpKind::kElementwise);
  CHECK_THAT(elementwise.op_seconds, WithinRel(3.25e-6, 1e-12));

  // A rate no sample gave: the memory bandwidth, or the CPU's peak (the
  // overlay's cpus entry: vCPUs x GHz x FLOP per cycle, its GHz rounded to
  // 3 decimals, hence the tolerance).
  CHECK_THAT(local.memory_bandwidth, WithinRel(12.5e9, 1e-12));
  CHECK_THAT(convolution.bytes_per_second, WithinRel(12.5e9, 1e-12));
  CHECK_THAT(elementwise.bytes_per_second, WithinRel(12.5e9, 1e-12));
  REQUIRE(local.cpu_peak_flops > 0);
  CHECK_THAT(embedding.flops, WithinRel(local.cpu_peak_flops, 0.005));
  CHECK_THAT(elementwise.flops, WithinRel(local.cpu_peak_flops, 0.005));
  // The CPU's efficiency: dense's share of that peak.
  CHECK(local.cpu_efficiency ==
        Approx(std::min(1.0, 80.1234567e9 / local.cpu_peak_flops)).margin(1e-3));

  // Loopback, the NIC (the loopback's bandwidth) and the disk.
  CHECK_THAT(local.loopback.latency, WithinRel(17.25e-6, 1e-12));
  CHECK_THAT(local.loopback.bandwidth, WithinRel(2.5e9, 1e-12));
  CHECK_THAT(local.nic_bandwidth, WithinRel(2.5e9, 1e-12));
  CHECK_THAT(local.disk_write_bandwidth, WithinRel(350e6, 1e-12));
  CHECK_THAT(local.disk_file_seconds, WithinRel(2.5e-3, 1e-12));

  // How unevenly the cores are shared, as measured.
  REQUIRE(local.core_sharing.spread_by_load.size() == 3);
  CHECK(local.core_sharing.spread_by_load[2] == std::pair{6.0, 0.229});
  CHECK_THAT(local.core_sharing.correlation_seconds, WithinRel(847e-6, 1e-12));
  MachineFigures unmeasured = measured();
  unmeasured.core_sharing = {};
  CHECK(overlay_text(unmeasured).find("core_sharing") == std::string::npos);

  // The shipped machine types are still there, as they were.
  CHECK(catalog.has_machine("n1-standard-4"));
  CHECK_FALSE(sim::MachineCatalog::load(DISTLAB_SOURCE_DIR "/scenarios/machines.yaml")
                  .machine("local")
                  .calibrated);
  fs::remove_all(dir);
}

TEST_CASE("write_overlay writes a checked overlay, and refuses a folder it cannot write") {
  const fs::path dir = scratch();
  const std::string path = (dir / "machines.local.yaml").string();
  CHECK_NOTHROW(check_writable(path));
  write_overlay(path, measured());
  CHECK(with_overlay(path).machine("local").calibrated);
  CHECK_FALSE(fs::exists(path + ".draft"));
  CHECK(fs::directory_iterator(dir) != fs::directory_iterator());
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);

  const std::string missing = (dir / "missing" / "machines.local.yaml").string();
  CHECK_THROWS_AS(write_overlay(missing, measured()), Error);
  CHECK_FALSE(fs::exists(missing));
  CHECK_THAT(message_of<InputError>([&] { check_writable(missing); }),
             Catch::Contains("missing") && Catch::Contains("does not exist"));
  fs::remove_all(dir);
}
