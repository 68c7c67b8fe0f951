#include "run/run_files.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/csv_table.h"
#include "common/error.h"
#include "run/steps_csv.h"
#include "tests/run/sample_run.h"
#include "tests/support/temp_files.h"

namespace {

using distlab::test::read;
using distlab::test::TempDir;
using distlab::test::write;

using distlab::run::RunResult;
using distlab::strategy::index_of;
using distlab::strategy::Phase;
using distlab::strategy::Role;
using distlab::strategy::Span;
using distlab::strategy::SpanKind;
using distlab::strategy::StepRecord;
using distlab::strategy::TaskLog;
using distlab::test::task;
using distlab::test::three_tasks;
using nlohmann::json;

const double kNaN = std::nan("");

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator)) parts.push_back(part);
  if (!text.empty() && text.back() == separator && separator == ',') parts.push_back("");
  return parts;
}

json read_json(const std::filesystem::path& path) {
  return json::parse(read(path));
}

}  // namespace

TEST_CASE("summary.json holds every field and the totals over tasks") {
  TempDir tmp;
  const auto dir = tmp.path / "runs" / "nested" / "run";  // parents are created
  const RunResult r = three_tasks();
  distlab::run::write_run_directory(dir.string(), r);
  const json s = read_json(dir / "summary.json");

  for (const char* key : {"scenario",
                          "description",
                          "strategy",
                          "backend",
                          "fidelity",
                          "seed",
                          "simulated_seconds",
                          "run_seconds",
                          "wall_seconds",
                          "simulation_speed",
                          "replicas",
                          "steps",
                          "examples",
                          "examples_per_second",
                          "compute_seconds",
                          "communication_seconds",
                          "waiting_seconds",
                          "checkpoint_seconds",
                          "communication_fraction",
                          "bytes_sent",
                          "bytes_received",
                          "final_loss",
                          "final_accuracy",
                          "weights_sha256",
                          "timeline_spans_dropped",
                          "tasks"}) {
    INFO(key);
    CHECK(s.contains(key));
  }
  CHECK(s["scenario"] == "cnn_ps_async");
  CHECK(s["seed"] == 7);
  CHECK(s["simulated_seconds"].get<double>() == 4.0);
  // 4 simulated seconds in 0.25 s of simulation (0.5 s wall with loading).
  CHECK(s["simulation_speed"].get<double>() == Approx(16.0));
  CHECK(s["simulation_wall_seconds"].get<double>() == 0.25);
  CHECK(s["simulation_cpu_seconds"].get<double>() == 0.2);
  CHECK(s["model_bytes"] == 372000);
  CHECK(s["examples_per_second"].get<double>() == Approx(256.0));
  CHECK(s["timeline_spans_dropped"] == 3);

  double compute = 0, communication = 0, waiting = 0, checkpoint = 0;
  uint64_t sent = 0, received = 0;
  for (const TaskLog& t : r.tasks) {
    compute += t.compute_seconds;
    communication += t.communication_seconds;
    waiting += t.waiting_seconds;
    checkpoint += t.checkpoint_seconds;
    sent += t.bytes_sent;
    received += t.bytes_received;
  }
  CHECK(s["compute_seconds"].get<double>() == Approx(compute));  // 1.5 + 2.5 + 3.5
  CHECK(s["communication_seconds"].get<double>() == Approx(communication));
  CHECK(s["waiting_seconds"].get<double>() == Approx(waiting));
  CHECK(s["checkpoint_seconds"].get<double>() == Approx(checkpoint));
  CHECK(s["bytes_sent"].get<uint64_t>() == sent);
  CHECK(s["bytes_sent"].get<uint64_t>() == 6000000);  // 1 + 2 + 3 MB
  CHECK(s["bytes_received"].get<uint64_t>() == received);
  CHECK(s["communication_fraction"].get<double>() ==
        Approx((communication + waiting) / (compute + communication + waiting)));
  CHECK(s["final_loss"].get<double>() == Approx(0.4321));
  CHECK(s["weights_sha256"] == std::string(64, 'a'));

  const json& tasks = s["tasks"];
  REQUIRE(tasks.is_array());
  REQUIRE(tasks.size() == 3);
  CHECK(tasks[0]["task"] == "chief:0");
  CHECK(tasks[1]["task"] == "worker:0");
  CHECK(tasks[2]["task"] == "ps:0");
  CHECK(tasks[2]["role"] == "ps");
  CHECK(tasks[1]["host"] == "gpu-1");
  for (const json& t : tasks) {
    for (const char* key :
         {"task", "role", "index", "host", "steps", "compute_seconds", "communication_seconds",
          "waiting_seconds", "checkpoint_seconds", "communication_fraction", "bytes_sent",
          "bytes_received", "messages_sent", "messages_received", "payloads_read_in_place",
          "finished_at"}) {
      INFO(t["task"].get<std::string>() << ": " << key);
      CHECK(t.contains(key));
    }
  }
  CHECK(tasks[2]["steps"] == 6);
  CHECK(tasks[2]["updates"] == 6);
  CHECK(tasks[0]["updates"] == 0);
  // Worker 0: compute 2.5, communication 0.25, waiting 0.5.
  CHECK(tasks[1]["communication_fraction"].get<double>() == Approx(0.75 / 3.25));
  // Staleness only where a task has it: 0,1,2,0,1,2 for the PS.
  CHECK_FALSE(tasks[0].contains("mean_staleness"));
  CHECK_FALSE(tasks[0].contains("max_staleness"));
  CHECK(tasks[2]["mean_staleness"].get<double>() == Approx(1.0));
  CHECK(tasks[2]["max_staleness"] == 2);

  // Nothing left behind but the four files.
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  CHECK(names ==
        std::vector<std::string>{"curve.csv", "steps.csv", "summary.json", "timeline.json"});
}

