// A task's report survives its trip through JSON, and the run assembled
// from the reports takes replica 0's figures as the cluster names it, for
// every backend alike.
#include "run/task_report.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "run/run_assembly.h"

using namespace distlab;
using namespace distlab::run;
using strategy::Role;

namespace {

TaskReport report(Role role, int index, double finished) {
  TaskReport r;
  r.log.task = {role, index};
  r.log.host = "127.0.0.1:2222";
  r.log.steps.push_back({.step = 0,
                         .start = 0.5,
                         .end = 1.25,
                         .compute_seconds = 0.5,
                         .communication_seconds = 0.125,
                         .waiting_seconds = 0.125,
                         .input_seconds = 0.0625,
                         .bytes_sent = 4096,
                         .bytes_received = 2048,
                         .staleness = role == Role::kPs ? 3 : -1,
                         .loss = role == Role::kPs ? std::nan("") : 0.75,
                         .phases = {0.0625, 0.25, 0.25, 0.0625, 0, 0.0625, 0.0625, 0, 0, 0},
                         .phase_cpu = {0, 0.5, 0.5, 0.125, 0, 0.03125, 0, 0, 0, 0}});
  r.log.spans.push_back({strategy::SpanKind::kWait, 1.0, 1.125, "ps:0"});
  r.log.curve.push_back(
      {.seconds = 1.25, .step = 1, .train_loss = 0.75, .test_loss = 0.5, .test_accuracy = 0.875});
  r.log.bytes_sent = 4096;
  r.log.messages_sent = 3;
  r.log.payloads_read_in_place = 2;
  r.log.input_seconds = 0.25;
  r.log.phases[strategy::index_of(strategy::Phase::kEvaluation)] = 2.5;
  r.log.phase_cpu[strategy::index_of(strategy::Phase::kEvaluation)] = 4.75;
  r.log.finished_at = finished;
  r.log.examples = role == Role::kPs ? 0 : 128;
  r.outcome.updates = 7;
  r.outcome.final_loss = std::nan("");
  r.outcome.weights_sha256 = role == Role::kPs ? "" : std::string(64, 'a' + index);
  r.spans_dropped = 2;
  return r;
}

}  // namespace

TEST_CASE("a task report reads back as it was written, NaN included") {
  const TaskReport original = report(Role::kPs, 1, 9.5);
  const TaskReport back = parse_task_report(task_report_json(original), "ps-1.json");
  CHECK(back.log.task == original.log.task);
  CHECK(back.log.host == original.log.host);
  REQUIRE(back.log.steps.size() == 1);
  CHECK(back.log.steps[0].staleness == 3);
  CHECK(std::isnan(back.log.steps[0].loss));
  CHECK(back.log.steps[0].bytes_received == 2048);
  CHECK(back.log.steps[0].input_seconds == 0.0625);
  CHECK(back.log.input_seconds == 0.25);
  CHECK(back.log.steps[0].phases == original.log.steps[0].phases);
  CHECK(back.log.phases == original.log.phases);
  CHECK(back.log.phases[strategy::index_of(strategy::Phase::kEvaluation)] == 2.5);
  CHECK(back.log.steps[0].phase_cpu == original.log.steps[0].phase_cpu);
  CHECK(back.log.phase_cpu[strategy::index_of(strategy::Phase::kEvaluation)] == 4.75);
  REQUIRE(back.log.spans.size() == 1);
  CHECK(back.log.spans[0].kind == strategy::SpanKind::kWait);
  CHECK(back.log.spans[0].label == "ps:0");
  CHECK(back.log.curve[0].test_accuracy == 0.875);
  CHECK(back.log.messages_sent == 3);
  CHECK(back.log.payloads_read_in_place == 2);
  CHECK(back.log.finished_at == 9.5);
  const TaskReport worker = report(Role::kWorker, 0, 1.0);
  CHECK(parse_task_report(task_report_json(worker), "worker-0.json").log.examples == 128);
  CHECK(back.outcome.updates == 7);
  CHECK(std::isnan(back.outcome.final_loss));
  CHECK(back.spans_dropped == 2);
}

TEST_CASE("a file that is not a task report is an error naming it") {
  CHECK_THROWS_WITH(parse_task_report("{\"role\": \"chief\"}", "tasks/chief-0.json"),
                    Catch::Contains("tasks/chief-0.json: not a task report"));
  CHECK_THROWS_WITH(parse_task_report("not json", "x.json"), Catch::Contains("x.json"));
}

// A report may come over the network from a peer: a short row, a count
// written as a float or a negative number, and a span kind that does not
// exist are each refused, not read past or cast.
TEST_CASE("a damaged task report is an error, whatever part is damaged") {
  const nlohmann::json good = nlohmann::json::parse(task_report_json(report(Role::kWorker, 0, 1)));
  REQUIRE_NOTHROW(parse_task_report(good.dump(), "good"));
  const auto refused = [&](const std::function<void(nlohmann::json&)>& damage) {
    nlohmann::json bad = good;
    damage(bad);
    CHECK_THROWS_WITH(parse_task_report(bad.dump(), "worker-0"),
                      Catch::Contains("worker-0: not a task report"));
  };
  refused([](auto& j) { j["totals"].erase(j["totals"].size() - 1); });
  refused([](auto& j) { j["steps"][0].erase(13); });
  refused([](auto& j) { j["curve"][0] = nlohmann::json::array({1.25}); });
  refused([](auto& j) { j["totals"][4] = 1e300; });
  refused([](auto& j) { j["totals"][6] = -3; });
  refused([](auto& j) { j["steps"][0][0] = 0.5; });
  refused([](auto& j) { j["spans"][0][0] = 99; });
  refused([](auto& j) { j["spans"][0][0] = -1; });
  refused([](auto& j) { j["index"] = "0"; });
  refused([](auto& j) { j["outcome"]["weights_sha256"] = 7; });
}

