// The fit behind ./simulate --calibrate-from, against totals worked out by
// hand: each phase's real CPU over its simulated CPU, pooled over runs, per
// kind of task.
#include "sim/measured_costs.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "common/error.h"

using namespace distlab;
using sim::ClassTotals;
using sim::RunPair;
using sim::RunTotals;
using sim::TaskClass;
using strategy::Phase;
using strategy::Role;

namespace {

constexpr std::size_t kReplica = 0;
constexpr std::size_t kServer = 1;

std::size_t at(Phase phase) {
  return static_cast<std::size_t>(strategy::index_of(phase));
}

ClassTotals totals(std::initializer_list<std::pair<Phase, double>> cpu, int64_t steps, int tasks) {
  ClassTotals t;
  for (const auto& [phase, seconds] : cpu) t.cpu_seconds[at(phase)] = seconds;
  t.steps = steps;
  t.tasks = tasks;
  return t;
}

// A run directory of a summary.json and a steps.csv, removed at the end of
// the test.
struct TemporaryRun {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("measured_costs_test_" + std::to_string(::getpid()));
  TemporaryRun(const std::string& summary, const std::string& steps) {
    std::filesystem::create_directories(path);
    std::ofstream(path / "summary.json") << summary;
    std::ofstream(path / "steps.csv") << steps;
  }
  ~TemporaryRun() { std::filesystem::remove_all(path); }
};

// steps.csv's header: the task, then the CPU columns the fit reads, then
// one that it does not.
const char* const kStepsHeader =
    "task,phase_input_cpu_seconds,phase_forward_cpu_seconds,phase_backward_cpu_seconds,"
    "phase_optimizer_cpu_seconds,phase_packing_cpu_seconds,phase_communication_cpu_seconds,"
    "phase_waiting_cpu_seconds,phase_evaluation_cpu_seconds,phase_checkpoint_cpu_seconds,"
    "phase_other_cpu_seconds,loss\n";

}  // namespace

TEST_CASE("a phase's scale is its real CPU over its simulated CPU", "[measured_costs]") {
  RunPair pair;
  pair.real.by_class[kReplica] = totals(
      {{Phase::kForward, 3.0}, {Phase::kBackward, 4.0}, {Phase::kCommunication, 0.6}}, 100, 2);
  pair.simulated.by_class[kReplica] = totals(
      {{Phase::kForward, 2.0}, {Phase::kBackward, 5.0}, {Phase::kCommunication, 0.4}}, 100, 2);
  const sim::MeasuredCosts costs = sim::fit_measured_costs({pair});
  const sim::PhaseCosts& replica = costs.of(Role::kWorker);
  CHECK(replica[at(Phase::kForward)].scale == Approx(1.5));
  CHECK(replica[at(Phase::kBackward)].scale == Approx(0.8));
  CHECK(replica[at(Phase::kCommunication)].scale == Approx(1.5));
  // The chief is a replica too.
  CHECK(&costs.of(Role::kChief) == &replica);
  CHECK(costs.measured[kReplica]);
  // No server in the run: its work keeps the model's costs.
  CHECK_FALSE(costs.measured[kServer]);
  CHECK(costs.of(Role::kPs)[at(Phase::kForward)].scale == 1);
}

TEST_CASE("runs are pooled: their CPU is added up before the division", "[measured_costs]") {
  RunPair a, b;
  a.real.by_class[kServer] = totals({{Phase::kOptimizer, 1.0}}, 10, 1);
  a.simulated.by_class[kServer] = totals({{Phase::kOptimizer, 1.0}}, 10, 1);
  b.real.by_class[kServer] = totals({{Phase::kOptimizer, 5.0}}, 10, 1);
  b.simulated.by_class[kServer] = totals({{Phase::kOptimizer, 1.0}}, 10, 1);
  const sim::MeasuredCosts costs = sim::fit_measured_costs({a, b});
  // (1 + 5) / (1 + 1), not the mean of 1 and 5 (also 3) nor of their logs.
  CHECK(costs.of(Role::kPs)[at(Phase::kOptimizer)].scale == Approx(3.0));
  b.real.by_class[kServer] = totals({{Phase::kOptimizer, 5.0}}, 10, 1);
  b.simulated.by_class[kServer] = totals({{Phase::kOptimizer, 3.0}}, 10, 1);
  CHECK(sim::fit_measured_costs({a, b}).of(Role::kPs)[at(Phase::kOptimizer)].scale ==
        Approx(6.0 / 4.0));
}

