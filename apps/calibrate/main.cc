// ./calibrate: measures this machine and writes the catalog overlay that
// `machine: local` reads (scenarios/machines.local.yaml), so that a
// simulation of a scenario on `local` predicts what `./realnet --launch`
// does here. It measures, within its time budget:
//   - the NN core's layer passes by kind, at the threads a task uses and at
//     one thread (a task's share when the tasks outnumber the cores),
//     fitted as a fixed cost per pass and per parallel region plus a FLOP
//     rate and a byte rate;
//   - memory bandwidth;
//   - loopback latency and bandwidth through the real TCP runtime;
//   - disk writes with fsync, as checkpoints are written;
// and prints how well each fit matches what it measured.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "calibration/kernel_probe.h"
#include "calibration/overlay.h"
#include "calibration/system_probes.h"
#include "common/atomic_file.h"
#include "common/cli.h"
#include "common/error.h"
#include "common/version.h"
#include "nn/kernels/kernels.h"

namespace {

using namespace distlab;

struct Options {
  int threads = 2;
  double budget = 100;
  std::string out;
  std::string disk_folder = "runs";
  std::string samples;  // a CSV of every layer pass measured, when given
  bool quiet = false;
};

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

// Every layer pass measured, with what the fitted kind predicts of it.
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

int calibrate_command(const Options& o) {
  const auto start = std::chrono::steady_clock::now();
  const std::string out = o.out.empty() ? calibration::default_overlay_path() : o.out;
  // Found out now, not after two minutes of measuring.
  calibration::check_writable(out);
  if (!o.samples.empty()) calibration::check_writable(o.samples);
  std::filesystem::create_directories(o.disk_folder);

  const double b = o.budget;
  auto note = [&](const std::string& line) {
    if (o.quiet) return;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "[%5.1f s] %s\n", elapsed, line.c_str());
  };
  // At the threads a task has, alone; and at 1 with every other core busy:
  // what each task gets when the tasks of ./realnet --launch outnumber the
  // cores.
  std::vector<int> thread_counts = {1};
  if (o.threads > 1) thread_counts.push_back(o.threads);
  std::vector<calibration::KernelMeasurement> kernels;
  for (const int threads : thread_counts) {
    const bool busy = threads == 1;
    note(fmt::format("measuring the NN core's layer passes at {} thread{}{}", threads,
                     threads > 1 ? "s" : "", busy ? ", the other cores busy" : ""));
    kernels.push_back(calibration::measure_kernels(
        threads, DISTLAB_SOURCE_DIR "/scenarios/models",
        0.62 * b / static_cast<double>(thread_counts.size()), note, busy));
  }
  note("measuring memory bandwidth");
  const auto memory = calibration::measure_memory(o.threads, 0.08 * b);
  note("measuring loopback TCP through the real runtime");
  const auto loopback = calibration::measure_loopback(0.16 * b);
  note("measuring disk writes with fsync in " + o.disk_folder);
  const auto disk = calibration::measure_disk(o.disk_folder, 0.1 * b);

  const calibration::MachineFigures figures{.kernels = kernels,
                                            .memory = memory,
                                            .loopback = loopback,
                                            .disk = disk,
                                            .version = version()};
  calibration::write_overlay(out, figures);
  if (!o.samples.empty()) write_samples(o.samples, kernels);

  if (!o.quiet) {
    for (const auto& k : kernels) print_kernels(k);
    std::printf("\nMemory: %.2f GB/s at %d threads\n", memory.bandwidth / 1e9, o.threads);
    std::printf("\nLoopback through TcpRuntime: %.1f us one way, %.2f GB/s (median error %s)\n",
                loopback.latency_seconds * 1e6, loopback.bandwidth / 1e9,
                percent(loopback.quality.median_error).c_str());
    print_samples("one-way time by message size", "us", 1e6, loopback.samples,
                  loopback.latency_seconds, loopback.bandwidth);
    std::printf("\nDisk (write, fsync, rename): %.2f ms a file, %.0f MB/s (median error %s)\n",
                disk.file_seconds * 1e3, disk.write_bandwidth / 1e6,
                percent(disk.quality.median_error).c_str());
    print_samples("time by file size", "ms", 1e3, disk.samples, disk.file_seconds,
                  disk.write_bandwidth);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("\nwrote %s in %.0f s: scenarios on machine `local` now use these figures.\n",
                out.c_str(), elapsed);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app(
      "Measures this machine and writes the machine-catalog overlay that `machine: local`\n"
      "uses, so that ./simulate predicts what ./realnet --launch does here: the NN core's\n"
      "layer passes by kind (fixed costs per pass and per parallel region, FLOP rate, byte\n"
      "rate) at --threads threads and at 1, memory bandwidth,\n"
      "loopback latency and bandwidth through the real TCP runtime, and disk writes with\n"
      "fsync. Prints each fit beside what it measured.");
  app.name("./calibrate");
  app.footer(
      "Examples:\n"
      "  ./calibrate\n"
      "  ./calibrate --threads 1 --out /tmp/machines.local.yaml\n"
      "  ./simulate scenarios/mnist_cnn_sync.yaml --set cluster.machine=local \\\n"
      "             --set cluster.placement=one_host\n"
      "Measure with the machine otherwise idle. --threads should be the compute threads\n"
      "each task of ./realnet --launch uses (its --threads, 2 by default).\n"
      "Exit status: 0 done, 1 a measurement failed, 2 bad input.\n" +
      distlab::nn::kernels::isa_help());
  app.add_option("--threads", o.threads,
                 "compute threads a task uses; the NN probes run at this many and at 1")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--budget", o.budget, "seconds the measurements may take, about")
      ->capture_default_str()
      ->check(CLI::Range(10.0, 3600.0));
  app.add_option("--out", o.out,
                 "overlay to write (default: scenarios/machines.local.yaml, or\n"
                 "$DISTLAB_MACHINES_OVERLAY)");
  app.add_option("--disk-folder", o.disk_folder,
                 "where to time file writes: where run directories go")
      ->capture_default_str();
  app.add_option("--samples", o.samples,
                 "also write every layer pass measured, with its prediction, to this CSV");
  app.add_flag("--quiet", o.quiet, "print nothing but errors");
  if (const auto status = parse_command_line(app, argc, argv)) return *status;
  return run_reporting_errors([&] {
    distlab::nn::kernels::kernels();
    return calibrate_command(o);
  });
}
