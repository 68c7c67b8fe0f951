// A run resumed in place: its directory claimed, read back, and continued
// (run/out_directory.h, run/run_reader.h, run/run_segments.h).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "common/error.h"
#include "run/out_directory.h"
#include "run/run_files.h"
#include "run/run_reader.h"
#include "run/run_segments.h"
#include "run/steps_csv.h"
#include "tests/run/sample_run.h"
#include "tests/support/temp_files.h"

namespace {

using distlab::test::read;
using distlab::test::TempDir;
using distlab::test::write;

namespace fs = std::filesystem;
using distlab::InputError;
using distlab::run::RunResult;
using distlab::test::three_tasks;
using nlohmann::json;

int lines(const fs::path& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

// NaN equals NaN: a loss unknown in both.
bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

// The sample run with a failure, a missing report and its provenance.
RunResult earlier_run() {
  RunResult r = three_tasks();
  r.failures.push_back({.at = 1.5,
                        .task = "worker:0",
                        .cause = "at_step 2",
                        .recovery = "rollback",
                        .restored_step = 0,
                        .lost_steps = 2,
                        .recovery_seconds = 0.25});
  r.missing_reports.push_back({"ps:0", "closed the connection"});
  r.provenance.command = "./simulate s.yaml --out a";
  r.provenance.version = "abc123";
  r.provenance.machines.push_back({"n1-standard-4", "catalog", {{"vcpus", 4}}});
  r.provenance.scenario_text = "description: first\n";
  r.tasks[0].checkpoint_bytes = 4096;
  r.checkpoint.every_steps = 2;
  return r;
}

// What a run resumed from the sample's step 4 adds: four steps more.
RunResult later_run() {
  RunResult r = three_tasks();
  r.start_step = 4;
  r.steps = 8;
  r.resumed_from = "a/checkpoints/step-000000004.safetensors";
  r.final_loss = 0.25;
  r.weights_sha256 = std::string(64, 'b');
  r.failures.push_back({.at = 0.5, .task = "chief:0", .cause = "signal 9"});
  r.provenance.command = "./simulate s.yaml --resume a --out a";
  r.provenance.version = "def456";
  r.provenance.scenario_text = "description: second\n";
  for (auto& task : r.tasks) {
    for (auto& step : task.steps) step.step += 4;
  }
  return r;
}

}  // namespace

TEST_CASE("a run directory read back holds what was written, the timeline's spans aside") {
  TempDir dir;
  const RunResult written = earlier_run();
  distlab::run::write_run_directory(dir.path.string(), written);
  const RunResult r = distlab::run::read_run_directory(dir.path.string());

  CHECK(r.scenario == written.scenario);
  CHECK(r.backend == "simulate");
  CHECK(r.run_seconds == written.run_seconds);
  CHECK(r.simulation_wall_seconds == written.simulation_wall_seconds);
  CHECK(r.simulation_cpu_seconds == written.simulation_cpu_seconds);
  CHECK(r.steps == written.steps);
  CHECK(r.examples == written.examples);
  CHECK(r.weights_sha256 == written.weights_sha256);
  CHECK(r.checkpoint.every_steps == 2);
  CHECK(r.provenance.command == written.provenance.command);
  CHECK(r.provenance.scenario_text == "description: first\n");
  REQUIRE(r.provenance.machines.size() == 1);
  CHECK(r.provenance.machines[0].figures.at(0).second == 4);
  REQUIRE(r.failures.size() == 1);
  CHECK(r.failures[0].lost_steps == 2);
  CHECK(r.failures[0].recovery == "rollback");
  REQUIRE(r.missing_reports.size() == 1);
  CHECK(r.missing_reports[0].task == "ps:0");
  CHECK(r.task_updates == written.task_updates);
  REQUIRE(r.tasks.size() == written.tasks.size());
  for (size_t t = 0; t < r.tasks.size(); ++t) {
    const auto& got = r.tasks[t];
    const auto& want = written.tasks[t];
    CHECK(got.task == want.task);
    CHECK(got.host == want.host);
    CHECK(got.compute_seconds == want.compute_seconds);
    CHECK(got.bytes_sent == want.bytes_sent);
    CHECK(got.checkpoint_bytes == want.checkpoint_bytes);
    CHECK(got.payloads_read_in_place == want.payloads_read_in_place);
    CHECK(got.phases == want.phases);
    CHECK(got.spans.empty());
    REQUIRE(got.steps.size() == want.steps.size());
    for (size_t s = 0; s < got.steps.size(); ++s) {
      CHECK(got.steps[s].step == want.steps[s].step);
      CHECK(got.steps[s].end == want.steps[s].end);  // shortest text reads back exactly
      CHECK(got.steps[s].staleness == want.steps[s].staleness);
      CHECK(same(got.steps[s].loss, want.steps[s].loss));
      CHECK(got.steps[s].phase_cpu == want.steps[s].phase_cpu);
    }
  }
  REQUIRE(r.tasks[0].curve.size() == 2);
  CHECK(std::isnan(r.tasks[0].curve[1].test_loss));
  CHECK(r.tasks[0].curve[1].test_accuracy == 0.75);
}

TEST_CASE("a run directory that distlab did not write is refused, naming the file") {
  TempDir dir;
  distlab::run::write_run_directory(dir.path.string(), earlier_run());
  write(dir.path / "steps.csv", distlab::run::steps_csv_header() + "\nchief:0,one\n");
  CHECK_THROWS_WITH(distlab::run::read_run_directory(dir.path.string()),
                    Catch::Contains("steps.csv: line 2: 2 cells"));
  write(dir.path / "summary.json", "{\"scenario\": 3}");
  CHECK_THROWS_WITH(distlab::run::read_run_directory(dir.path.string()),
                    Catch::Contains("summary.json"));
}

TEST_CASE("joined segments run on one clock: the later one's records after the earlier's") {
  const RunResult earlier = earlier_run();
  const RunResult later = later_run();
  const RunResult whole = distlab::run::join_segments(earlier, later);

  CHECK(whole.run_seconds == earlier.run_seconds + later.run_seconds);
  CHECK(whole.simulation_cpu_seconds ==
        earlier.simulation_cpu_seconds + later.simulation_cpu_seconds);
  CHECK(whole.examples == earlier.examples + later.examples);
  CHECK(whole.steps == 8);
  CHECK(whole.start_step == 0);
  CHECK(whole.resumed_from.empty());
  CHECK(whole.final_loss == 0.25);
  CHECK(whole.weights_sha256 == later.weights_sha256);
  REQUIRE(whole.tasks.size() == 3);
  const auto& chief = whole.tasks[0];
  REQUIRE(chief.steps.size() == 8);
  CHECK(chief.steps[3].step == 3);
  CHECK(chief.steps[4].step == 4);
  CHECK(chief.steps[4].start == earlier.run_seconds + later.tasks[0].steps[0].start);
  CHECK(chief.compute_seconds == earlier.tasks[0].compute_seconds + later.tasks[0].compute_seconds);
  CHECK(chief.payloads_read_in_place == 10);
  REQUIRE(chief.curve.size() == 4);
  CHECK(chief.curve[2].seconds == earlier.run_seconds + later.tasks[0].curve[0].seconds);
  CHECK(whole.task_updates[2] == 12);
  REQUIRE(whole.failures.size() == 2);
  CHECK(whole.failures[1].at == earlier.run_seconds + 0.5);
  REQUIRE(whole.segments.size() == 2);
  CHECK(whole.segments[0].command == earlier.provenance.command);
  CHECK(whole.segments[0].steps == 4);
  CHECK(whole.segments[1].started_at == earlier.run_seconds);
  CHECK(whole.segments[1].start_step == 4);
  CHECK(whole.segments[1].version == "def456");
}

TEST_CASE("a run continued in place keeps every record and each segment's own summary") {
  TempDir dir;
  const std::string path = dir.path.string();
  distlab::run::write_run_directory(path, earlier_run());
  const std::string first_summary = read(dir.path / "summary.json");

  distlab::run::continue_run_directory(path, later_run(), 1);
  CHECK(read(dir.path / "segments" / "1" / "summary.json") == first_summary);
  CHECK(read(dir.path / "segments" / "1" / "scenario.yaml") == "description: first\n");
  CHECK(read(dir.path / "scenario.yaml") == "description: second\n");
  const json own = json::parse(read(dir.path / "segments" / "2" / "summary.json"));
  CHECK(own["start_step"] == 4);
  CHECK(own["run_seconds"] == 4.0);
  const json summary = json::parse(read(dir.path / "summary.json"));
  CHECK(summary["run_seconds"] == 8.0);
  CHECK(summary["steps"] == 8);
  CHECK(summary["segments"].size() == 2);
  // 4 + 4 + 6 rows a segment, and the header.
  CHECK(lines(dir.path / "steps.csv") == 1 + 2 * 14);
  CHECK(lines(dir.path / "curve.csv") == 1 + 4);
  const json timeline = json::parse(read(dir.path / "timeline.json"));
  int spans = 0, marks = 0;
  for (const json& event : timeline["traceEvents"]) {
    if (event["ph"] == "X") ++spans;
    if (event["ph"] == "i") {
      ++marks;
      CHECK(event["name"] == "segment 2: resumed at step 4");
      CHECK(event["ts"] == 4e6);
    }
  }
  CHECK(spans == 2 * 9);
  CHECK(marks == 1);

  // A third segment: the first two keep their summaries.
  const std::string second_own = read(dir.path / "segments" / "2" / "summary.json");
  RunResult third = later_run();
  for (auto& task : third.tasks) {
    for (auto& step : task.steps) step.step += 4;
  }
  distlab::run::continue_run_directory(path, third, 2);
  CHECK(read(dir.path / "segments" / "1" / "summary.json") == first_summary);
  CHECK(read(dir.path / "segments" / "2" / "summary.json") == second_own);
  CHECK(fs::exists(dir.path / "segments" / "3" / "summary.json"));
  const json whole = json::parse(read(dir.path / "summary.json"));
  CHECK(whole["segments"].size() == 3);
  CHECK(whole["segments"][2]["started_at"] == 8.0);
  CHECK(whole["examples"] == 3 * 1024);
  CHECK(lines(dir.path / "steps.csv") == 1 + 3 * 14);
}

TEST_CASE("an --out is claimed new or empty, anything else refused and left as it was") {
  TempDir dir;
  const fs::path fresh = dir.path / "runs" / "a";
  auto claimed = distlab::run::claim_out_directory(fresh.string(), "", "simulate");
  CHECK(fs::is_directory(fresh));
  CHECK_FALSE(claimed.continued);
  claimed = distlab::run::claim_out_directory(fresh.string(), "", "simulate");  // empty: fine
  CHECK_FALSE(claimed.continued);

  distlab::run::write_run_directory(fresh.string(), earlier_run());
  const std::string summary = read(fresh / "summary.json");
  CHECK_THROWS_AS(distlab::run::claim_out_directory(fresh.string(), "", "simulate"), InputError);
  CHECK_THROWS_WITH(distlab::run::claim_out_directory(fresh.string(), "", "simulate"),
                    Catch::Contains("never overwritten") && Catch::Contains("--resume"));
  // Resuming another run does not make this one writable.
  const fs::path other = dir.path / "other";
  fs::create_directories(other / "checkpoints");
  CHECK_THROWS_AS(distlab::run::claim_out_directory(fresh.string(), other.string(), "simulate"),
                  InputError);
  CHECK(read(fresh / "summary.json") == summary);

  write(dir.path / "file", "x");
  CHECK_THROWS_WITH(distlab::run::claim_out_directory((dir.path / "file").string(), "", "train"),
                    Catch::Contains("not a folder"));
}

TEST_CASE("the run being resumed is continued in place, its task folder set aside") {
  TempDir dir;
  const fs::path run = dir.path / "a";
  distlab::run::write_run_directory(run.string(), earlier_run());
  write(run / "checkpoints" / "step-000000004.safetensors", "weights");
  write(run / "tasks" / "chief-0.json", "{}");

  SECTION("named by its folder") {
    const auto claimed = distlab::run::claim_out_directory(run.string(), run.string(), "simulate");
    CHECK(claimed.continued);
    CHECK(claimed.earlier_segments == 1);
    CHECK(fs::exists(run / "segments" / "1" / "tasks" / "chief-0.json"));
    CHECK_FALSE(fs::exists(run / "tasks"));
  }
  SECTION("named by a checkpoint in it") {
    const auto claimed = distlab::run::claim_out_directory(
        run.string() + "/", (run / "checkpoints" / "step-000000004.safetensors").string(),
        "simulate");
    CHECK(claimed.continued);
  }
  SECTION("by another backend, or with other columns: refused") {
    CHECK_THROWS_WITH(distlab::run::claim_out_directory(run.string(), run.string(), "realnet"),
                      Catch::Contains("ran on simulate"));
    write(run / "steps.csv", "task,step\n");
    CHECK_THROWS_WITH(distlab::run::claim_out_directory(run.string(), run.string(), "simulate"),
                      Catch::Contains("other columns"));
  }
}

TEST_CASE("a damaged earlier record is refused before the run, and after it nothing is lost") {
  TempDir dir;
  const fs::path run = dir.path / "a";
  distlab::run::write_run_directory(run.string(), earlier_run());
  write(run / "curve.csv", "seconds,step\n1,x\n");
  CHECK_THROWS_WITH(distlab::run::claim_out_directory(run.string(), run.string(), "simulate"),
                    Catch::Contains("cannot continue") && Catch::Contains("curve.csv"));
  // Damaged while the run ran: its records go whole to segments/2/.
  CHECK_THROWS_WITH(distlab::run::continue_run_directory(run.string(), later_run(), 1),
                    Catch::Contains("segments/2"));
  CHECK(json::parse(read(run / "segments" / "2" / "summary.json"))["steps"] == 8);
  CHECK(lines(run / "segments" / "2" / "steps.csv") == 1 + 14);
}

TEST_CASE("a chief its platform restarts goes on in the unfinished run it began, no other") {
  using distlab::run::Restarts;
  TempDir dir;
  const fs::path run = dir.path / "a";
  write(run / "checkpoints" / "step-000000004.safetensors", "weights");
  write(run / "tasks" / "chief-0" / "steps-0.csv", "task,step\n");
  const auto claimed =
      distlab::run::claim_out_directory(run.string(), "", "realnet", Restarts::kPlatform);
  CHECK_FALSE(claimed.continued);
  CHECK(fs::exists(run / "tasks" / "chief-0" / "steps-0.csv"));  // where its new life adds
  // Not as a command started by hand, and not over a finished run.
  CHECK_THROWS_AS(distlab::run::claim_out_directory(run.string(), "", "realnet"), InputError);
  write(run / "summary.json", "{}");
  CHECK_THROWS_AS(
      distlab::run::claim_out_directory(run.string(), "", "realnet", Restarts::kPlatform),
      InputError);
}

TEST_CASE("a resumed run that never finished has no segment to continue") {
  TempDir dir;
  const fs::path run = dir.path / "a";
  write(run / "checkpoints" / "step-000000004.safetensors", "weights");
  write(run / "tasks" / "worker-0.json", "{}");
  const auto claimed = distlab::run::claim_out_directory(run.string(), run.string(), "realnet");
  CHECK(claimed.continued);
  CHECK(claimed.earlier_segments == 0);
  CHECK(fs::exists(run / "segments" / "unfinished-1" / "tasks" / "worker-0.json"));
}

TEST_CASE("a --resume path names its run directory: the folder, checkpoints/ or a checkpoint") {
  using distlab::run::resumed_run_directory;
  TempDir dir;
  write(dir.path / "a" / "checkpoints" / "step-1.safetensors", "x");
  const std::string a = (dir.path / "a").string();
  CHECK(resumed_run_directory(a) == a);
  CHECK(resumed_run_directory(a + "/") == a);
  CHECK(resumed_run_directory(a + "/checkpoints") == a);
  CHECK(resumed_run_directory(a + "/checkpoints/step-1.safetensors") == a);
}

TEST_CASE("a default run directory taken in the same second gets a number") {
  TempDir dir;
  const std::string base = (dir.path / "runs" / "s-20261128-101500").string();
  CHECK(distlab::run::unused_directory(base) == base);
  fs::create_directories(base);
  CHECK(distlab::run::unused_directory(base) == base + "-2");
  fs::create_directories(base + "-2");
  CHECK(distlab::run::unused_directory(base) == base + "-3");
}