TEST_CASE("work the model gives no time gets the real CPU per step", "[measured_costs]") {
  RunPair pair;
  // Gathering the batch: 0.2 s of CPU over 400 steps of two replicas.
  pair.real.by_class[kReplica] = totals({{Phase::kInput, 0.2}, {Phase::kOther, 0.5}}, 400, 2);
  pair.simulated.by_class[kReplica] = totals({}, 400, 2);
  const sim::MeasuredCosts costs = sim::fit_measured_costs({pair});
  const sim::PhaseCosts& replica = costs.of(Role::kChief);
  CHECK(replica[at(Phase::kInput)].scale == 1);
  CHECK(replica[at(Phase::kInput)].cpu_seconds_per_work == Approx(0.2 / 400));
  // "other" is not work: it is what no phase named, and stays unmodelled.
  CHECK(replica[at(Phase::kOther)].cpu_seconds_per_work == 0);
  CHECK(replica[at(Phase::kOther)].scale == 1);
  // Waiting is not CPU work at all.
  CHECK(replica[at(Phase::kWaiting)].scale == 1);
}

TEST_CASE("a class only one side of a pair has is not fitted from it", "[measured_costs]") {
  RunPair pair;
  pair.real.by_class[kServer] = totals({{Phase::kOptimizer, 2.0}}, 10, 1);
  // The simulation of the same scenario has no server (cannot happen with
  // the same scenario, but the fit must not divide by nothing).
  const sim::MeasuredCosts costs = sim::fit_measured_costs({pair});
  CHECK_FALSE(costs.measured[kServer]);
  CHECK(costs.of(Role::kPs)[at(Phase::kOptimizer)].scale == 1);
}

TEST_CASE("a run's summary.json gives its totals by kind of task", "[measured_costs]") {
  const TemporaryRun run(R"({"tasks": [
    {"task": "chief:0", "role": "chief", "steps": 10,
     "phase_cpu_seconds": {"forward": 1.0, "backward": 2.0}},
    {"task": "worker:0", "role": "worker", "steps": 12,
     "phase_cpu_seconds": {"forward": 0.5, "input": 0.25}},
    {"task": "ps:0", "role": "ps", "steps": 22, "phase_cpu_seconds": {"optimizer": 4.0}}]})",
                         std::string(kStepsHeader) + "chief:0,0,0.5,1,0,0,0,0,0,0,0,\n");
  const RunTotals t = sim::read_run_totals(run.path.string());
  const ClassTotals& replicas = t.by_class[kReplica];
  CHECK(replicas.tasks == 2);
  CHECK(replicas.steps == 22);
  CHECK(replicas.cpu_seconds[at(Phase::kForward)] == 1.5);
  CHECK(replicas.cpu_seconds[at(Phase::kBackward)] == 2.0);
  CHECK(replicas.cpu_seconds[at(Phase::kInput)] == 0.25);
  CHECK(t.by_class[kServer].tasks == 1);
  CHECK(t.by_class[kServer].cpu_seconds[at(Phase::kOptimizer)] == 4.0);
}

