// ./simulate: runs a scenario in a SimGrid-simulated cluster and leaves a run
// directory (summary.json, steps.csv, curve.csv, timeline.json).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/cli.h"
#include "common/error.h"
#include "common/progress.h"
#include "common/version.h"
#include "nn/kernels/kernels.h"
#include "run/provenance.h"
#include "run/run_files.h"
#include "run/scenario.h"
#include "sim/platform.h"
#include "sim/simulation.h"

namespace {

using namespace distlab;

struct Options {
  std::string scenario;
  std::vector<std::string> sets;
  std::vector<std::string> unsets;
  std::string fidelity;
  std::optional<uint64_t> seed;
  std::string out;
  std::string resume;
  std::optional<int64_t> checkpoint_every;
  std::vector<std::string> machines;  // empty: the shipped catalog and ./calibrate's overlay
  int threads = 2;
  bool quiet = false;
  std::string command;  // the command line, for summary.json
};

// The machine types a scenario's tasks run on, each once.
std::vector<std::string> used_machine_types(const run::Scenario& scenario) {
  std::vector<std::string> types;
  for (const strategy::TaskId task : scenario.cluster.spec.tasks()) {
    const std::string& machine = scenario.cluster.machine_of(task.role);
    if (std::find(types.begin(), types.end(), machine) == types.end()) types.push_back(machine);
  }
  return types;
}

int simulate_command(const Options& o) {
  std::vector<run::Override> overrides;
  for (const std::string& key : o.unsets) overrides.push_back(run::parse_unset(key));
  for (const std::string& text : o.sets) overrides.push_back(run::parse_override(text));
  if (!o.fidelity.empty()) overrides.push_back({"fidelity", o.fidelity});
  if (o.seed) overrides.push_back({"seed", std::to_string(*o.seed)});
  if (o.checkpoint_every) {
    overrides.push_back({"checkpoint.every_steps", std::to_string(*o.checkpoint_every)});
  }
  const sim::MachineCatalog catalog = o.machines.empty() ? sim::MachineCatalog::load_default()
                                                         : sim::MachineCatalog::load(o.machines);
  run::Scenario scenario = run::load_scenario(o.scenario, overrides, catalog.machine_names());
  for (const std::string& machine : used_machine_types(scenario)) {
    if (machine == "local" && !catalog.machine(machine).calibrated) {
      scenario.notes.push_back(
          "note: machine type local has rough figures, not this machine's: run ./calibrate "
          "to measure them");
    }
  }
  // Replicas train in the scenario's precision; parameter servers only
  // apply float32 updates.
  std::vector<std::string> warned;
  for (const strategy::TaskId task : scenario.cluster.spec.tasks()) {
    if (task.role == strategy::Role::kPs) continue;
    const sim::MachineType& machine = catalog.machine(scenario.cluster.machine_of(task.role));
    if (std::find(warned.begin(), warned.end(), machine.name) != warned.end()) continue;
    warned.push_back(machine.name);
    const std::string warning =
        sim::precision_warning(machine, machine.gpu_count > 0 ? &catalog.gpu(machine.gpu) : nullptr,
                               scenario.training.precision);
    if (!warning.empty()) scenario.notes.push_back(warning);
  }
  if (!o.quiet) {
    for (const std::string& note : scenario.notes) std::fprintf(stderr, "%s\n", note.c_str());
  }

  // The run directory is made first, so that a bad --out is found before
  // the simulation rather than after it.
  const std::string dir =
      o.out.empty() ? run::default_run_directory("runs", scenario.name, std::time(nullptr)) : o.out;
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw InputError(dir + ": cannot create the run directory: " + error.message());

  if (!o.quiet) {
    std::printf("simulating %s: %s\n", scenario.name.c_str(), scenario.description.c_str());
    std::fflush(stdout);
  }
  // The step count is known once the data are loaded, at the first step.
  std::unique_ptr<Progress> progress;
  sim::SimulationOptions options;
  options.compute_threads = o.threads;
  options.checkpoints = {
      .run_directory = dir, .resume = o.resume, .note = [&](const std::string& line) {
        if (!o.quiet) std::fprintf(stderr, "%s\n", line.c_str());
      }};
  options.on_event = [&](const std::string& line) {
    if (o.quiet) return;
    if (progress) {
      progress->note(line);
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  };
  options.on_progress = [&](int64_t done, int64_t total, double simulated) {
    if (!progress) progress = std::make_unique<Progress>("simulating", total, stderr, !o.quiet);
    progress->update(done, fmt::format("{:.2f} simulated s", simulated));
  };
  run::RunResult result = sim::simulate(scenario, catalog, options);
  // The command and the machine types: what only the command knows.
  result.provenance.command = o.command;
  result.provenance.version = version();
  result.provenance.machines = sim::machine_facts(sim::plan_cluster(scenario, catalog), catalog);
  if (progress) {
    progress->finish(
        fmt::format("{:.2f} simulated s in {:.1f} s", result.run_seconds, result.wall_seconds));
  }

  run::write_run_directory(dir, result);
  if (!o.quiet) std::printf("%s", run::format_run_written(dir, result).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app(
      "Simulates a scenario on a SimGrid cluster: every task (chief, worker, ps) is an actor\n"
      "on a simulated host of the scenario's machine type, joined by simulated links.\n"
      "Writes summary.json, steps.csv, curve.csv and timeline.json to the run directory.");
  app.name("./simulate");
  app.footer(
      "Examples:\n"
      "  ./simulate scenarios/ps_4workers.yaml\n"
      "  ./simulate scenarios/mnist_cnn_sync.yaml --set training.epochs=2 --seed 3\n"
      "  ./simulate scenarios/timing_1024_workers.yaml --set cluster.workers=255\n"
      "  ./simulate scenarios/ps_4workers.yaml --set strategy.name=allreduce\n"
      "  ./simulate scenarios/cifar10_mlp_sync.yaml --fidelity timing --out runs/mlp\n"
      "  ./simulate scenarios/mnist_cnn_sync.yaml --checkpoint-every 100 --out runs/a\n"
      "  ./simulate scenarios/mnist_cnn_sync.yaml --resume runs/a --set training.epochs=2\n"
      "  ./simulate scenarios/mnist_cnn_sync.yaml --set cluster.machine=local \\\n"
      "             --set cluster.placement=one_host\n"
      "Placement: per_task gives each task a host of the machine type; one_host puts every\n"
      "task on one machine, sharing its cores, as ./realnet --launch does (machine local:\n"
      "run ./calibrate first to measure this machine).\n"
      "Batch: training.batch_size is the global batch of allreduce and mirrored, split\n"
      "among the replicas as Keras splits it (128 over 3: 43 + 43 + 42), and each\n"
      "parameter-server worker's own batch.\n"
      "Fidelity: full runs the real math in every task (losses, accuracy, weights);\n"
      "timing skips it and keeps message sizes and compute times exact.\n"
      "Checkpoints: the chief writes <run directory>/checkpoints/step-N.safetensors every\n"
      "checkpoint.every_steps steps or every_seconds simulated seconds, and at the end;\n"
      "--resume trains on from the newest valid one up to the scenario's total.\n"
      "Input: a scenario's input_pipeline (per-example stages on the host's CPU, e.g.\n"
      "mirrored_4gpu.yaml) makes a replica wait when its step is quicker than its input;\n"
      "--set input_pipeline.preprocessed=true leaves out the stages done offline.\n"
      "Exit status: 0 done, 1 the run failed, 2 bad input (scenario, option, data).\n" +
      distlab::nn::kernels::isa_help());
  app.add_option("scenario", o.scenario, "scenario file (YAML), e.g. scenarios/ps_4workers.yaml")
      ->required();
  app.add_option("--set", o.sets,
                 "override a scenario value, KEY=VALUE with a dotted key (repeatable),\n"
                 "e.g. --set cluster.workers=8 --set network.latency_us=100;\n"
                 "--set strategy.name=X also drops or adjusts what X does not take, with a note;\n"
                 "--set training.steps=N replaces the file's epochs (and the other way round)");
  app.add_option("--unset", o.unsets,
                 "remove a scenario key (repeatable), e.g. --unset checkpoint;\n"
                 "removals come before every --set");
  app.add_option("--fidelity", o.fidelity, "full or timing (default: the scenario's)")
      ->check(CLI::IsMember({"full", "timing"}));
  app.add_option("--seed", o.seed, "seed of weights, shuffling and data (default: the scenario's)");
  app.add_option("--out", o.out, "run directory (default: runs/<scenario>-<time>/)");
  app.add_option("--checkpoint-every", o.checkpoint_every,
                 "write a checkpoint every STEPS steps (sets checkpoint.every_steps)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--resume", o.resume,
                 "go on from a checkpoint: a run directory (its newest valid one) or a file");
  app.add_option("--threads", o.threads, "compute threads for the real math")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--machines", o.machines,
                 "machine catalog, then overlays whose entries replace its own (repeatable;\n"
                 "default: scenarios/machines.yaml, then scenarios/machines.local.yaml\n"
                 "when ./calibrate has written it)");
  app.add_flag("--quiet", o.quiet, "no progress display, table or messages");
  if (const auto status = parse_command_line(app, argc, argv)) return *status;
  o.command = run::shell_command(argc, argv);
  return run_reporting_errors([&] {
    distlab::nn::kernels::kernels();  // a wrong DISTLAB_ISA is refused before any work
    return simulate_command(o);
  });
}
