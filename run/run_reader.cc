#include "run/run_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/atomic_file.h"
#include "common/csv_table.h"
#include "common/error.h"
#include "run/steps_csv.h"

namespace distlab::run {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// summary.json writes NaN and infinity as null.
double number(const json& value) {
  return value.is_null() ? kNaN : value.get<double>();
}

std::string text_or_empty(const json& value) {
  return value.is_null() ? std::string() : value.get<std::string>();
}

strategy::Role role_named(const std::string& name) {
  for (const strategy::Role role :
       {strategy::Role::kChief, strategy::Role::kWorker, strategy::Role::kPs}) {
    if (name == strategy::role_name(role)) return role;
  }
  throw Error("unknown role '" + name + "'");
}

strategy::PhaseSeconds phases_from(const json& object) {
  strategy::PhaseSeconds seconds{};
  for (int p = 0; p < strategy::kPhases; ++p) {
    const auto name = std::string(strategy::phase_name(static_cast<strategy::Phase>(p)));
    seconds[p] = number(object.at(name));
  }
  return seconds;
}

strategy::TaskLog task_from(const json& t) {
  strategy::TaskLog log;
  log.task = {role_named(t.at("role").get<std::string>()), t.at("index").get<int>()};
  log.host = t.at("host").get<std::string>();
  log.isa = t.at("isa").get<std::string>();
  log.examples = t.at("examples");
  log.compute_seconds = number(t.at("compute_seconds"));
  log.communication_seconds = number(t.at("communication_seconds"));
  log.waiting_seconds = number(t.at("waiting_seconds"));
  log.checkpoint_seconds = number(t.at("checkpoint_seconds"));
  log.input_seconds = number(t.at("input_seconds"));
  log.slowdown_seconds = t.contains("slowdown_seconds") ? number(t.at("slowdown_seconds")) : 0;
  log.hidden_communication_seconds =
      t.contains("hidden_communication_seconds") ? number(t.at("hidden_communication_seconds")) : 0;
  log.checkpoints = t.at("checkpoints");
  log.checkpoint_bytes = t.value("checkpoint_bytes", uint64_t{0});
  log.bytes_sent = t.at("bytes_sent");
  log.bytes_received = t.at("bytes_received");
  log.messages_sent = t.at("messages_sent");
  log.messages_received = t.at("messages_received");
  log.payloads_read_in_place = t.value("payloads_read_in_place", uint64_t{0});
  log.finished_at = number(t.at("finished_at"));
  log.phases = phases_from(t.at("phase_seconds"));
  log.phase_cpu = phases_from(t.at("phase_cpu_seconds"));
  return log;
}

void read_summary(const json& s, RunResult& r) {
  r.scenario = s.at("scenario");
  r.description = s.at("description");
  r.strategy = s.at("strategy");
  r.backend = s.at("backend");
  r.fidelity = s.at("fidelity");
  r.seed = s.at("seed");
  r.run_seconds = number(s.at("run_seconds"));
  r.wall_seconds = number(s.at("wall_seconds"));
  if (const auto it = s.find("simulation_wall_seconds"); it != s.end() && !it->is_null()) {
    r.simulation_wall_seconds = it->get<double>();
  }
  if (const auto it = s.find("simulation_cpu_seconds"); it != s.end() && !it->is_null()) {
    r.simulation_cpu_seconds = it->get<double>();
  }
  r.model_bytes = s.at("model_bytes");
  r.replicas = s.at("replicas");
  r.steps = s.at("steps");
  r.examples = s.at("examples");
  r.resumed_from = text_or_empty(s.at("resumed_from"));
  r.start_step = s.at("start_step");
  const json& checkpoints = s.at("checkpoints");
  r.checkpoint.every_steps = checkpoints.at("every_steps");
  r.checkpoint.every_seconds = number(checkpoints.at("every_seconds"));
  r.checkpoint.keep = checkpoints.at("keep");
  r.final_loss = number(s.at("final_loss"));
  r.final_accuracy = number(s.at("final_accuracy"));
  r.weights_sha256 = text_or_empty(s.at("weights_sha256"));
  r.spans_dropped = s.at("timeline_spans_dropped");
  r.provenance.command = s.at("command");
  r.provenance.version = s.at("version");
  for (const auto& [name, entry] : s.at("machines").items()) {
    MachineFacts facts{.name = name, .description = entry.value("description", "")};
    for (const auto& [key, value] : entry.items()) {
      if (key != "description") facts.figures.emplace_back(key, number(value));
    }
    r.provenance.machines.push_back(std::move(facts));
  }
  if (const auto it = s.find("placement"); it != s.end()) {
    r.placement = {.kind = it->at("kind"),
                   .host_cores = it->value("host_cores", 0),
                   .threads_per_task = it->value("threads_per_task", 0)};
  }
  if (const auto it = s.find("calibrated_from"); it != s.end()) r.calibrated_from = it->dump();
  for (const json& f : s.at("failures")) {
    r.failures.push_back({.at = number(f.at("at")),
                          .task = f.at("task"),
                          .cause = f.at("cause"),
                          .recovery = f.at("recovery"),
                          .restored_step = f.at("restored_step"),
                          .lost_steps = f.at("lost_steps"),
                          .recovery_seconds = number(f.at("recovery_seconds"))});
  }
  if (const auto it = s.find("missing_reports"); it != s.end()) {
    for (const json& m : *it) r.missing_reports.push_back({m.at("task"), m.at("reason")});
  }
  if (const auto it = s.find("segments"); it != s.end()) {
    for (const json& g : *it) {
      r.segments.push_back({.command = g.at("command"),
                            .version = g.at("version"),
                            .resumed_from = text_or_empty(g.at("resumed_from")),
                            .start_step = g.at("start_step"),
                            .steps = g.at("steps"),
                            .started_at = number(g.at("started_at")),
                            .run_seconds = number(g.at("run_seconds")),
                            .wall_seconds = number(g.at("wall_seconds"))});
    }
  }
  for (const json& t : s.at("tasks")) {
    r.tasks.push_back(task_from(t));
    r.task_updates.push_back(t.value("updates", int64_t{0}));
    r.task_gradients_dropped.push_back(t.value("gradients_dropped", int64_t{0}));
    r.task_weights_sha256.emplace_back();
  }
}

// A CSV file of the run directory, read whole.
CsvTable read_csv(const fs::path& path) {
  const CsvTable table(read_file_text(path.string()), path.string());
  if (!table.has_header()) throw DataError(path.string(), "empty: no header");
  return table;
}

void read_steps(const fs::path& path, RunResult& r) {
  const CsvTable csv = read_csv(path);
  const std::size_t task_column = csv.column("task");
  for (size_t i = 0; i < csv.rows(); ++i) {
    const std::string& name = csv.cell(i, task_column);
    const auto task = std::find_if(r.tasks.begin(), r.tasks.end(), [&](const auto& t) {
      return strategy::task_name(t.task) == name;
    });
    if (task == r.tasks.end()) {
      throw DataError(path.string(),
                      fmt::format("row {}: task {} is not in summary.json", i + 2, name));
    }
    task->steps.push_back(read_step(csv, i));
  }
}

// The chief's evaluations: replica 0, the first task in cluster order.
void read_curve(const fs::path& path, RunResult& r) {
  const CsvTable csv = read_csv(path);
  if (csv.rows() > 0 && r.tasks.empty()) {
    throw DataError(path.string(), "evaluations, but no task in summary.json");
  }
  for (size_t i = 0; i < csv.rows(); ++i) {
    r.tasks.front().curve.push_back({.seconds = csv.real(i, "seconds"),
                                     .step = csv.whole(i, "step"),
                                     .train_loss = csv.real(i, "train_loss"),
                                     .test_loss = csv.real(i, "test_loss"),
                                     .test_accuracy = csv.real(i, "test_accuracy")});
  }
}

}  // namespace

RunResult read_run_directory(const std::string& dir) {
  const fs::path path(dir);
  RunResult r;
  const std::string summary_path = (path / "summary.json").string();
  try {
    read_summary(json::parse(read_file_text(summary_path)), r);
  } catch (const json::exception& e) {
    throw DataError(summary_path, std::string("not a summary that distlab wrote: ") + e.what());
  } catch (const DataError&) {
    throw;
  } catch (const Error& e) {
    throw DataError(summary_path, e.what());
  }
  read_steps(path / "steps.csv", r);
  read_curve(path / "curve.csv", r);
  if (fs::exists(path / "scenario.yaml")) {
    r.provenance.scenario_text = read_file_text((path / "scenario.yaml").string());
  }
  return r;
}

}  // namespace distlab::run
