#include "apps/simulate/simulate_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>

#include "apps/simulate/calibrate_from.h"
#include "common/error.h"
#include "common/progress.h"
#include "common/version.h"
#include "nn/keras_model.h"
#include "nn/model_spec.h"
#include "nn/model_summary.h"
#include "run/run_files.h"
#include "run/scenario.h"
#include "sim/compute_model.h"
#include "sim/model_profile.h"
#include "sim/platform.h"
#include "sim/simulation.h"

namespace distlab::simulate {
namespace {

// The scenario's changes the command line asks for: removals first, then
// every --set, then the options that set one key each.
std::vector<run::Override> overrides_of(const Options& o) {
  std::vector<run::Override> overrides;
  for (const std::string& key : o.unsets) overrides.push_back(run::parse_unset(key));
  for (const std::string& text : o.sets) overrides.push_back(run::parse_override(text));
  if (!o.fidelity.empty()) overrides.push_back({"fidelity", o.fidelity});
  if (o.seed) overrides.push_back({"seed", std::to_string(*o.seed)});
  if (o.checkpoint_every) {
    overrides.push_back({"checkpoint.every_steps", std::to_string(*o.checkpoint_every)});
  }
  return overrides;
}

// The machine types a scenario's tasks run on, each once.
std::vector<std::string> used_machine_types(const run::Scenario& scenario) {
  std::vector<std::string> types;
  for (const strategy::TaskId task : scenario.cluster.spec.tasks()) {
    const std::string& machine = scenario.cluster.machine_of(task.role);
    if (std::find(types.begin(), types.end(), machine) == types.end()) types.push_back(machine);
  }
  return types;
}

void note_uncalibrated_local(run::Scenario& scenario, const sim::MachineCatalog& catalog) {
  for (const std::string& machine : used_machine_types(scenario)) {
    if (machine == "local" && !catalog.machine(machine).calibrated) {
      scenario.notes.push_back(
          "note: machine type local has rough figures, not this machine's: run ./calibrate "
          "to measure them");
    }
  }
}

// Replicas train in the scenario's precision; parameter servers only
// apply float32 updates.
void note_precision_support(run::Scenario& scenario, const sim::MachineCatalog& catalog) {
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
}

// The real runs whose costs the simulation uses: those of --calibrate-from,
// or for a scenario all on machine local with one_host placement, the
// profile ./calibrate --scenario made of its model here, if any.
std::vector<std::string> measured_runs(const Options& o, run::Scenario& scenario) {
  if (!o.calibrate_from.empty() || o.no_profile) return o.calibrate_from;
  const std::vector<std::string> types = used_machine_types(scenario);
  if (types != std::vector<std::string>{"local"} ||
      scenario.cluster.placement != run::Placement::kOneHost) {
    return {};
  }
  std::vector<std::string> runs = sim::profile_runs(scenario.model_path);
  if (!runs.empty()) {
    scenario.notes.push_back("note: each phase costs what the profile of " +
                             std::filesystem::path(scenario.model_path).filename().string() +
                             " measured here (" +
                             std::filesystem::path(runs.front()).parent_path().string() +
                             ", ./calibrate --scenario); --no-profile for the model's costs");
  }
  return runs;
}

// The run directory is claimed first, so that a bad --out is found before
// the simulation rather than after it.
run::OutDirectory claim_run_directory(const Options& o, const run::Scenario& scenario) {
  const std::string out = o.out.empty() ? run::unused_directory(run::default_run_directory(
                                              "runs", scenario.name, std::time(nullptr)))
                                        : o.out;
  return run::claim_out_directory(out, o.resume, "simulate");
}

// What the user sees while the simulation runs: the checkpoints' notes and
// the tasks' failures and recoveries on stderr, and a progress display once
// the step count is known, when the data are loaded, at the first step.
class SimulationDisplay {
 public:
  explicit SimulationDisplay(bool quiet) : quiet_(quiet) {}

