#include "apps/realnet/task_process.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <thread>

#include "apps/realnet/real_scenario.h"
#include "common/error.h"
#include "net/cluster/cluster_config.h"
#include "net/runtime/tcp_runtime.h"
#include "net/wire/handshake.h"
#include "nn/kernels/kernels.h"
#include "nn/threads.h"
#include "run/checkpoint_plan.h"
#include "run/report_exchange.h"
#include "run/run_assembly.h"
#include "run/run_files.h"
#include "run/task_lives.h"
#include "run/task_report.h"
#include "run/training_inputs.h"
#include "strategy/strategies.h"
#include "strategy/strategy.h"

namespace distlab::realnet {
namespace {

// Written first to a temporary name, then renamed: a reader never sees half
// a report.
void write_report(const std::string& path, const run::TaskReport& report) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary);
    out << run::task_report_json(report) << "\n";
    if (!out) throw Error(path + ": cannot write the task report");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    throw Error(path + ": cannot write the task report");
  }
}

// A task other than the chief keeps its report as the workers of
// TensorFlow's labs kept their output: in a fresh temporary folder
// ($TMPDIR, else /tmp), which its machine may clear; the run directory is
// the chief's. Returns the file.
std::string keep_report(const std::string& scenario, strategy::TaskId task,
                        const run::TaskReport& report) {
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string pattern = std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") +
                              "/distlab-" + scenario + "-" + strategy::role_name(task.role) + "-" +
                              std::to_string(task.index) + "-XXXXXX";
  std::vector<char> folder(pattern.begin(), pattern.end());
  folder.push_back('\0');
  if (mkdtemp(folder.data()) == nullptr) {
    throw Error(pattern + ": cannot make a folder for the task report: " + std::strerror(errno));
  }
  const std::string path = std::string(folder.data()) + "/report.json";
  write_report(path, report);
  return path;
}

// The scenario, checked against the cluster that the task's assignment
// names.
run::Scenario task_scenario(const TaskProcessOptions& o, const net::TaskAssignment& assignment) {
  run::Scenario scenario = load_real_scenario(o.scenario, o.overrides);
  if (!o.quiet) {
    for (const std::string& note : scenario.notes) std::fprintf(stderr, "%s\n", note.c_str());
  }
  net::check_matches(assignment.cluster,
                     run::tasks_of(scenario, scenario.strategy.devices > 0
                                                 ? scenario.strategy.devices
                                                 : assignment.cluster.spec().replicas()));
  return scenario;
}

// A task of the run, from its setup (model, data, checkpoints) and its
// connections to the end: its report handed over, and the run directory
// written if it is the chief that gathers the reports.
class TaskProcess {
 public:
  TaskProcess(const TaskProcessOptions& o, const net::TaskAssignment& assignment,
              const run::Scenario& scenario, std::chrono::steady_clock::time_point wall_start);
  int run();

 private:
  run::OutDirectory run_directory() const;
  void prepare_setup();
  net::TcpOptions tcp_options() const;
  void prepare_restarts(net::TcpRuntime& runtime) const;
  void record_steps(net::TcpRuntime& runtime);
  void add_earlier_lives(strategy::TaskLog& log, uint32_t life) const;
  run::TaskReport train(net::TcpRuntime& runtime);
  run::TaskReport train_or_tell_peers(net::TcpRuntime& runtime);
  [[noreturn]] static void crash(const std::string& when);
  run::GatheredReports hand_over(net::TcpRuntime& runtime, const run::TaskReport& report,
                                 std::string& kept) const;
  void print_done(const run::TaskReport& report, const std::string& kept) const;
  void write_run_directory(run::GatheredReports gathered) const;

