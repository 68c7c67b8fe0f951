#include "apps/calibrate/profile_runs.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/subprocess.h"
#include "common/version.h"
#include "run/provenance.h"
#include "run/scenario.h"
#include "sim/machine.h"
#include "sim/model_profile.h"
#include "strategy/strategies.h"

namespace distlab::calibrate {
namespace {

namespace fs = std::filesystem;

struct ProfileShape {
  std::string name;  // the run directory's name in the profile
  std::vector<std::string> sets;
};

// Steps enough for the first evaluation and another after it (a task's
// first use of a phase is fitted apart from the rest), and for a steady
// state: 200 to 600.
int64_t profile_steps(const run::Scenario& scenario) {
  const int64_t every = scenario.training.eval_every;
  return std::clamp<int64_t>(every > 0 ? 2 * every + 10 : 200, 200, 600);
}

// Every model can train under either strategy, and a profile is the
// model's: a replica's work measured alone beside a server, beside one
// other replica and beside three (the slowdown of tasks computing at
// once), and a server's beside its one client.
const std::vector<ProfileShape>& profile_shapes() {
  static const std::vector<ProfileShape> shapes{
      {"ring-2", {"strategy.name=allreduce", "cluster.workers=1"}},
      {"ring-4", {"strategy.name=allreduce", "cluster.workers=3"}},
      {"ps-2",
       {"strategy.name=parameter_server", "strategy.mode=async", "cluster.workers=0",
        "cluster.ps=1"}}};
  return shapes;
}

// The real run of one shape, into `folder`/`shape.name` (a run that fails
// leaves the earlier one in place).
std::string run_shape(const run::Scenario& scenario, const ProfileShape& shape, int64_t steps,
                      int threads, const fs::path& folder) {
  std::vector<std::string> args{"--launch", scenario.path};
  const YAML::Node doc = YAML::LoadFile(scenario.path);
  // What the profile measures is the training: no checkpoints, no faults.
  for (const char* key : {"checkpoint", "faults"}) {
    if (doc[key]) args.insert(args.end(), {"--unset", key});
  }
  for (const std::string& set : shape.sets) args.insert(args.end(), {"--set", set});
  args.insert(args.end(), {"--set", fmt::format("training.steps={}", steps), "--threads",
                           std::to_string(threads), "--quiet"});
  const fs::path partial = folder / (shape.name + ".partial");
  const fs::path done = folder / shape.name;
  fs::remove_all(partial);
  std::string command = "./realnet";
  for (const std::string& word : args) command += " " + run::shell_quote(word);
  command += " --out " + run::shell_quote(done.string());
  args.insert(args.end(), {"--out", partial.string()});
  const std::string log = (folder / (shape.name + ".log")).string();
  const int status = run_to_log(sibling_executable("distlab-realnet"), args, log);
  if (status != 0) {
    throw Error(fmt::format("the profile's real run {} of {} failed (exit status {}), see {}:{}",
                            shape.name, scenario.path, status, log, tail_of_file(log, 6)));
  }
  fs::remove_all(done);
  fs::rename(partial, done);
  fs::remove(log);
  return command;
}

}  // namespace

void profile_scenario(const std::string& scenario_path, int threads,
                      const std::function<void(const std::string&)>& note) {
  const sim::MachineCatalog catalog = sim::MachineCatalog::load_default();
  const run::Scenario scenario = run::load_scenario(scenario_path, {}, catalog.machine_names());
  if (strategy::describe(scenario.strategy.kind).placement ==
      strategy::Placement::kDevicesOfOneHost) {
    throw InputError(scenario_path + ": " + strategy::strategy_name(scenario.strategy.kind) +
                     " trains on GPUs; a profile measures training on this machine's CPU");
  }
  const std::string folder = sim::profile_folder(scenario.model_path);
  if (folder.empty()) {
    throw InputError(
        "DISTLAB_MACHINES_OVERLAY is empty: there is no overlay to keep the "
        "profile beside");
  }
  fs::create_directories(folder);
  const int64_t steps = profile_steps(scenario);
  nlohmann::json runs = nlohmann::json::array();
  for (const ProfileShape& shape : profile_shapes()) {
    note(fmt::format("profiling {} on this machine: {} steps of {}, {} thread{} a task", shape.name,
                     steps, fs::path(scenario.model_path).filename().string(), threads,
                     threads == 1 ? "" : "s"));
    runs.push_back(
        {{"run", shape.name}, {"command", run_shape(scenario, shape, steps, threads, folder)}});
  }
  const run::MachineFacts here = run::this_machine();
  const nlohmann::json profile{{"model", scenario.model_path},
                               {"scenario", scenario_path},
                               {"threads", threads},
                               {"machine", here.name},
                               {"version", version()},
                               {"made", static_cast<int64_t>(std::time(nullptr))},
                               {"runs", runs}};
  const std::string text = profile.dump(1) + "\n";
  write_file_atomically((fs::path(folder) / "profile.json").string(),
                        std::as_bytes(std::span<const char>(text.data(), text.size())));
  note("wrote the profile to " + folder);
}

}  // namespace distlab::calibrate
