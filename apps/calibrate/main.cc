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
//   - how unevenly the scheduler shares the cores among more threads than
//     it has (calibration/core_sharing_probe.h);
//   - disk writes with fsync, as checkpoints are written;
// and prints how well each fit matches what it measured.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include "apps/calibrate/fit_tables.h"
#include "apps/calibrate/profile_runs.h"
#include "calibration/core_sharing_probe.h"
#include "calibration/kernel_probe.h"
#include "calibration/overlay.h"
#include "calibration/system_probes.h"
#include "common/cli.h"
#include "common/error.h"
#include "common/kept_memory.h"
#include "common/shipped_files.h"
#include "common/version.h"
#include "nn/kernels/kernels.h"

namespace {

using namespace distlab;

struct Options {
  int threads = 2;
  double budget = 100;
  std::string out;
  std::string disk_folder = "runs";
  std::string samples;                 // a CSV of every layer pass measured, when given
  std::vector<std::string> scenarios;  // --scenario: profile these scenarios' models instead
  bool quiet = false;
};

using Note = std::function<void(const std::string&)>;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Every probe, each with its share of the budget.
calibration::MachineFigures measure(const Options& o, const Note& note) {
  const double b = o.budget;
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
        threads, shipped_scenarios_folder() + "/models",
        0.62 * b / static_cast<double>(thread_counts.size()), note, busy));
  }
  note("measuring memory bandwidth");
  const auto memory = calibration::measure_memory(o.threads, 0.08 * b);
  note("measuring loopback TCP through the real runtime");
  const auto loopback = calibration::measure_loopback(0.16 * b);
  note("measuring how unevenly the cores are shared among more threads than cores");
  const auto sharing = calibration::measure_core_sharing(
      static_cast<int>(std::max(1u, std::thread::hardware_concurrency())), o.threads,
      std::max(2.0, 0.04 * b));
  note("measuring disk writes with fsync in " + o.disk_folder);
  const auto disk = calibration::measure_disk(o.disk_folder, 0.1 * b);
  return {.kernels = kernels,
          .memory = memory,
          .loopback = loopback,
          .disk = disk,
          .core_sharing = sharing.sharing,
          .version = version()};
}

// ./calibrate --scenario: the models' profiles, not the machine's figures.
int profile_command(const Options& o) {
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& scenario : o.scenarios) {
    calibrate::profile_scenario(scenario, o.threads, [&](const std::string& line) {
      if (!o.quiet) std::fprintf(stderr, "[%5.1f s] %s\n", seconds_since(start), line.c_str());
    });
  }
  return 0;
}

int calibrate_command(const Options& o) {
  if (!o.scenarios.empty()) return profile_command(o);
  const auto start = std::chrono::steady_clock::now();
  const std::string out = o.out.empty() ? calibration::default_overlay_path() : o.out;
  // Found out now, not after two minutes of measuring.
  calibration::check_writable(out);
  if (!o.samples.empty()) calibration::check_writable(o.samples);
  std::filesystem::create_directories(o.disk_folder);

  const Note note = [&](const std::string& line) {
    if (o.quiet) return;
    std::fprintf(stderr, "[%5.1f s] %s\n", seconds_since(start), line.c_str());
  };
  const calibration::MachineFigures figures = measure(o, note);
  calibration::write_overlay(out, figures);
  if (!o.samples.empty()) calibrate::write_samples(o.samples, figures.kernels);

  if (!o.quiet) {
    calibrate::print_fit_tables(figures, o.threads);
    std::printf("\nwrote %s in %.0f s: scenarios on machine `local` now use these figures.\n",
                out.c_str(), seconds_since(start));
  }
  return 0;
}

void add_options(CLI::App& app, Options& o) {
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
  app.add_option("--scenario", o.scenarios,
                 "measure this scenario's model instead, in short real runs here (a ring of\n"
                 "two, a ring of four, and the chief with one parameter server);\n"
                 "./simulate then uses them for that model on machine local, one_host\n"
                 "(repeatable)")
      ->check(CLI::ExistingFile);
  app.add_flag("--quiet", o.quiet, "print nothing but errors");
}

}  // namespace

int main(int argc, char** argv) {
  // Measured as ./realnet's tasks run: keeping the memory they free.
  distlab::restart_with_kept_memory(argv);
  Options o;
  CLI::App app(
      "Measures this machine and writes the machine-catalog overlay that `machine: local`\n"
      "uses, so that ./simulate predicts what ./realnet --launch does here: the NN core's\n"
      "layer passes by kind (fixed costs per pass and per parallel region, FLOP rate, byte\n"
      "rate) at --threads threads and at 1, memory bandwidth,\n"
      "loopback latency and bandwidth through the real TCP runtime, how unevenly the\n"
      "scheduler shares the cores among more threads than cores, and disk writes with\n"
      "fsync. Prints each fit beside what it measured.");
  app.name("./calibrate");
  app.footer(
      "Examples:\n"
      "  ./calibrate\n"
      "  ./calibrate --threads 1 --out /tmp/machines.local.yaml\n"
      "  ./calibrate --scenario scenarios/cifar10_mlp_sync.yaml\n"
      "  ./simulate scenarios/mnist_cnn_sync.yaml --set cluster.machine=local \\\n"
      "             --set cluster.placement=one_host\n"
      "Profiles: --scenario runs the scenario's model for real on this machine, in three\n"
      "small shapes, and keeps the runs beside the overlay (profiles/<model>-<hash>/); every\n"
      "./simulate of that model on machine local with one_host placement then charges each\n"
      "phase's work at what it cost there (see ./simulate --calibrate-from).\n"
      "Measure with the machine otherwise idle. --threads should be the compute threads\n"
      "each task of ./realnet --launch uses (its --threads, 2 by default).\n"
      "Exit status: 0 done, 1 a measurement failed, 2 bad input.\n" +
      distlab::nn::kernels::isa_help());
  add_options(app, o);
  if (const auto status = parse_command_line(app, argc, argv)) return *status;
  return run_reporting_errors([&] {
    distlab::nn::kernels::kernels();
    return calibrate_command(o);
  });
}