TEST_CASE("each task's first step with a phase is counted apart", "[measured_costs]") {
  const TemporaryRun run(R"({"tasks": [
    {"task": "chief:0", "role": "chief", "steps": 3, "phase_cpu_seconds": {"forward": 9}},
    {"task": "worker:0", "role": "worker", "steps": 3, "phase_cpu_seconds": {"forward": 9}},
    {"task": "ps:0", "role": "ps", "steps": 2, "phase_cpu_seconds": {"optimizer": 3}}]})",
                         std::string(kStepsHeader) +
                             // The chief evaluates at its second step and third.
                             "chief:0,0,5,0,0,0,0,0,0,0,0,2.3\n"
                             "worker:0,0,4,0,0,0,0,0,0,0,0,2.3\n"
                             "ps:0,0,0,0,2,0,0,0,0,0,0,\n"
                             "chief:0,0,2,0,0,0,0,0,7,0,0,2.1\n"
                             "worker:0,0,3,0,0,0,0,0,0,0,0,2.2\n"
                             "ps:0,0,0,0,1,0,0,0,0,0,0,\n"
                             "chief:0,0,2,0,0,0,0,0,1,0,0,2.0\n");
  const RunTotals t = sim::read_run_totals(run.path.string());
  const ClassTotals& replicas = t.by_class[kReplica];
  CHECK(replicas.first_cpu_seconds[at(Phase::kForward)] == 9.0);  // 5 + 4
  CHECK(replicas.firsts[at(Phase::kForward)] == 2);
  CHECK(replicas.first_cpu_seconds[at(Phase::kEvaluation)] == 7.0);  // not the 1 after it
  CHECK(replicas.firsts[at(Phase::kEvaluation)] == 1);
  CHECK(replicas.firsts[at(Phase::kBackward)] == 0);
  CHECK(t.by_class[kServer].first_cpu_seconds[at(Phase::kOptimizer)] == 2.0);
}

TEST_CASE("the first work of a phase gets what the real first steps took beyond the rest",
          "[measured_costs]") {
  auto with_firsts = [](ClassTotals t, double first_cpu) {
    t.first_cpu_seconds[at(Phase::kEvaluation)] = first_cpu;
    t.firsts[at(Phase::kEvaluation)] = 2;
    return t;
  };
  RunPair pair;
  // Two tasks, 10 evaluations in all: the real first ones took 0.30 and
  // 0.26 s, the 8 others 0.80 s; simulated, 0.05 s each.
  pair.real.by_class[kReplica] = with_firsts(totals({{Phase::kEvaluation, 1.36}}, 100, 2), 0.56);
  pair.simulated.by_class[kReplica] =
      with_firsts(totals({{Phase::kEvaluation, 0.50}}, 100, 2), 0.10);
  const sim::MeasuredCosts costs = sim::fit_measured_costs({pair});
  const sim::PhaseCost& evaluation = costs.of(Role::kChief)[at(Phase::kEvaluation)];
  CHECK(evaluation.scale == Approx(0.80 / 0.40));
  // (0.56 - 2 x 0.10) / 2 tasks.
  CHECK(evaluation.first_cpu_seconds == Approx(0.18));
  CHECK_THAT(sim::measured_costs_json(costs), Catch::Contains(R"("first_cpu_seconds":0.18)"));

  // With no evaluation after the first, the scale takes the whole.
  pair.real.by_class[kReplica] = with_firsts(totals({{Phase::kEvaluation, 0.56}}, 100, 2), 0.56);
  pair.simulated.by_class[kReplica] =
      with_firsts(totals({{Phase::kEvaluation, 0.10}}, 100, 2), 0.10);
  const sim::MeasuredCosts whole = sim::fit_measured_costs({pair});
  CHECK(whole.of(Role::kChief)[at(Phase::kEvaluation)].scale == Approx(5.6));
  CHECK(whole.of(Role::kChief)[at(Phase::kEvaluation)].first_cpu_seconds == 0);
}

