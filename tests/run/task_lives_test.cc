// A real task's lives, kept as they go: each life's file reads back as the
// steps it finished (a killed life's last line, without its newline, as the
// step it was in), its rows are steps.csv's, and the earlier lives' records
// join the last life's log and measure what each failure cost.
#include "run/task_lives.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "run/run_files.h"
#include "tests/run/sample_run.h"
#include "tests/support/temp_files.h"

using namespace distlab;
using namespace distlab::run;
using strategy::index_of;
using strategy::Phase;
using strategy::Role;
using strategy::StepRecord;
using strategy::TaskId;

namespace {

using distlab::test::read;
using distlab::test::TempDir;
using distlab::test::write;

namespace fs = std::filesystem;

StepRecord step(int64_t n, double start, double end) {
  StepRecord s{.step = n,
               .start = start,
               .end = end,
               .compute_seconds = 0.5 * (end - start),
               .communication_seconds = 0.25 * (end - start),
               .waiting_seconds = 0.125,
               .checkpoint_seconds = 0.0625,
               .input_seconds = 0.03125,
               .bytes_sent = 1000 + static_cast<uint64_t>(n),
               .bytes_received = 2000,
               .staleness = -1,
               .loss = 0.1 * static_cast<double>(n + 1)};
  s.phases[index_of(Phase::kForward)] = 0.25;
  s.phases[index_of(Phase::kOther)] = 1.0 / 3.0;
  s.phase_cpu[index_of(Phase::kBackward)] = 0.75;
  return s;
}

// A life file's text, as a recorder writes it, with these steps finished
// (`examples` each) and perhaps one begun.
std::string life_text(TaskId task, const std::vector<StepRecord>& steps, int64_t examples,
                      std::optional<int64_t> begun = std::nullopt) {
  std::string text = life_file_header() + "\n";
  for (const StepRecord& s : steps) {
    text += life_row_begun(task, s.step) + life_row_ended(s, examples);
  }
  if (begun) text += life_row_begun(task, *begun);
  return text;
}

LifeRecords life(std::vector<int64_t> steps, std::optional<int64_t> unfinished = std::nullopt,
                 double first_start = 1.0) {
  LifeRecords records;
  double at = first_start;
  for (const int64_t n : steps) {
    records.steps.push_back(step(n, at, at + 0.5));
    at += 0.5;
  }
  records.examples = 128 * static_cast<int64_t>(steps.size());
  records.unfinished = unfinished;
  return records;
}

}  // namespace

TEST_CASE("A life file's rows are steps.csv's rows, then the examples") {
  TempDir tmp;
  RunResult result = test::three_tasks();
  const strategy::TaskLog& worker = result.tasks[1];
  write_run_directory(tmp.path.string(), result);
  std::istringstream steps_csv(read(tmp.path / "steps.csv"));
  std::string header, line;
  std::getline(steps_csv, header);
  CHECK(life_file_header() == header + ",examples");
  // The worker's rows follow the chief's.
  std::size_t row = 0;
  while (std::getline(steps_csv, line) && line.rfind("worker:0,", 0) != 0) ++row;
  REQUIRE(row == result.tasks[0].steps.size());
  for (const StepRecord& s : worker.steps) {
    CHECK(life_row_begun(worker.task, s.step) + life_row_ended(s, 43) == line + ",43\n");
    std::getline(steps_csv, line);
  }
}