TEST_CASE(
    "summary.json writes null for NaN and an empty hash, and no simulation fields on realnet") {
  TempDir tmp;
  RunResult r = three_tasks("timing");
  r.backend = "realnet";
  r.wall_seconds = 0;  // examples/s still defined, no division by zero anywhere
  distlab::run::write_run_directory(tmp.path.string(), r);
  const std::string text = read(tmp.path / "summary.json");
  CHECK(text.find("NaN") == std::string::npos);
  CHECK(text.find("nan") == std::string::npos);
  CHECK(text.find("inf") == std::string::npos);
  const json s = json::parse(text);
  CHECK(s["final_loss"].is_null());
  CHECK(s["final_accuracy"].is_null());
  CHECK(s["weights_sha256"].is_null());
  CHECK_FALSE(s.contains("simulated_seconds"));
  CHECK_FALSE(s.contains("simulation_speed"));
  CHECK_FALSE(s.contains("simulation_wall_seconds"));
  CHECK_FALSE(s.contains("simulation_cpu_seconds"));
  CHECK(s["run_seconds"].get<double>() == 4.0);
  CHECK(s["backend"] == "realnet");
}

TEST_CASE("summary.json names the kernels' ISA level of the run and of each task, or a mix") {
  TempDir tmp;
  RunResult r = three_tasks();
  for (TaskLog& t : r.tasks) t.isa = "x86-64-v4";
  distlab::run::write_run_directory((tmp.path / "same").string(), r);
  const json same = read_json(tmp.path / "same" / "summary.json");
  CHECK(same["isa"] == "x86-64-v4");
  for (const json& t : same["tasks"]) CHECK(t["isa"] == "x86-64-v4");

  r.tasks.back().isa = "x86-64";
  distlab::run::write_run_directory((tmp.path / "mixed").string(), r);
  const json mixed = read_json(tmp.path / "mixed" / "summary.json");
  CHECK(mixed["isa"] == "mixed: x86-64-v4, x86-64");
  CHECK(mixed["tasks"].back()["isa"] == "x86-64");
}