TEST_CASE("a run without CPU time by phase is refused, naming the task or column",
          "[measured_costs]") {
  const std::string steps = std::string(kStepsHeader) + "chief:0,0,1,0,0,0,0,0,0,0,0,1\n";
  {
    const TemporaryRun run(R"({"tasks": [{"task": "chief:0", "role": "chief", "steps": 3}]})",
                           steps);
    CHECK_THROWS_WITH(sim::read_run_totals(run.path.string()),
                      Catch::Contains("task chief:0 has no phase_cpu_seconds"));
  }
  {
    const TemporaryRun run(R"({"model": "x"})", steps);
    CHECK_THROWS_AS(sim::read_run_totals(run.path.string()), InputError);
  }
  const std::string summary =
      R"({"tasks": [{"task": "chief:0", "role": "chief", "steps": 1,
          "phase_cpu_seconds": {"forward": 1}}]})";
  {
    const TemporaryRun run(summary, "task,step,loss\nchief:0,0,1\n");
    CHECK_THROWS_WITH(sim::read_run_totals(run.path.string()),
                      Catch::Contains("steps.csv: no column phase_input_cpu_seconds"));
  }
  {
    const TemporaryRun run(summary, std::string(kStepsHeader) + "chief:0,0,1\n");
    CHECK_THROWS_WITH(sim::read_run_totals(run.path.string()),
                      Catch::Contains("steps.csv: line 2: 3 cells, the header has 12"));
  }
  CHECK_THROWS_WITH(sim::read_run_totals("/nonexistent"), Catch::Contains("cannot read it"));
}

TEST_CASE("the fit as summary.json keeps it names only what differs", "[measured_costs]") {
  RunPair pair;
  pair.real.by_class[kReplica] = totals({{Phase::kForward, 3.0}, {Phase::kBackward, 1.0}}, 4, 1);
  pair.simulated.by_class[kReplica] =
      totals({{Phase::kForward, 2.0}, {Phase::kBackward, 1.0}}, 4, 1);
  sim::MeasuredCosts costs = sim::fit_measured_costs({pair});
  costs.runs = {"runs/real"};
  const std::string json = sim::measured_costs_json(costs);
  CHECK_THAT(json, Catch::Contains(R"("runs":["runs/real"])"));
  CHECK_THAT(json, Catch::Contains(R"("forward":{"scale":1.5})"));
  CHECK_THAT(json, !Catch::Contains("backward"));
  CHECK_THAT(json, !Catch::Contains("server"));
}

TEST_CASE("a phase's spread is the variance of its steps' log CPU beyond the simulated one",
          "[measured_costs]") {
  // After each task's first step: the chief's forward passes took e^0 and
  // e^0.2 s (logs about their mean: -0.1, +0.1), the worker's e^1 and e^1.4
  // (-0.2, +0.2); pooled, (0.01 + 0.01 + 0.04 + 0.04) / 4 = 0.025.
  const auto e = [](double x) { return std::to_string(std::exp(x)); };
  const TemporaryRun run(
      R"({"tasks": [
    {"task": "chief:0", "role": "chief", "steps": 3, "phase_cpu_seconds": {"forward": 9}},
    {"task": "worker:0", "role": "worker", "steps": 3, "phase_cpu_seconds": {"forward": 9}}]})",
      std::string(kStepsHeader) + "chief:0,0,5,0,0,0,0,0,0,0,0,1\n" +
          "worker:0,0,5,0,0,0,0,0,0,0,0,1\n" + "chief:0,0," + e(0) + ",0,0,0,0,0,0,0,0,1\n" +
          "worker:0,0," + e(1) + ",0,0,0,0,0,0,0,0,1\n" + "chief:0,0," + e(0.2) +
          ",0,0,0,0,0,0,0,0,1\n" + "worker:0,0," + e(1.4) + ",0,0,0,0,0,0,0,0,1\n");
  const RunTotals t = sim::read_run_totals(run.path.string());
  CHECK(t.by_class[kReplica].log_cpu_steps[at(Phase::kForward)] == 4);
  CHECK(t.by_class[kReplica].log_cpu_variance[at(Phase::kForward)] == Approx(0.025).epsilon(1e-4));

  RunPair pair{t, {}};
  pair.simulated.by_class[kReplica] = totals({{Phase::kForward, 18}}, 6, 2);
  pair.simulated.by_class[kReplica].log_cpu_variance[at(Phase::kForward)] = 0.009;
  pair.simulated.by_class[kReplica].log_cpu_steps[at(Phase::kForward)] = 4;
  const sim::MeasuredCosts costs = sim::fit_measured_costs({pair});
  // What the simulation already varies is not added again.
  CHECK(costs.of(Role::kChief)[at(Phase::kForward)].spread == Approx(std::sqrt(0.025 - 0.009)));
  // Evaluations are few: no spread is fitted to them.
  CHECK(costs.of(Role::kChief)[at(Phase::kEvaluation)].spread == 0);
}

