#include "apps/realnet/task_process.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>

#include "apps/realnet/real_scenario.h"
#include "common/error.h"
#include "net/cluster/cluster_config.h"
#include "net/runtime/message_memory.h"
#include "net/runtime/tcp_runtime.h"
#include "net/wire/handshake.h"
#include "nn/kernels/kernels.h"
#include "nn/threads.h"
#include "run/checkpoint_plan.h"
#include "run/report_exchange.h"
#include "run/run_assembly.h"
#include "run/run_files.h"
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

}  // namespace

int run_task_process(const TaskProcessOptions& o) {
  const auto wall_start = std::chrono::steady_clock::now();
  net::validate_secret(o.secret);
  const net::TaskAssignment assignment =
      net::assignment_from(o.cluster_file, o.role, o.index, std::getenv("TF_CONFIG"));
  run::Scenario scenario = load_real_scenario(o.scenario, o.overrides);
  if (!o.quiet) {
    for (const std::string& note : scenario.notes) std::fprintf(stderr, "%s\n", note.c_str());
  }
  net::check_matches(assignment.cluster,
                     run::tasks_of(scenario, scenario.strategy.devices > 0
                                                 ? scenario.strategy.devices
                                                 : assignment.cluster.spec().replicas()));
  nn::set_compute_threads(o.threads);
  net::keep_message_memory();
  run::TrainingInputs inputs(scenario);
  strategy::TrainingSetup& setup = inputs.setup();
  const strategy::ClusterSpec& spec = assignment.cluster.spec();
  const bool chief = spec.replica_rank(assignment.self) == 0;
  // Without --report (the launcher's, which gathers the files itself), the
  // tasks bring their reports to the chief, which writes the run directory.
  const bool gathering = o.report.empty();
  std::string run_directory = o.out;
  if (run_directory.empty() && chief && (gathering || scenario.checkpoint.enabled())) {
    run_directory = run::default_run_directory("runs", scenario.name, std::time(nullptr));
  }
  setup.set_checkpoints(run::plan_checkpoints(scenario, setup, spec.replicas(),
                                              {.run_directory = run_directory,
                                               .resume = o.resume,
                                               .backend = "realnet",
                                               .load = chief,
                                               .note = [&](const std::string& line) {
                                                 if (!o.quiet)
                                                   std::fprintf(stderr, "%s\n", line.c_str());
                                               }}));
  if (o.progress_lines) {
    setup.on_chief_step = [](int64_t done, int64_t total) {
      std::printf("@progress %lld %lld\n", static_cast<long long>(done),
                  static_cast<long long>(total));
      std::fflush(stdout);
    };
  }

  net::TcpOptions tcp;
  tcp.secret = o.secret;
  tcp.connect_deadline =
      std::chrono::milliseconds(static_cast<int64_t>(o.connect_timeout_seconds * 1000));
  tcp.receive_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(o.receive_timeout_seconds * 1000));
  if (o.epoch_ns) {
    tcp.epoch = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(*o.epoch_ns));
  }
  tcp.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  // Under a strategy whose failed tasks rejoin alone (asynchronous
  // workers), losing one of them does not end this task.
  const strategy::StrategyDescription& strategy = strategy::describe(scenario.strategy.kind);
  if (strategy.rejoins) {
    tcp.may_restart = [&strategy, config = scenario.strategy](strategy::TaskId task) {
      return strategy.rejoins(config, task.role);
    };
  }
  tcp.dial_everyone = o.rejoin;
  net::TcpRuntime runtime(assignment.self, assignment.cluster, tcp);
  if (!o.incarnations.empty()) {
    const auto own = static_cast<std::size_t>(spec.ordinal(assignment.self));
    runtime.set_incarnations(own < o.incarnations.size() ? o.incarnations[own] : 0, o.incarnations);
  }
  runtime.set_rejoining(o.rejoin);
  if (!o.crash_at_steps.empty()) {
    runtime.set_step_hook([steps = o.crash_at_steps](int64_t step) {
      if (std::find(steps.begin(), steps.end(), step) == steps.end()) return;
      // A crash, as a failing machine has it: no goodbye, no report.
      std::printf("@crash %lld\n", static_cast<long long>(step));
      std::fflush(stdout);
      std::raise(SIGKILL);
    });
  }
  runtime.connect();
  if (o.progress_lines) {
    std::printf("@connected\n");  // for the launcher: a restarted task runs again
    std::fflush(stdout);
  }
  run::TaskReport report;
  report.outcome = strategy::run_task(runtime, setup);
  report.spans_dropped = runtime.spans_dropped();
  report.log = runtime.take_log();
  report.log.host = assignment.cluster.of(assignment.self).to_string();
  report.log.isa = nn::kernels::kernels().level;
  // The reports travel before the goodbyes, on the run's connections (after
  // take_log: their trip is no part of the log).
  std::vector<run::TaskReport> gathered;
  std::string kept;  // where a task other than the chief keeps its report
  if (gathering && run::gathers_reports(runtime)) {
    gathered = run::gather_task_reports(runtime, report);
  } else if (gathering) {
    kept = keep_report(scenario.name, assignment.self, report);
    run::send_task_report(runtime, report);
  }
  runtime.disconnect();

  if (!o.report.empty()) write_report(o.report, report);
  if (!o.quiet) {
    std::printf("%s done: %zu steps, %.2f s, %.1f MB sent, %.1f MB received%s%s\n",
                strategy::task_name(assignment.self).c_str(), report.log.steps.size(),
                report.log.finished_at, report.log.bytes_sent / 1e6,
                report.log.bytes_received / 1e6,
                report.outcome.weights_sha256.empty()
                    ? ""
                    : (", weights sha256 " + report.outcome.weights_sha256.substr(0, 16)).c_str(),
                kept.empty() ? "" : ("; report kept in " + kept).c_str());
  }
  if (!gathered.empty()) {
    run::RunAssembly assembly{
        .backend = "realnet",
        .model_bytes = static_cast<uint64_t>(setup.parameter_floats()) * sizeof(float),
        .provenance = o.provenance};
    if (const auto& resume = setup.checkpoints().resume) {
      assembly.resumed_from = run::ResumedFrom{.path = resume->path, .step = resume->info.step};
    }
    run::RunResult result =
        run::assemble_run(scenario, spec, std::move(gathered), std::move(assembly));
    result.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    run::write_run_directory(run_directory, result);
    if (!o.quiet) std::printf("%s", run::format_run_written(run_directory, result).c_str());
  }
  return 0;
}

}  // namespace distlab::realnet
