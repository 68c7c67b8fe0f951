#include "simulation_harness.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "child_process.h"
#include "sim/simulation.h"

namespace distlab::testing {

TinyModelFolder::TinyModelFolder(int hidden) : path_(temp_.path.string()) {
  std::ofstream(temp_.path / "tiny.yaml") << "name: tiny\ninput: [6]\nclasses: 3\nbatch_size: 8\n"
                                             "layers:\n  - dense: {units: "
                                          << hidden
                                          << ", activation: relu}\n  - dense: {units: 3}\n"
                                             "optimizer:\n  sgd: {learning_rate: 0.05}\n";
}

const nlohmann::json& task_named(const nlohmann::json& run, const std::string& name) {
  for (const nlohmann::json& t : run.at("tasks")) {
    if (t.at("name") == name) return t;
  }
  throw std::runtime_error("the simulation has no task " + name);
}

void write_bn_model(const std::string& folder) {
  std::ofstream(folder + "/bn.yaml")
      << "name: bn\ninput: [6]\nclasses: 3\nbatch_size: 8\nlayers:\n"
         "  - dense: {units: 12, activation: relu}\n  - batch_norm:\n"
         "  - dropout: {rate: 0.2}\n  - dense: {units: 3}\n"
         "optimizer:\n  adam: {learning_rate: 0.01}\n";
}

nlohmann::json simulate_yaml(const std::string& folder, const std::string& name,
                             const std::string& yaml, const std::string& catalog,
                             const run::CheckpointRequest& checkpoints,
                             const std::optional<sim::MeasuredCosts>& measured) {
  const std::string path = folder + "/" + name + ".yaml";
  std::ofstream(path) << yaml;
  return nlohmann::json::parse(in_child_process([&] {
    const run::Scenario scenario = run::load_scenario(path);
    const sim::MachineCatalog machines =
        catalog.empty() ? sim::MachineCatalog::load_default() : sim::MachineCatalog::load(catalog);
    sim::SimulationOptions options;
    options.compute_threads = 2;
    options.checkpoints = checkpoints;
    options.measured_costs = measured;
    const run::RunResult r = sim::simulate(scenario, machines, options);
    nlohmann::json out = {{"run_seconds", r.run_seconds},
                          {"final_loss", r.final_loss},
                          {"final_accuracy", r.final_accuracy},
                          {"weights_sha256", r.weights_sha256},
                          {"model_bytes", r.model_bytes},
                          {"replicas", r.replicas},
                          {"steps", r.steps},
                          {"examples", r.examples},
                          {"start_step", r.start_step},
                          {"resumed_from", r.resumed_from},
                          {"failures", nlohmann::json::array()}};
    for (const run::Failure& f : r.failures) {
      out["failures"].push_back({{"at", f.at},
                                 {"task", f.task},
                                 {"cause", f.cause},
                                 {"recovery", f.recovery},
                                 {"restored_step", f.restored_step},
                                 {"lost_steps", f.lost_steps},
                                 {"recovery_seconds", f.recovery_seconds}});
    }
    for (std::size_t t = 0; t < r.tasks.size(); ++t) {
      const strategy::TaskLog& log = r.tasks[t];
      nlohmann::json task = {{"name", strategy::task_name(log.task)},
                             {"steps", log.steps.size()},
                             {"bytes_sent", log.bytes_sent},
                             {"bytes_received", log.bytes_received},
                             {"messages_sent", log.messages_sent},
                             {"communication_seconds", log.communication_seconds},
                             {"updates", r.task_updates[t]},
                             {"gradients_dropped", r.task_gradients_dropped[t]},
                             {"weights_sha256", r.task_weights_sha256[t]},
                             {"checkpoints", log.checkpoints},
                             {"checkpoint_bytes", log.checkpoint_bytes},
                             {"checkpoint_seconds", log.checkpoint_seconds},
                             {"input_seconds", log.input_seconds},
                             {"compute_seconds", log.compute_seconds},
                             {"slowdown_seconds", log.slowdown_seconds},
                             {"waiting_seconds", log.waiting_seconds},
                             {"hidden_communication_seconds", log.hidden_communication_seconds}};
      for (const strategy::StepRecord& step : log.steps) {
        task["staleness"].push_back(step.staleness);
        task["step_starts"].push_back(step.start);
        task["compute"].push_back(step.compute_seconds);
        task["step_bytes_sent"].push_back(step.bytes_sent);
        task["step_bytes_received"].push_back(step.bytes_received);
        task["step_numbers"].push_back(step.step);
        task["step_checkpoint"].push_back(step.checkpoint_seconds);
        task["step_waiting"].push_back(step.waiting_seconds);
        task["step_input"].push_back(step.input_seconds);
        task["step_ends"].push_back(step.end);
        task["step_phases"].push_back(step.phases);
        task["step_phase_cpu"].push_back(step.phase_cpu);
      }
      out["tasks"].push_back(task);
    }
    // NaN is not JSON: a timing run's loss becomes null.
    return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }));
}

}  // namespace distlab::testing