TEST_CASE("runs of different numbers of replicas give a scale in the neighbours computing",
          "[measured_costs]") {
  // A replica's forward passes: real / simulated CPU 0.8 with no other
  // replica (the chief beside a server), 1.0 beside one, 1.4 beside three.
  auto run = [](int replicas, double scale) {
    RunPair pair;
    pair.real.by_class[kReplica] = totals({{Phase::kForward, scale * replicas}}, 10, replicas);
    pair.simulated.by_class[kReplica] = totals({{Phase::kForward, 1.0 * replicas}}, 10, replicas);
    return pair;
  };
  const sim::MeasuredCosts costs = sim::fit_measured_costs({run(1, 0.8), run(2, 1.0), run(4, 1.4)});
  const sim::PhaseCost& forward = costs.of(Role::kWorker)[at(Phase::kForward)];
  CHECK(forward.scale == Approx(0.8));
  CHECK(forward.scale_per_neighbour == Approx(0.2));
  CHECK(forward.max_neighbours == 3);
  CHECK(sim::scale_beside(forward, 0) == Approx(0.8));
  CHECK(sim::scale_beside(forward, 2) == Approx(1.2));
  // Beyond the most measured, no extrapolation.
  CHECK(sim::scale_beside(forward, 7) == Approx(1.4));
  CHECK_THAT(sim::measured_costs_json(costs), Catch::Contains(R"("max_neighbours":3)"));
  // One number of replicas: one scale, pooled.
  const sim::MeasuredCosts one = sim::fit_measured_costs({run(2, 1.0), run(2, 1.2)});
  CHECK(one.of(Role::kWorker)[at(Phase::kForward)].scale == Approx(1.1));
  CHECK(one.of(Role::kWorker)[at(Phase::kForward)].scale_per_neighbour == 0);
}

TEST_CASE("a fit read back from its JSON is the same fit, exactly", "[measured_costs]") {
  sim::MeasuredCosts costs;
  costs.runs = {"a", "b"};
  costs.measured = {true, true};
  sim::PhaseCost& forward = costs.by_class[kReplica][at(Phase::kForward)];
  forward = {.scale = 0.1 + 0.2,  // not a short decimal
             .scale_per_neighbour = -0.05,
             .max_neighbours = 3,
             .cpu_seconds_per_work = 0,
             .first_cpu_seconds = 1.0 / 3,
             .spread = 0.17};
  costs.by_class[kReplica][at(Phase::kInput)].cpu_seconds_per_work = 7e-5;
  costs.by_class[kServer][at(Phase::kOptimizer)].scale = 3.7;
  const sim::MeasuredCosts back = sim::parse_measured_costs(sim::measured_costs_json(costs));
  CHECK(back.runs == costs.runs);
  CHECK(back.measured == costs.measured);
  for (std::size_t c = 0; c < 2; ++c) {
    for (std::size_t p = 0; p < static_cast<std::size_t>(strategy::kPhases); ++p) {
      const sim::PhaseCost& a = costs.by_class[c][p];
      const sim::PhaseCost& b = back.by_class[c][p];
      CHECK(a.scale == b.scale);
      CHECK(a.cpu_seconds_per_work == b.cpu_seconds_per_work);
      CHECK(a.first_cpu_seconds == b.first_cpu_seconds);
      CHECK(a.spread == b.spread);
      CHECK(a.scale_per_neighbour == b.scale_per_neighbour);
      CHECK(a.max_neighbours == b.max_neighbours);
    }
  }
  CHECK_THROWS_WITH(sim::parse_measured_costs(R"({"runs": [], "replica": {"warp": {"scale": 1}}})"),
                    Catch::Contains("no phase warp"));
  CHECK_THROWS_AS(sim::parse_measured_costs("[1, 2"), Error);
}