  const TaskProcessOptions& o_;
  const net::TaskAssignment& assignment_;
  const run::Scenario& scenario_;
  const std::chrono::steady_clock::time_point wall_start_;
  run::TrainingInputs inputs_;
  strategy::TrainingSetup& setup_;
  const strategy::ClusterSpec spec_;  // a value: ClusterAddresses::spec() makes one
  const bool chief_;
  // Without --report (the launcher's, which gathers the files itself), the
  // tasks bring their reports to the chief, which writes the run directory.
  const bool gathering_;
  const run::OutDirectory run_directory_;
  // This life's steps as they finish, in its task folder ("" for none).
  std::string task_folder_;
  std::unique_ptr<run::LifeRecorder> recorder_;
  uint32_t life_ = 0;  // the life it records as (run::unused_life)
};

TaskProcess::TaskProcess(const TaskProcessOptions& o, const net::TaskAssignment& assignment,
                         const run::Scenario& scenario,
                         std::chrono::steady_clock::time_point wall_start)
    : o_(o),
      assignment_(assignment),
      scenario_(scenario),
      wall_start_(wall_start),
      inputs_(scenario),
      setup_(inputs_.setup()),
      spec_(assignment.cluster.spec()),
      chief_(spec_.replica_rank(assignment.self) == 0),
      gathering_(o.report.empty()),
      run_directory_(run_directory()) {}

int TaskProcess::run() {
  prepare_setup();
  net::TcpRuntime runtime(assignment_.self, assignment_.cluster, tcp_options());
  runtime.set_slowdown(run::task_slowdown(scenario_, assignment_.self));
  prepare_restarts(runtime);
  if (o_.crash_before_connect) crash("connect");
  runtime.connect();
  if (o_.progress_lines) {
    std::printf("@connected\n");  // for the launcher: a restarted task runs again
    std::fflush(stdout);
  }
  record_steps(runtime);
  const run::TaskReport report = train_or_tell_peers(runtime);
  if (o_.crash_before_report) crash("report");
  std::string kept;  // where a task other than the chief keeps its report
  run::GatheredReports gathered = hand_over(runtime, report, kept);
  runtime.disconnect();
  if (o_.crash_before_finished) {
    // Long enough for peers that waited only for its goodbye to end.
    std::this_thread::sleep_for(std::chrono::seconds(1));
    crash("before finished");
  }
  if (o_.progress_lines) {
    // For the launcher: nothing of the run waits for this task any more
    // (its peers have its goodbye); its report alone is to come.
    std::printf("@finished\n");
    std::fflush(stdout);
  }
  if (o_.crash_after_goodbye) crash("goodbye");

  if (!o_.report.empty()) write_report(o_.report, report);
  if (!o_.quiet) print_done(report, kept);
  if (gathered.reports.empty()) return 0;
  const bool complete = gathered.missing.empty();
  for (const auto& [task, reason] : gathered.missing) {
    std::fprintf(stderr, "error: the report of %s is missing: %s\n",
                 strategy::task_name(task).c_str(), reason.c_str());
  }
  write_run_directory(std::move(gathered));
  return complete ? 0 : kExitFailure;
}

// --out; else the chief's default, when it writes a run directory or
// checkpoints. A chief that writes the run directory claims it
// (run/out_directory.h): a --role chief never writes over an earlier run,
// continues the one it resumes in place, and, restarted by its platform,
// goes on with the unfinished run its earlier life began. Under --launch
// the launcher has claimed it.
run::OutDirectory TaskProcess::run_directory() const {
  std::string out = o_.out;
  if (out.empty() && chief_ && (gathering_ || scenario_.checkpoint.enabled())) {
    out = run::unused_directory(
        run::default_run_directory("runs", scenario_.name, std::time(nullptr)));
  }
  if (!chief_ || !gathering_) return run::OutDirectory{.path = out};
  return run::claim_out_directory(out, o_.resume, "realnet", run::Restarts::kPlatform);
}

