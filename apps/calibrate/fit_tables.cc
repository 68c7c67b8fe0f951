#include "apps/calibrate/fit_tables.h"

#include <fmt/format.h>

#include <cstdio>
#include <span>

#include "common/atomic_file.h"

namespace distlab::calibrate {
namespace {

std::string percent(double fraction) {
  return fmt::format("{:.1f}%", 100 * fraction);
}

void print_kernels(const calibration::KernelMeasurement& k) {
  std::printf(
      "\nNN layer passes at %d threads, fitted per kind as\n"
      "  op + regions x region + max(FLOPs / FLOP rate, bytes / byte rate):\n",
      k.threads);
  std::printf("  %-12s %7s %9s %11s %9s %8s %9s %9s\n", "kind", "samples", "op (us)", "region (us)",
              "GFLOP/s", "GB/s", "median", "worst");
  for (int i = 0; i < distlab::strategy::kOpKinds; ++i) {
    const auto& f = k.kinds[static_cast<std::size_t>(i)];
    std::printf("  %-12s %7d %9.2f %11.2f %9.2f %8.2f %9s %9s\n",
                distlab::strategy::op_kind_name(static_cast<distlab::strategy::OpKind>(i)),
                f.samples, f.op_seconds * 1e6, f.region_seconds * 1e6, f.flops_rate / 1e9,
                f.byte_rate / 1e9, percent(f.quality.median_error).c_str(),
                percent(f.quality.worst_error).c_str());
  }
  std::printf("\nWhole training steps (layers + update), as the simulator times them:\n");
  std::printf("  %-22s %12s %12s %12s %8s\n", "model@batch", "measured ms", "its passes ms",
              "predicted ms", "error");
  for (const auto& s : k.steps) {
    std::printf("  %-22s %12.3f %12.3f %12.3f %8s\n", s.model.c_str(), s.measured_seconds * 1e3,
                s.layer_seconds * 1e3, s.predicted_seconds * 1e3,
                percent(s.predicted_seconds / s.measured_seconds - 1).c_str());
  }
}

void print_samples(const char* title, const char* unit, double unit_scale,
                   const std::vector<calibration::Sample>& samples, double fixed, double rate) {
  std::printf("  %s:\n", title);
  for (const auto& s : samples) {
    const double predicted = fixed + (rate > 0 ? s.size / rate : 0);
    std::printf("    %12.0f B  %10.2f %s measured  %10.2f predicted  %8s\n", s.size,
                s.seconds * unit_scale, unit, predicted * unit_scale,
                percent(predicted / s.seconds - 1).c_str());
  }
}

}  // namespace

void write_samples(const std::string& path,
                   const std::vector<calibration::KernelMeasurement>& measurements) {
  std::string text =
      "threads,model,layer,kind,flops,bytes,regions,measured_seconds,predicted_seconds\n";
  for (const auto& k : measurements) {
    for (const auto& s : k.samples) {
      text += fmt::format("{},{},{},{},{},{},{},{:.9f},{:.9f}\n", k.threads, s.model, s.layer,
                          distlab::strategy::op_kind_name(s.kind), s.flops, s.bytes, s.regions,
                          s.seconds, calibration::predicted_seconds(s, k));
    }
  }
  write_file_atomically(path, std::as_bytes(std::span(text.data(), text.size())));
}

void print_fit_tables(const calibration::MachineFigures& figures, int threads) {
  for (const auto& k : figures.kernels) print_kernels(k);
  const calibration::MemoryMeasurement& memory = figures.memory;
  const calibration::LinkMeasurement& loopback = figures.loopback;
  const calibration::DiskMeasurement& disk = figures.disk;
  std::printf("\nMemory: %.2f GB/s at %d threads\n", memory.bandwidth / 1e9, threads);
  std::printf("\nLoopback through TcpRuntime: %.1f us one way, %.2f GB/s (median error %s)\n",
              loopback.latency_seconds * 1e6, loopback.bandwidth / 1e9,
              percent(loopback.quality.median_error).c_str());
  print_samples("one-way time by message size", "us", 1e6, loopback.samples,
                loopback.latency_seconds, loopback.bandwidth);
  std::printf("\nLoopback CPU per message, both sides: %.1f us + %.2f GB/s (median error %s)\n",
              loopback.cpu_seconds * 1e6, loopback.cpu_bandwidth / 1e9,
              percent(loopback.cpu_quality.median_error).c_str());
  print_samples("CPU time by message size", "us", 1e6, loopback.cpu_samples, loopback.cpu_seconds,
                loopback.cpu_bandwidth);
  std::printf("\nDisk (write, fsync, rename): %.2f ms a file, %.0f MB/s (median error %s)\n",
              disk.file_seconds * 1e3, disk.write_bandwidth / 1e6,
              percent(disk.quality.median_error).c_str());
  print_samples("time by file size", "ms", 1e3, disk.samples, disk.file_seconds,
                disk.write_bandwidth);
  const sim::CoreSharing& sharing = figures.core_sharing;
  if (!sharing.measured()) return;
  std::printf(
      "\nCores shared among more threads than cores: a task's share over 1 ms varies by "
      "(standard deviation of its logarithm), an uneven share lasting %.1f ms:\n",
      sharing.correlation_seconds * 1e3);
  for (const auto& [load, spread] : sharing.spread_by_load) {
    std::printf("    %5.2f threads per core   %.3f\n", load, spread);
  }
}

}  // namespace distlab::calibrate