TEST_CASE("steps.csv has one row per task per step, empty staleness and loss where unknown") {
  TempDir tmp;
  distlab::run::write_run_directory(tmp.path.string(), three_tasks());
  const auto lines = split(read(tmp.path / "steps.csv"), '\n');
  REQUIRE(lines.size() == 1 + 4 + 4 + 6);
  CHECK(lines[0] ==
        "task,step,start,end,compute_seconds,communication_seconds,waiting_seconds,"
        "checkpoint_seconds,bytes_sent,bytes_received,staleness,loss,input_seconds,"
        "phase_input_seconds,phase_forward_seconds,phase_backward_seconds,"
        "phase_optimizer_seconds,phase_packing_seconds,phase_communication_seconds,"
        "phase_waiting_seconds,phase_evaluation_seconds,phase_checkpoint_seconds,"
        "phase_other_seconds,phase_input_cpu_seconds,phase_forward_cpu_seconds,"
        "phase_backward_cpu_seconds,phase_optimizer_cpu_seconds,phase_packing_cpu_seconds,"
        "phase_communication_cpu_seconds,phase_waiting_cpu_seconds,"
        "phase_evaluation_cpu_seconds,phase_checkpoint_cpu_seconds,phase_other_cpu_seconds");
  for (size_t i = 1; i < lines.size(); ++i) {
    INFO(lines[i]);
    CHECK(split(lines[i], ',').size() == 33);
  }

  // Chief, step 1: starts at 0.25, lasts 0.000123456789 (simulated precision).
  const auto chief = split(lines[2], ',');
  CHECK(chief[0] == "chief:0");
  CHECK(chief[1] == "1");
  CHECK(std::stod(chief[2]) == 0.25);
  CHECK(std::stod(chief[3]) - std::stod(chief[2]) == Approx(0.000123456789).epsilon(1e-6));
  CHECK(chief[8] == "2000");  // bytes_sent
  CHECK(chief[10].empty());   // no staleness on a worker
  CHECK(std::stod(chief[11]) == 0.5);
  CHECK(chief[13] == "0");      // phase_input_seconds
  CHECK(chief[14] == "0.25");   // phase_forward_seconds
  CHECK(chief[22] == "0.125");  // phase_other_seconds
  CHECK(chief[23] == "0");      // phase_input_cpu_seconds
  CHECK(chief[24] == "0.5");    // phase_forward_cpu_seconds
  CHECK(chief[32] == "0");      // phase_other_cpu_seconds
  // summary.json: every task's seconds by phase, over the whole run.
  const json summary = read_json(tmp.path / "summary.json");
  CHECK(summary["tasks"][0]["phase_seconds"].size() == 10);
  CHECK(summary["tasks"][0]["phase_seconds"]["forward"] == 0);
  CHECK(summary["tasks"][0]["phase_cpu_seconds"].size() == 10);

  CHECK(split(lines[5], ',')[0] == "worker:0");
  const auto ps = split(lines[1 + 8 + 2], ',');  // the PS's step 2
  CHECK(ps[0] == "ps:0");
  CHECK(ps[10] == "2");
  CHECK(ps[11].empty());  // NaN loss
}

TEST_CASE("a step's cells read back as the same step, with steps.csv's columns by name") {
  distlab::strategy::StepRecord s{.step = 7,
                                  .start = 0.125,
                                  .end = 0.1875,
                                  .compute_seconds = 1.0 / 3,
                                  .communication_seconds = 2e-7,
                                  .waiting_seconds = 0,
                                  .checkpoint_seconds = 0.5,
                                  .input_seconds = 0.001,
                                  .bytes_sent = 123456789012,
                                  .bytes_received = 42,
                                  .staleness = -1,
                                  .loss = std::numeric_limits<double>::quiet_NaN()};
  for (int p = 0; p < distlab::strategy::kPhases; ++p) {
    s.phases[p] = 0.01 * p;
    s.phase_cpu[p] = 0.003 * p + 1e-9;
  }
  const std::string text =
      distlab::run::steps_csv_header() + "\nchief:0,7," + distlab::run::step_cells(s) + "\n";
  const distlab::CsvTable table(text, "steps.csv");
  const distlab::strategy::StepRecord back = distlab::run::read_step(table, 0);
  // 1/3 too: the shortest text that reads back the same double.
  distlab::test::check_same_step(back, s);
  CHECK(back.staleness == -1);
  CHECK(std::isnan(back.loss));
}