TEST_CASE("A recorder's file reads back as the steps it finished, the step in flight apart") {
  TempDir tmp;
  const TaskId task{Role::kWorker, 2};
  const std::string folder = task_folder(tmp.path.string(), task);
  CHECK(folder == (tmp.path / "tasks" / "worker-2").string());
  const std::string path = life_file(folder, 3);
  CHECK(path == (tmp.path / "tasks" / "worker-2" / "steps-3.csv").string());
  StepRecord ps_update = step(7, 2.0, 2.25);
  ps_update.staleness = 4;
  ps_update.loss = std::nan("");  // a server's update has no loss
  {
    LifeRecorder recorder(path, task);
    recorder.began(6);
    recorder.ended(step(6, 1.0, 1.5), 128);
    recorder.began(7);
    recorder.ended(ps_update, 0);
    recorder.began(8);
    // Killed here: every part written so far is in the file already.
    const LifeRecords records = parse_life_records(read(path), path);
    REQUIRE(records.steps.size() == 2);
    CHECK(records.unfinished == 8);
  }
  const LifeRecords records = parse_life_records(read(path), path);
  REQUIRE(records.steps.size() == 2);
  CHECK(records.examples == 128);
  CHECK(records.unfinished == 8);
  const StepRecord& a = records.steps[0];
  CHECK(a.step == 6);
  CHECK(a.staleness == -1);
  // 1/3 too: the shortest text that reads back the same double.
  distlab::test::check_same_step(a, step(6, 1.0, 1.5));
  const StepRecord& b = records.steps[1];
  CHECK(b.staleness == 4);
  CHECK(std::isnan(b.loss));

  // A new recorder of the same life starts the file again.
  { LifeRecorder again(path, task); }
  const LifeRecords empty = parse_life_records(read(path), path);
  CHECK(empty.steps.empty());
  CHECK_FALSE(empty.unfinished);
}

TEST_CASE("A killed life's file: a last line without its newline is no row") {
  const TaskId task{Role::kChief, 0};
  const std::string whole = life_text(task, {step(0, 0, 1), step(1, 1, 2)}, 100);
  SECTION("ended between steps") {
    const LifeRecords r = parse_life_records(whole, "f");
    CHECK(r.steps.size() == 2);
    CHECK(r.examples == 200);
    CHECK_FALSE(r.unfinished);
  }
  SECTION("in a step") {
    const LifeRecords r = parse_life_records(whole + "chief:0,2,", "f");
    CHECK(r.steps.size() == 2);
    CHECK(r.unfinished == 2);
  }
  SECTION("as it wrote a step's end") {
    const std::string cut =
        whole + life_row_begun(task, 2) + life_row_ended(step(2, 2, 3), 100).substr(0, 20);
    const LifeRecords r = parse_life_records(cut, "f");
    CHECK(r.steps.size() == 2);
    CHECK(r.examples == 200);
    CHECK(r.unfinished == 2);
  }
  SECTION("before it wrote anything, or all of its header") {
    CHECK(parse_life_records("", "f").steps.empty());
    const LifeRecords r = parse_life_records(life_file_header().substr(0, 30), "f");
    CHECK(r.steps.empty());
    CHECK_FALSE(r.unfinished);
  }
}

TEST_CASE("A life file written otherwise is refused, naming it and the line") {
  const TaskId task{Role::kWorker, 0};
  CHECK_THROWS_WITH(
      parse_life_records("task,step\n", "tasks/worker-0/steps-0.csv"),
      Catch::Contains("tasks/worker-0/steps-0.csv") && Catch::Contains("not a task's life file"));
  std::string row = life_row_begun(task, 0) + life_row_ended(step(0, 0, 1), 64);
  const std::string bad_step = life_file_header() + "\n" + "worker:0,x" + row.substr(10);
  CHECK_THROWS_AS(parse_life_records(bad_step, "f"), DataError);
  CHECK_THROWS_WITH(parse_life_records(bad_step, "f"),
                    Catch::Contains("line 2") && Catch::Contains("'x'"));
  const std::string short_row = life_file_header() + "\nworker:0,0,1,2\n";
  CHECK_THROWS_WITH(parse_life_records(short_row, "f"), Catch::Contains("line 2: 4 cells"));
}

TEST_CASE("A task folder's lives are read by their number, other files left alone") {
  TempDir tmp;
  const TaskId task{Role::kPs, 0};
  const std::string folder = task_folder(tmp.path.string(), task);
  CHECK(read_lives(folder).empty());  // no folder: no lives
  write(life_file(folder, 0), life_text(task, {step(0, 0, 1), step(1, 1, 2)}, 0, 2));
  write(life_file(folder, 1), "");  // killed before it wrote its header
  write(life_file(folder, 12), life_text(task, {step(0, 5, 6)}, 0));
  write(fs::path(folder) / "steps-x.csv", "not a life");
  write(fs::path(folder) / "notes.txt", "not a life");
  const auto lives = read_lives(folder);
  REQUIRE(lives.size() == 3);
  CHECK(lives.at(0).steps.size() == 2);
  CHECK(lives.at(0).unfinished == 2);
  CHECK(lives.at(1).steps.empty());
  CHECK(lives.at(12).steps.size() == 1);
}