  void checkpoint_note(const std::string& line) const {
    if (!quiet_) std::fprintf(stderr, "%s\n", line.c_str());
  }

  void event(const std::string& line) {
    if (quiet_) return;
    if (progress_) {
      progress_->note(line);
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }

  void progress(int64_t done, int64_t total, double simulated) {
    if (!progress_) progress_ = std::make_unique<Progress>("simulating", total, stderr, !quiet_);
    progress_->update(done, fmt::format("{:.2f} simulated s", simulated));
  }

  void finish(const run::RunResult& result) {
    if (progress_) {
      progress_->finish(
          fmt::format("{:.2f} simulated s in {:.1f} s", result.run_seconds, result.wall_seconds));
    }
  }

 private:
  bool quiet_;
  std::unique_ptr<Progress> progress_;
};

sim::SimulationOptions simulation_options(const Options& o, const std::string& dir,
                                          SimulationDisplay& display) {
  sim::SimulationOptions options;
  options.compute_threads = o.threads;
  options.checkpoints = {
      .run_directory = dir, .resume = o.resume, .note = [&display](const std::string& line) {
        display.checkpoint_note(line);
      }};
  options.on_event = [&display](const std::string& line) { display.event(line); };
  options.on_progress = [&display](int64_t done, int64_t total, double simulated) {
    display.progress(done, total, simulated);
  };
  return options;
}

// The command and the machine types: what only the command knows.
void add_provenance(run::RunResult& result, const Options& o, const run::Scenario& scenario,
                    const sim::MachineCatalog& catalog) {
  result.provenance.command = o.command;
  result.provenance.version = version();
  result.provenance.machines = sim::machine_facts(sim::plan_cluster(scenario, catalog), catalog);
}

}  // namespace

int simulate_command(const Options& o) {
  const std::vector<run::Override> overrides = overrides_of(o);
  const sim::MachineCatalog catalog = o.machines.empty() ? sim::MachineCatalog::load_default()
                                                         : sim::MachineCatalog::load(o.machines);
  run::Scenario scenario = run::load_scenario(o.scenario, overrides, catalog.machine_names());
  note_uncalibrated_local(scenario, catalog);
  note_precision_support(scenario, catalog);
  const std::vector<std::string> measured = measured_runs(o, scenario);
  if (!o.quiet) {
    for (const std::string& note : scenario.notes) std::fprintf(stderr, "%s\n", note.c_str());
  }
  const run::OutDirectory out = claim_run_directory(o, scenario);
  const std::string& dir = out.path;
  if (!o.quiet) {
    std::printf("simulating %s: %s\n", scenario.name.c_str(), scenario.description.c_str());
    // An imported model's layers, as Keras' model.summary() shows them.
    if (nn::names_keras_model(scenario.model_path)) {
      const nn::ModelSpec spec = nn::load_model_spec(scenario.model_path);
      std::printf("%s", nn::model_summary(spec.name, *nn::build_network(spec)).c_str());
    }
    std::fflush(stdout);
  }
  SimulationDisplay display(o.quiet);
  sim::SimulationOptions options = simulation_options(o, dir, display);
  if (!measured.empty()) {
    options.measured_costs = o.calibrate_from.empty()
                                 ? profile_costs(measured, scenario, o.machines)
                                 : measured_costs_from(measured, scenario, o.machines);
    if (!o.quiet) {
      for (const std::string& line : describe_measured_costs(*options.measured_costs)) {
        std::fprintf(stderr, "measured costs: %s\n", line.c_str());
      }
    }
  }
  run::RunResult result = sim::simulate(scenario, catalog, options);
  if (options.measured_costs) {
    result.calibrated_from = sim::measured_costs_json(*options.measured_costs);
  }
  add_provenance(result, o, scenario, catalog);
  display.finish(result);
  run::write_run_directory(out, result);
  if (!o.quiet) std::printf("%s", run::format_run_written(out, result).c_str());
  return 0;
}

}  // namespace distlab::simulate