TEST_CASE("curve.csv holds the chief's evaluations") {
  TempDir tmp;
  distlab::run::write_run_directory(tmp.path.string(), three_tasks());
  const auto lines = split(read(tmp.path / "curve.csv"), '\n');
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "seconds,step,train_loss,test_loss,test_accuracy");
  CHECK(lines[1] == "1,2,0.9,0.8,0.7");
  CHECK(lines[2] == "2,4,0.6,,0.75");
}

TEST_CASE("timeline.json is a Chrome trace: a named thread per task, spans in microseconds") {
  TempDir tmp;
  distlab::run::write_run_directory(tmp.path.string(), three_tasks());
  const json t = read_json(tmp.path / "timeline.json");
  CHECK(t["displayTimeUnit"] == "ms");
  const json& events = t["traceEvents"];
  REQUIRE(events.is_array());

  std::map<int, std::string> thread_names;
  int sort_indices = 0;
  std::vector<json> complete;
  for (const json& e : events) {
    CHECK(e["pid"] == 1);
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      thread_names[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
    }
    if (e["ph"] == "M" && e["name"] == "thread_sort_index") ++sort_indices;
    if (e["ph"] == "X") complete.push_back(e);
  }
  CHECK(thread_names == std::map<int, std::string>{
                            {1, "chief:0 @ gpu-0"}, {2, "worker:0 @ gpu-1"}, {3, "ps:0 @ cpu-0"}});
  CHECK(sort_indices == 3);
  REQUIRE(complete.size() == 9);
  // The second span of the worker: receive from 1.5 ms to 2.5 ms.
  const json& receive = complete[4];
  CHECK(receive["tid"] == 2);
  CHECK(receive["name"] == "ring reduce-scatter");
  CHECK(receive["cat"] == "receive");
  CHECK(receive["ts"].get<double>() == Approx(1500.0));
  CHECK(receive["dur"].get<double>() == Approx(1000.0));
  // A span without a label is named by its kind.
  CHECK(complete[2]["name"] == "wait");
  CHECK(complete[2]["cat"] == "wait");
}

TEST_CASE("timeline.json gives what a task computed beside its communication a lane below it") {
  TempDir tmp;
  distlab::run::RunResult run = three_tasks();
  // The worker's backward pass, overlapping its first span.
  run.tasks[1].spans.push_back(
      {distlab::strategy::SpanKind::kBackground, 1.0e-3, 3.0e-3, "backward"});
  distlab::run::write_run_directory(tmp.path.string(), run);
  const json t = read_json(tmp.path / "timeline.json");
  std::map<int, std::string> names;
  std::map<int, int> sort_index;
  const json* background = nullptr;
  for (const json& e : t["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") names[e["tid"]] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "thread_sort_index") {
      sort_index[e["tid"]] = e["args"]["sort_index"];
    }
    if (e["ph"] == "X" && e["cat"] == "background") background = &e;
  }
  // Lanes 1-3 are the tasks'; the worker's background lane is 3 + 2.
  CHECK(names[5] == "worker:0 (beside its communication)");
  CHECK(sort_index[5] > sort_index[2]);
  CHECK(sort_index[5] < sort_index[3]);
  REQUIRE(background != nullptr);
  CHECK((*background)["tid"] == 5);
  CHECK((*background)["dur"].get<double>() == Approx(2000.0));
}

