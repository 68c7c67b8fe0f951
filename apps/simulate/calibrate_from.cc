#include "apps/simulate/calibrate_from.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <span>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/sha256.h"
#include "common/subprocess.h"
#include "common/version.h"
#include "sim/machine.h"

namespace distlab::simulate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json read_summary(const fs::path& dir) {
  const fs::path path = dir / "summary.json";
  std::ifstream in(path);
  if (!in) throw InputError(dir.string() + ": not a run directory (no summary.json)");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw InputError(path.string() + ": not JSON: " + e.what());
  }
}

// The model file a run's scenario.yaml names ("models/cifar10_mlp.yaml").
std::string model_of_run(const fs::path& dir) {
  const fs::path path = dir / "scenario.yaml";
  if (!fs::exists(path)) {
    throw InputError(dir.string() +
                     ": no scenario.yaml: the run's scenario is needed to "
                     "simulate it");
  }
  try {
    const YAML::Node model = YAML::LoadFile(path.string())["model"];
    if (model && model.IsScalar()) return model.as<std::string>();
  } catch (const YAML::Exception& e) {
    throw InputError(path.string() + ": " + e.what());
  }
  throw InputError(path.string() + ": no model");
}

// A folder that goes with its contents when it goes out of scope.
class TemporaryFolder {
 public:
  TemporaryFolder() {
    std::string pattern = (fs::temp_directory_path() / "distlab-reference-XXXXXX").string();
    if (!mkdtemp(pattern.data())) {
      throw Error("cannot make a temporary folder: " + std::string(std::strerror(errno)));
    }
    path_ = pattern;
  }
  ~TemporaryFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The real run's scenario, simulated as it was placed: its totals.
sim::RunTotals simulate_reference(const fs::path& dir, const json& summary,
                                  const run::Scenario& target,
                                  const std::vector<std::string>& machines, const fs::path& out) {
  std::vector<std::string> args{(dir / "scenario.yaml").string(),
                                "--set",
                                "model=" + fs::absolute(target.model_path).string(),
                                "--fidelity",
                                "timing",
                                "--quiet",
                                "--no-profile",
                                "--out",
                                (out / "run").string()};
  // ./realnet --launch ran every task on this machine.
  const json placement = summary.value("placement", json::object());
  if (placement.is_object() && placement.value("kind", std::string()) == "one_host") {
    for (const char* set : {"cluster.machine=local", "cluster.placement=one_host"}) {
      args.insert(args.end(), {"--set", set});
    }
  }
  for (const std::string& m : machines) args.insert(args.end(), {"--machines", m});
  const fs::path log = out / "simulate.log";
  const int status = run_to_log(this_executable(), args, log.string());
  if (status != 0) {
    throw Error(fmt::format("simulating the scenario of {} failed (exit status {}):{}",
                            dir.string(), status, tail_of_file(log.string(), 6)));
  }
  return sim::read_run_totals((out / "run").string());
}

}  // namespace

sim::MeasuredCosts measured_costs_from(const std::vector<std::string>& run_dirs,
                                       const run::Scenario& target,
                                       const std::vector<std::string>& machines) {
  std::vector<sim::RunPair> pairs;
  for (const std::string& name : run_dirs) {
    const fs::path dir(name);
    const json summary = read_summary(dir);
    if (summary.value("backend", std::string()) != "realnet") {
      throw InputError(name +
                       ": --calibrate-from takes a real run (./realnet); this one is from ./" +
                       summary.value("backend", std::string("?")));
    }
    const std::string model = model_of_run(dir);
    if (fs::path(model).filename() != fs::path(target.model_path).filename()) {
      throw InputError(name + " trained " + model + ", the scenario trains " +
                       fs::path(target.model_path).filename().string() +
                       ": a run calibrates simulations of its own model");
    }
    sim::RunPair pair;
    pair.real = sim::read_run_totals(dir.string());
    const TemporaryFolder out;
    pair.simulated = simulate_reference(dir, summary, target, machines, out.path());
    pairs.push_back(pair);
  }
  sim::MeasuredCosts costs = sim::fit_measured_costs(pairs);
  costs.runs = run_dirs;
  return costs;
}

namespace {

std::string file_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// What a fit depends on: distlab's version, the catalog's files and each
// run's summary (every run's CPU by phase is in it).
std::string fit_key(const std::vector<std::string>& run_dirs,
                    const std::vector<std::string>& machines) {
  std::string all = std::string(version()) + "\n";
  const std::vector<std::string> catalog =
      machines.empty() ? sim::MachineCatalog::default_paths() : machines;
  for (const std::string& path : catalog) all += path + "\n" + file_text(path) + "\n";
  for (const std::string& dir : run_dirs) {
    all += dir + "\n" + file_text(fs::path(dir) / "summary.json") + "\n";
  }
  return sha256_hex(std::as_bytes(std::span<const char>(all.data(), all.size())));
}

}  // namespace

sim::MeasuredCosts profile_costs(const std::vector<std::string>& run_dirs,
                                 const run::Scenario& target,
                                 const std::vector<std::string>& machines) {
  const fs::path cache = fs::path(run_dirs.front()).parent_path() / "fitted.json";
  const std::string key = fit_key(run_dirs, machines);
  try {
    const json kept = json::parse(file_text(cache));
    if (kept.value("key", std::string()) == key) {
      return sim::parse_measured_costs(kept.at("costs").dump());
    }
  } catch (const std::exception&) {
    // No fit kept, or not this one: fitted below.
  }
  sim::MeasuredCosts costs = measured_costs_from(run_dirs, target, machines);
  const json kept{{"key", key}, {"costs", json::parse(sim::measured_costs_json(costs))}};
  const std::string text = kept.dump(1) + "\n";
  try {
    write_file_atomically(cache.string(),
                          std::as_bytes(std::span<const char>(text.data(), text.size())));
  } catch (const std::exception&) {
    // A profile in a folder this user cannot write: fitted every time.
  }
  return costs;
}

std::vector<std::string> describe_measured_costs(const sim::MeasuredCosts& costs) {
  std::vector<std::string> lines;
  for (const sim::TaskClass c : {sim::TaskClass::kReplica, sim::TaskClass::kServer}) {
    const auto k = static_cast<std::size_t>(c);
    if (!costs.measured[k]) continue;
    std::string line = c == sim::TaskClass::kReplica ? "replicas:" : "parameter servers:";
    for (int p = 0; p < strategy::kPhases; ++p) {
      const sim::PhaseCost& cost = costs.by_class[k][static_cast<std::size_t>(p)];
      const std::string_view phase = strategy::phase_name(static_cast<strategy::Phase>(p));
      if (cost.cpu_seconds_per_work > 0) {
        line += fmt::format(" {} {:.3f} ms of CPU,", phase, 1e3 * cost.cpu_seconds_per_work);
      } else if (cost.scale != 1) {
        line += fmt::format(" {} x{:.2f},", phase, cost.scale);
      }
    }
    if (line.back() == ',') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

}  // namespace distlab::simulate
