// A task's report survives its trip through JSON, and the launcher's
// gathering picks replica 0's figures, as ./simulate does.
#include "run/task_report.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "common/error.h"

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
                         .bytes_sent = 4096,
                         .bytes_received = 2048,
                         .staleness = role == Role::kPs ? 3 : -1,
                         .loss = role == Role::kPs ? std::nan("") : 0.75});
  r.log.spans.push_back({strategy::SpanKind::kWait, 1.0, 1.125, "ps:0"});
  r.log.curve.push_back(
      {.seconds = 1.25, .step = 1, .train_loss = 0.75, .test_loss = 0.5, .test_accuracy = 0.875});
  r.log.bytes_sent = 4096;
  r.log.messages_sent = 3;
  r.log.finished_at = finished;
  r.outcome.examples = role == Role::kPs ? 0 : 128;
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
  REQUIRE(back.log.spans.size() == 1);
  CHECK(back.log.spans[0].kind == strategy::SpanKind::kWait);
  CHECK(back.log.spans[0].label == "ps:0");
  CHECK(back.log.curve[0].test_accuracy == 0.875);
  CHECK(back.log.messages_sent == 3);
  CHECK(back.log.finished_at == 9.5);
  CHECK(back.outcome.updates == 7);
  CHECK(std::isnan(back.outcome.final_loss));
  CHECK(back.spans_dropped == 2);
}

TEST_CASE("a file that is not a task report is an error naming it") {
  CHECK_THROWS_WITH(parse_task_report("{\"role\": \"chief\"}", "tasks/chief-0.json"),
                    Catch::Contains("tasks/chief-0.json: not a task report"));
  CHECK_THROWS_WITH(parse_task_report("not json", "x.json"), Catch::Contains("x.json"));
}

TEST_CASE("gathering takes replica 0's weights and the latest finish") {
  std::vector<TaskReport> reports;
  reports.push_back(report(Role::kWorker, 0, 3.0));  // no chief: worker 0 is replica 0
  reports.push_back(report(Role::kWorker, 1, 4.5));
  reports.push_back(report(Role::kPs, 0, 4.0));
  const RunResult run = gather_run(std::move(reports), 2);
  CHECK(run.weights_sha256 == std::string(64, 'a'));
  CHECK(run.run_seconds == 4.5);
  CHECK(run.examples == 256);
  CHECK(run.spans_dropped == 6);
  CHECK(run.tasks.size() == 3);
  CHECK(run.task_updates == std::vector<int64_t>{7, 7, 7});
  CHECK(run.steps == 1);
}