TEST_CASE("The earlier lives join the last one's log: steps before its own, totals added") {
  strategy::TaskLog last = test::task(Role::kWorker, 0, 1, "h", 2, false, 0.5);
  last.steps[0].step = 5;  // a rejoined life goes on from step 5
  last.steps[1].step = 6;
  last.examples = 256;
  const strategy::TaskLog before = last;
  const LifeRecords first = life({0, 1, 2, 3}, 4);
  const LifeRecords second = life({3, 4});  // it went back to 3: a rollback
  add_earlier_lives(last, {first, second});
  std::vector<int64_t> steps;
  for (const StepRecord& s : last.steps) steps.push_back(s.step);
  CHECK(steps == std::vector<int64_t>{0, 1, 2, 3, 3, 4, 5, 6});
  CHECK(last.examples == 256 + 128 * 6);
  CHECK(last.compute_seconds == Approx(before.compute_seconds + 6 * 0.25));
  CHECK(last.waiting_seconds == Approx(before.waiting_seconds + 6 * 0.125));
  CHECK(last.checkpoint_seconds == Approx(before.checkpoint_seconds + 6 * 0.0625));
  CHECK(last.input_seconds == Approx(before.input_seconds + 6 * 0.03125));
  CHECK(last.bytes_sent == before.bytes_sent + 6 * 1000 + (0 + 1 + 2 + 3 + 3 + 4));
  CHECK(last.bytes_received == before.bytes_received + 6 * 2000);
  CHECK(last.phases[index_of(Phase::kForward)] ==
        Approx(before.phases[index_of(Phase::kForward)] + 6 * 0.25));
  CHECK(last.phase_cpu[index_of(Phase::kBackward)] ==
        Approx(before.phase_cpu[index_of(Phase::kBackward)] + 6 * 0.75));
  CHECK(last.finished_at == before.finished_at);
  CHECK(last.messages_sent == before.messages_sent);  // not in the rows: not known
}

TEST_CASE("What a failure cost, from the records") {
  SECTION("a rollback: the chief's steps recorded at or past the restored step") {
    CHECK(rollback_lost_steps(life({0, 1, 2, 3, 4, 5, 6}, 7), 5) == 2);
    CHECK(rollback_lost_steps(life({0, 1, 2}), 0) == 3);
    CHECK(rollback_lost_steps(life({10, 11}), 12) == 0);
  }
  SECTION("a rejoin: what the dead life began from where the next went on") {
    // Killed in step 4; the next life went on from 4: step 4 is done again.
    const LifeRecords next_from_4 = life({4, 5});
    CHECK(rejoin_lost_steps(life({0, 1, 2, 3}, 4), &next_from_4) == 1);
    // Step 3's push never arrived: the next life went back to 3.
    const LifeRecords next_from_3 = life({3, 4});
    CHECK(rejoin_lost_steps(life({0, 1, 2, 3}, 4), &next_from_3) == 2);
    // Killed between steps, or as it began one (a fault at_step): nothing.
    CHECK(rejoin_lost_steps(life({0, 1, 2, 3}), &next_from_4) == 0);
    // Its push of step 4 arrived before it died: the next went on from 5.
    const LifeRecords next_from_5 = life({5});
    CHECK(rejoin_lost_steps(life({0, 1, 2, 3}, 4), &next_from_5) == 0);
    // The next life took no step: the one in flight is lost.
    CHECK(rejoin_lost_steps(life({0, 1}, 2), nullptr) == 1);
    const LifeRecords none = life({});
    CHECK(rejoin_lost_steps(life({0, 1}), &none) == 0);
  }
  SECTION("the first step of the new lives") {
    const LifeRecords a = life({0}, std::nullopt, 7.5), b = life({0}, std::nullopt, 6.25);
    const LifeRecords empty = life({});
    CHECK(first_step_start({&a, nullptr, &b, &empty}) == 6.25);
    CHECK_FALSE(first_step_start({nullptr, &empty}));
  }
}