// The checkpoints (the chief reads the one to resume from), and the
// launcher's progress lines.
void TaskProcess::prepare_setup() {
  setup_.set_checkpoints(run::plan_checkpoints(scenario_, setup_, spec_.replicas(),
                                               {.run_directory = run_directory_.path,
                                                .resume = o_.resume,
                                                .backend = "realnet",
                                                .load = chief_,
                                                .note = [this](const std::string& line) {
                                                  if (!o_.quiet)
                                                    std::fprintf(stderr, "%s\n", line.c_str());
                                                }}));
  if (o_.progress_lines) {
    setup_.on_chief_step = [](int64_t done, int64_t total) {
      std::printf("@progress %lld %lld\n", static_cast<long long>(done),
                  static_cast<long long>(total));
      std::fflush(stdout);
    };
  }
}

net::TcpOptions TaskProcess::tcp_options() const {
  net::TcpOptions tcp;
  tcp.secret = o_.secret;
  tcp.connect_deadline =
      std::chrono::milliseconds(static_cast<int64_t>(o_.connect_timeout_seconds * 1000));
  tcp.receive_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(o_.receive_timeout_seconds * 1000));
  tcp.rejoin_wait = std::chrono::milliseconds(static_cast<int64_t>(o_.rejoin_wait_seconds * 1000));
  tcp.same_host_reads = o_.same_host_reads;
  if (o_.epoch_ns) {
    tcp.epoch = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(*o_.epoch_ns));
  }
  tcp.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  // Under a strategy whose failed tasks rejoin alone (asynchronous
  // workers), losing one of them does not end this task.
  const strategy::StrategyDescription& strategy = strategy::describe(scenario_.strategy.kind);
  if (strategy.rejoins) {
    tcp.may_restart = [&strategy, config = scenario_.strategy](strategy::TaskId task) {
      return strategy.rejoins(config, task.role);
    };
  }
  tcp.dial_everyone = o_.rejoin;
  tcp.prepare_background_thread = [threads = o_.threads] { nn::set_compute_threads(threads); };
  return tcp;
}

// The launcher's restarts: every task's incarnation, whether this one
// rejoins a run that went on, and the steps at which it crashes.
void TaskProcess::prepare_restarts(net::TcpRuntime& runtime) const {
  if (!o_.incarnations.empty()) {
    const auto own = static_cast<std::size_t>(spec_.ordinal(assignment_.self));
    runtime.set_incarnations(own < o_.incarnations.size() ? o_.incarnations[own] : 0,
                             o_.incarnations);
  }
  runtime.set_rejoining(o_.rejoin);
  if (!o_.crash_at_steps.empty()) {
    runtime.set_step_hook([steps = o_.crash_at_steps](int64_t step) {
      if (std::find(steps.begin(), steps.end(), step) == steps.end()) return;
      crash(std::to_string(step));
    });
  }
}

// This life's steps, appended to its file in the task folder as they
// finish (run/task_lives.h), so that a kill -9 loses at most the step in
// flight. Only once connected: a --role chief claims its run directory
// before it connects, and must find it empty when other tasks on its
// machine share its --out. A task without a run directory (a --role task
// given no --out) records nothing: it would have nowhere to find them.
void TaskProcess::record_steps(net::TcpRuntime& runtime) {
  if (run_directory_.path.empty()) return;
  task_folder_ = run::task_folder(run_directory_.path, assignment_.self);
  life_ = run::unused_life(task_folder_, runtime.incarnation());
  recorder_ =
      std::make_unique<run::LifeRecorder>(run::life_file(task_folder_, life_), assignment_.self);
  runtime.set_step_observer(recorder_.get());
}

// The lives of this task before `life`, as they recorded them: the report
// holds every life, as the simulator's log does.
void TaskProcess::add_earlier_lives(strategy::TaskLog& log, uint32_t life) const {
  if (task_folder_.empty()) return;
  std::vector<run::LifeRecords> earlier;
  for (auto& [number, records] : run::read_lives(task_folder_)) {
    if (number < life) earlier.push_back(std::move(records));
  }
  run::add_earlier_lives(log, earlier);
}