TEST_CASE("a timeline larger than the pieces it is written in is whole, every span in order") {
  TempDir tmp;
  distlab::run::RunResult run = three_tasks();
  // About 100 bytes an event: 20,000 spans are 30 of the writer's 64 KB pieces.
  const int extra = 20000;
  for (int i = 0; i < extra; ++i) {
    run.tasks[0].spans.push_back({distlab::strategy::SpanKind::kCompute, 1.0 + i * 1e-3,
                                  1.0 + i * 1e-3 + 5e-4, "span " + std::to_string(i)});
  }
  distlab::run::write_run_directory(tmp.path.string(), run);
  CHECK(std::filesystem::file_size(tmp.path / "timeline.json") > 20 * 65536);
  const json t = read_json(tmp.path / "timeline.json");
  int seen = 0;
  for (const json& e : t["traceEvents"]) {
    if (e["ph"] != "X" || e["tid"] != 1 || e["ts"].get<double>() < 1e6) continue;
    CHECK(e["name"] == "span " + std::to_string(seen));
    ++seen;
  }
  CHECK(seen == extra);
}

TEST_CASE("the summary table shows the run and every task") {
  const std::string table = distlab::run::format_summary_table(three_tasks());
  INFO(table);
  for (const char* text : {"cnn_ps_async", "parameter_server (async)", "simulate", "chief:0",
                           "worker:0", "ps:0", "gpu-1", "aaaaaaaaaaaaaaaa", "MB sent"}) {
    CHECK(table.find(text) != std::string::npos);
  }
  CHECK(table.find("more tasks") == std::string::npos);
  // Worker 0: 2.0 MB sent, 23.1% of its busy time communicating or waiting.
  CHECK(table.find("23.1%") != std::string::npos);
  CHECK(table.find("2.00") != std::string::npos);

  const std::string timing = distlab::run::format_summary_table(three_tasks("timing"));
  CHECK(timing.find("n/a (timing)") != std::string::npos);
  CHECK(table.find("hidden behind") == std::string::npos);

  // With overlap: the communication it hid, beside what stayed exposed.
  RunResult overlapped = three_tasks();
  overlapped.tasks[1].hidden_communication_seconds = 0.25;
  const std::string hidden = distlab::run::format_summary_table(overlapped);
  INFO(hidden);
  CHECK(hidden.find("hidden behind the backward pass") != std::string::npos);
}

TEST_CASE("the summary table elides the middle of a large cluster") {
  RunResult r = three_tasks();
  r.tasks.clear();
  r.tasks.push_back(task(Role::kChief, 0, 1, "host-0", 1, false, 0.5));
  for (int i = 0; i < 29; ++i)
    r.tasks.push_back(task(Role::kWorker, i, i + 2, "host", 1, false, 0.5));
  const std::string table = distlab::run::format_summary_table(r);
  INFO(table);
  CHECK(table.find("chief:0") != std::string::npos);
  CHECK(table.find("worker:6 ") != std::string::npos);   // 8th task
  CHECK(table.find("worker:7 ") == std::string::npos);   // 9th: elided
  CHECK(table.find("worker:24 ") == std::string::npos);  // 26th: elided
  CHECK(table.find("worker:25 ") != std::string::npos);  // 27th: the last 4
  CHECK(table.find("worker:28 ") != std::string::npos);
  CHECK(table.find("... 18 more tasks") != std::string::npos);
  CHECK(table.find("total") != std::string::npos);
  // Bytes sent by all 30: 1 + 2 + ... + 30 MB.
  CHECK(table.find(" 465.00") != std::string::npos);
}

TEST_CASE("a directory that cannot be created is refused with its path") {
  TempDir tmp;
  const auto file = tmp.path / "a-file";
  std::ofstream(file) << "x";
  const std::string dir = (file / "run").string();
  try {
    distlab::run::write_run_directory(dir, three_tasks());
    FAIL("no error");
  } catch (const distlab::Error& e) {
    const std::string what = e.what();
    CHECK(what.find(dir) != std::string::npos);
    CHECK(what.find("Not a directory") != std::string::npos);
  }
  // The path itself a regular file.
  CHECK_THROWS_AS(distlab::run::write_run_directory(file.string(), three_tasks()), distlab::Error);
}