TEST_CASE("A run's failures are measured from the lives their recoveries ended and began") {
  // chief:0, worker:0, ps:0 of an asynchronous parameter-server run.
  const strategy::ClusterSpec cluster{.chiefs = 1, .workers = 1, .ps = 1};
  std::vector<std::map<uint32_t, LifeRecords>> lives(3);
  // worker:0 died in step 4 at 3.0 s and rejoined from step 4 (life 1,
  // first step at 5.25 s); then ps:0 died at 9.0 s and the run went back
  // to step 2: every task's life 2 (the worker's) or 1 began again, the
  // first step at 11.5 s.
  lives[0][0] = life({0, 1, 2, 3, 4, 5, 6}, std::nullopt, 0.5);
  lives[0][1] = life({2, 3}, std::nullopt, 11.75);
  lives[1][0] = life({0, 1, 2, 3}, 4, 0.5);
  lives[1][1] = life({4, 5}, std::nullopt, 5.25);
  lives[1][2] = life({2, 3}, std::nullopt, 11.5);
  lives[2][0] = life({0, 1, 2}, std::nullopt, 0.5);
  lives[2][1] = life({0}, std::nullopt, 12.0);
  std::vector<Failure> failures = {{.at = 3.0,
                                    .task = "worker:0",
                                    .cause = "signal 9",
                                    .recovery = "rejoin",
                                    .restored_step = -1,
                                    .lost_steps = 1,
                                    .recovery_seconds = 0.75},
                                   {.at = 9.0,
                                    .task = "ps:0",
                                    .cause = "at_step 3",
                                    .recovery = "rollback",
                                    .restored_step = 2,
                                    .lost_steps = 99,
                                    .recovery_seconds = 0.25}};
  measure_failures(failures, {{0, 0, 0}, {0, 1, 0}}, lives, cluster);
  CHECK(failures[0].lost_steps == 1);
  CHECK(failures[0].recovery_seconds == Approx(2.25));
  CHECK(failures[1].lost_steps == 5);  // the chief's steps 2 ... 6
  CHECK(failures[1].recovery_seconds == Approx(2.5));

  SECTION("a life without a file began nothing; without a new life's step, the recovery stays") {
    std::vector<Failure> unknown = failures;
    unknown[0].lost_steps = 1;
    unknown[0].recovery_seconds = 0.75;
    lives[1].erase(0);  // killed before it connected
    lives[1].erase(1);  // likewise
    measure_failures(unknown, {{0, 0, 0}, {0, 1, 0}}, lives, cluster);
    CHECK(unknown[0].lost_steps == 0);
    CHECK(unknown[0].recovery_seconds == 0.75);
    CHECK(unknown[1].lost_steps == 5);
  }
  SECTION("lives that are not one per failure and task are refused") {
    CHECK_THROWS_AS(measure_failures(failures, {{0, 0, 0}}, lives, cluster), Error);
    CHECK_THROWS_AS(measure_failures(failures, {{0, 0, 0}, {0, 1}}, lives, cluster), Error);
  }
}

TEST_CASE("A life whose file exists already records as the next life: none is written over") {
  TempDir dir;
  const std::string folder = task_folder(dir.path.string(), TaskId{Role::kChief, 0});
  CHECK(unused_life(folder, 0) == 0);
  CHECK(unused_life(folder, 2) == 2);
  std::filesystem::create_directories(folder);
  std::ofstream(life_file(folder, 0)) << life_file_header() << "\n";
  std::ofstream(life_file(folder, 1)) << life_file_header() << "\n";
  CHECK(unused_life(folder, 0) == 2);  // restarted with the same command line
  CHECK(unused_life(folder, 3) == 3);
}