// A crash, as a failing machine has it: no goodbye, no report. "@crash
// WHEN" first, for the launcher.
void TaskProcess::crash(const std::string& when) {
  std::printf("@crash %s\n", when.c_str());
  std::fflush(stdout);
  std::raise(SIGKILL);
  std::abort();  // not reached
}

// The strategy's task, run to its end, and its report.
run::TaskReport TaskProcess::train(net::TcpRuntime& runtime) {
  run::TaskReport report;
  report.outcome = strategy::run_task(runtime, setup_);
  report.spans_dropped = runtime.spans_dropped();
  report.log = runtime.take_log();
  report.log.payloads_read_in_place = runtime.payloads_read_in_place();
  report.log.host = assignment_.cluster.of(assignment_.self).to_string();
  report.log.isa = nn::kernels::kernels().level;
  add_earlier_lives(report.log, life_);
  return report;
}

// A task that fails tells its peers why before it exits: one waiting for
// it then fails with the cause, which the launcher may name first.
run::TaskReport TaskProcess::train_or_tell_peers(net::TcpRuntime& runtime) {
  try {
    return train(runtime);
  } catch (const std::exception& e) {
    runtime.abandon(e.what());
    throw;
  }
}

// The reports travel before the goodbyes, on the run's connections (after
// take_log: their trip is no part of the log). Returns every task's report
// at the chief that gathers them; a task other than the chief keeps its own
// (`kept`: where).
run::GatheredReports TaskProcess::hand_over(net::TcpRuntime& runtime, const run::TaskReport& report,
                                            std::string& kept) const {
  if (gathering_ && run::gathers_reports(runtime)) {
    // Training is over: a peer that is gone now (killed, its machine lost)
    // and does not come back sends no report; waiting for it would last
    // the whole --timeout.
    runtime.await_reports_only();
    return run::gather_task_reports(runtime, report);
  }
  if (gathering_) {
    kept = keep_report(scenario_.name, assignment_.self, report);
    run::send_task_report(runtime, report);
  }
  return {};
}

void TaskProcess::print_done(const run::TaskReport& report, const std::string& kept) const {
  std::printf("%s done: %zu steps, %.2f s, %.1f MB sent, %.1f MB received%s%s\n",
              strategy::task_name(assignment_.self).c_str(), report.log.steps.size(),
              report.log.finished_at, report.log.bytes_sent / 1e6, report.log.bytes_received / 1e6,
              report.outcome.weights_sha256.empty()
                  ? ""
                  : (", weights sha256 " + report.outcome.weights_sha256.substr(0, 16)).c_str(),
              kept.empty() ? "" : ("; report kept in " + kept).c_str());
}

// The chief's run directory from every task's report.
void TaskProcess::write_run_directory(run::GatheredReports gathered) const {
  run::RunAssembly assembly{
      .backend = "realnet",
      .model_bytes = static_cast<uint64_t>(setup_.parameter_floats()) * sizeof(float),
      .provenance = o_.provenance};
  for (const auto& [task, reason] : gathered.missing) {
    assembly.missing_reports.push_back({strategy::task_name(task), reason});
  }
  if (const auto& resume = setup_.checkpoints().resume) {
    assembly.resumed_from = run::ResumedFrom{.path = resume->path, .step = resume->info.step};
  }
  run::RunResult result =
      run::assemble_run(scenario_, spec_, std::move(gathered.reports), std::move(assembly));
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count();
  run::write_run_directory(run_directory_, result);
  if (!o_.quiet) std::printf("%s", run::format_run_written(run_directory_, result).c_str());
}

}  // namespace

int run_task_process(const TaskProcessOptions& o) {
  const auto wall_start = std::chrono::steady_clock::now();
  net::validate_secret(o.secret);
  const net::TaskAssignment assignment =
      net::assignment_from(o.cluster_file, o.role, o.index, std::getenv("TF_CONFIG"));
  const run::Scenario scenario = task_scenario(o, assignment);
  nn::set_compute_threads(o.threads);
  return TaskProcess(o, assignment, scenario, wall_start).run();
}

}  // namespace distlab::realnet