namespace {

Scenario scenario_of(strategy::ClusterSpec spec) {
  Scenario s;
  s.name = "taxi";
  s.description = "a test run";
  s.seed = 7;
  s.cluster.spec = spec;
  s.strategy.kind = strategy::StrategyKind::kParameterServer;
  return s;
}

}  // namespace

TEST_CASE("assembly takes replica 0 as the cluster names it, and the latest finish") {
  // No chief: worker 0 is replica 0.
  const strategy::ClusterSpec spec{.chiefs = 0, .workers = 2, .ps = 1};
  std::vector<TaskReport> reports;
  reports.push_back(report(Role::kWorker, 0, 3.0));
  reports.push_back(report(Role::kWorker, 1, 4.5));
  reports.push_back(report(Role::kPs, 0, 4.0));
  reports[0].log.steps.push_back(reports[0].log.steps.back());
  reports[0].log.steps.back().step = 11;  // worker 0 reached step 12
  reports[0].outcome.final_accuracy = 0.625;
  const RunResult run = assemble_run(scenario_of(spec), spec, std::move(reports),
                                     {.backend = "realnet", .model_bytes = 4000});
  CHECK(run.weights_sha256 == std::string(64, 'a'));
  CHECK(run.final_accuracy == 0.625);
  CHECK(run.run_seconds == 4.5);
  CHECK(run.examples == 256);
  CHECK(run.spans_dropped == 6);
  CHECK(run.tasks.size() == 3);
  CHECK(run.task_updates == std::vector<int64_t>{7, 7, 7});
  CHECK(run.task_weights_sha256 ==
        std::vector<std::string>{std::string(64, 'a'), std::string(64, 'b'), ""});
  CHECK(run.steps == 12);
  CHECK(run.replicas == 2);
  CHECK(run.backend == "realnet");
  CHECK(run.fidelity == "full");
  CHECK(run.scenario == "taxi");
  CHECK(run.seed == 7);
  CHECK(run.model_bytes == 4000);
  CHECK(run.resumed_from.empty());
  CHECK(run.start_step == 0);
}

TEST_CASE("with a chief, replica 0 is the chief even when its report is not first to finish") {
  const strategy::ClusterSpec spec{.chiefs = 1, .workers = 1, .ps = 1};
  std::vector<TaskReport> reports;
  reports.push_back(report(Role::kChief, 2, 5.0));  // index 2: weights "ccc..."
  reports.push_back(report(Role::kWorker, 0, 1.0));
  reports.push_back(report(Role::kPs, 0, 2.0));
  const RunResult run = assemble_run(scenario_of(spec), spec, std::move(reports), {});
  CHECK(run.weights_sha256 == std::string(64, 'c'));
  CHECK(run.run_seconds == 5.0);
}

TEST_CASE("a resumed run has at least its first step, and keeps failures and provenance") {
  const strategy::ClusterSpec spec{.chiefs = 1, .workers = 0, .ps = 0};
  std::vector<TaskReport> reports;
  reports.push_back(report(Role::kChief, 0, 1.0));
  reports[0].log.steps.clear();  // resumed at the end: nothing left to train
  Scenario scenario = scenario_of(spec);
  scenario.fidelity = strategy::Fidelity::kTiming;
  scenario.text = "model: m.yaml\nseed: 7\n";
  RunAssembly how{
      .backend = "simulate",
      .resumed_from = ResumedFrom{.path = "runs/a/checkpoints/step-40.safetensors", .step = 40},
      .failures = {{.task = "chief:0", .cause = "mtbf", .recovery = "rollback"}},
      .provenance = {.command = "./simulate x.yaml", .version = "abc"}};
  const RunResult run = assemble_run(scenario, spec, std::move(reports), std::move(how));
  CHECK(run.steps == 40);
  CHECK(run.start_step == 40);
  CHECK(run.resumed_from == "runs/a/checkpoints/step-40.safetensors");
  CHECK(run.fidelity == "timing");
  REQUIRE(run.failures.size() == 1);
  CHECK(run.failures[0].cause == "mtbf");
  CHECK(run.provenance.command == "./simulate x.yaml");
  CHECK(run.provenance.scenario_text == scenario.text);  // scenario.yaml
}

TEST_CASE("without replica 0's report, the steps are the furthest another replica reached") {
  const strategy::ClusterSpec spec{.chiefs = 1, .workers = 2, .ps = 0};
  std::vector<TaskReport> reports;
  reports.push_back(TaskReport{});  // the chief's, missing: its name alone
  reports[0].log.task = {Role::kChief, 0};
  reports.push_back(report(Role::kWorker, 0, 1.0));
  reports.push_back(report(Role::kWorker, 1, 1.0));
  reports[2].log.steps.push_back(reports[2].log.steps.back());
  reports[2].log.steps.back().step = 29;  // worker 1 reached step 30
  const RunResult run =
      assemble_run(scenario_of(spec), spec, std::move(reports),
                   {.missing_reports = {{.task = "chief:0", .reason = "it died"}}});
  CHECK(run.steps == 30);
  CHECK(run.weights_sha256.empty());
  REQUIRE(run.missing_reports.size() == 1);
}

TEST_CASE("assembly refuses reports that are not one per task") {
  const strategy::ClusterSpec spec{.chiefs = 1, .workers = 1, .ps = 0};
  std::vector<TaskReport> reports;
  reports.push_back(report(Role::kChief, 0, 1.0));
  CHECK_THROWS_WITH(assemble_run(scenario_of(spec), spec, std::move(reports), {}),
                    Catch::Contains("2 tasks given 1 task reports"));
}