TEST_CASE("a file that cannot be written is refused with its path") {
  if (geteuid() == 0) {
    // Root writes into read-only directories; a directory in the file's
    // place makes the rename fail instead.
    TempDir tmp;
    std::filesystem::create_directories(tmp.path / "steps.csv" / "x");
    try {
      distlab::run::write_run_directory(tmp.path.string(), three_tasks());
      FAIL("no error");
    } catch (const distlab::Error& e) {
      CHECK(std::string(e.what()).find((tmp.path / "steps.csv").string()) != std::string::npos);
    }
    CHECK_FALSE(std::filesystem::exists(tmp.path / ".steps.csv.tmp"));
    return;
  }
  TempDir tmp;
  std::filesystem::permissions(
      tmp.path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  try {
    distlab::run::write_run_directory(tmp.path.string(), three_tasks());
    FAIL("no error");
  } catch (const distlab::Error& e) {
    CHECK(std::string(e.what()).find((tmp.path / "summary.json").string()) != std::string::npos);
    CHECK(std::string(e.what()).find("Permission denied") != std::string::npos);
  }
  std::filesystem::permissions(tmp.path, std::filesystem::perms::owner_all);
}

TEST_CASE("default_run_directory names the scenario and the UTC time") {
  // 2026-11-26 01:45:10 UTC.
  CHECK(distlab::run::default_run_directory("runs", "cnn_allreduce", 1795657510) ==
        "runs/cnn_allreduce-20261126-014510");
  CHECK(distlab::run::default_run_directory("/tmp/runs/", "x", 0) == "/tmp/runs/x-19700101-000000");
}

TEST_CASE("summary.json says where the run came from: command, version, machine figures") {
  TempDir tmp;
  RunResult r = three_tasks();
  r.provenance = {.command = "./simulate scenarios/ps_4workers.yaml --set 'faults=[]'",
                  .version = "a43a4a40efad",
                  .machines = {{.name = "n1-standard-4",
                                .description = "n1 series",
                                .figures = {{"vcpus", 4}, {"memory_gib", 15.5}}}}};
  distlab::run::write_run_directory(tmp.path.string(), r);
  const json s = read_json(tmp.path / "summary.json");
  CHECK(s.at("command") == r.provenance.command);
  CHECK(s.at("version") == "a43a4a40efad");
  const json& machine = s.at("machines").at("n1-standard-4");
  CHECK(machine.at("description") == "n1 series");
  CHECK(machine.at("vcpus").is_number_integer());
  CHECK(machine.at("vcpus") == 4);
  CHECK(machine.at("memory_gib") == 15.5);
}

TEST_CASE("the scenario as it ran is kept beside the results, when known") {
  TempDir tmp;
  RunResult r = three_tasks();
  distlab::run::write_run_directory((tmp.path / "without").string(), r);
  CHECK_FALSE(std::filesystem::exists(tmp.path / "without" / "scenario.yaml"));
  r.provenance.scenario_text = "model: models/mnist_cnn.yaml\nseed: 3\n";
  distlab::run::write_run_directory((tmp.path / "with").string(), r);
  CHECK(read(tmp.path / "with" / "scenario.yaml") == r.provenance.scenario_text);
}

TEST_CASE(
    "after the table, a command names the files it wrote, checkpoints and model when there are") {
  RunResult r = three_tasks();
  r.weights_sha256.clear();  // timing fidelity: no weights, no model file
  const std::string without = distlab::run::format_run_written("runs/a", r);
  CHECK(without.rfind(distlab::run::format_summary_table(r), 0) == 0);
  CHECK(without.find("wrote runs/a/{summary.json,steps.csv,curve.csv,timeline.json}\n") !=
        std::string::npos);
  r.checkpoint.every_steps = 10;
  CHECK(distlab::run::format_run_written("runs/a", r).find("timeline.json} and checkpoints/\n") !=
        std::string::npos);
  // A run with weights (full fidelity) left its model file too.
  r.weights_sha256 = std::string(64, 'a');
  CHECK(distlab::run::format_run_written("runs/a", r)
            .find("timeline.json,model.safetensors} and checkpoints/\n") != std::string::npos);
}
