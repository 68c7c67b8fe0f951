#include "net/task_process.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>

#include "common/error.h"
#include "net/cluster_config.h"
#include "net/handshake.h"
#include "net/message_memory.h"
#include "net/tcp_runtime.h"
#include "nn/kernels/kernels.h"
#include "nn/threads.h"
#include "run/checkpoint_plan.h"
#include "run/run_files.h"
#include "run/task_report.h"
#include "run/training_inputs.h"
#include "strategy/strategies.h"
#include "strategy/strategy.h"

namespace distlab::realnet {

int run_task_process(const TaskProcessOptions& o) {
  validate_secret(o.secret);
  const TaskAssignment assignment =
      assignment_from(o.cluster_file, o.role, o.index, std::getenv("TF_CONFIG"));
  run::Scenario scenario = run::load_scenario(o.scenario, o.overrides);
  if (scenario.fidelity != strategy::Fidelity::kFull) {
    // Real tasks compute for real: timing fidelity is the simulator's.
    scenario.fidelity = strategy::Fidelity::kFull;
  }
  check_matches(assignment.cluster,
                run::tasks_of(scenario, scenario.strategy.devices > 0
                                            ? scenario.strategy.devices
                                            : assignment.cluster.spec().replicas()));
  nn::set_compute_threads(o.threads);
  keep_message_memory();
  run::TrainingInputs inputs(scenario);
  strategy::TrainingSetup& setup = inputs.setup();
  const strategy::ClusterSpec& spec = assignment.cluster.spec();
  const bool chief = spec.replica_rank(assignment.self) == 0;
  std::string run_directory = o.out;
  if (run_directory.empty() && chief && scenario.checkpoint.enabled()) {
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

  TcpOptions tcp;
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
  TcpRuntime runtime(assignment.self, assignment.cluster, tcp);
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
  runtime.disconnect();

  if (!o.report.empty()) {
    const std::string temporary = o.report + ".tmp";
    {
      std::ofstream out(temporary);
      out << run::task_report_json(report) << "\n";
      if (!out) throw Error(o.report + ": cannot write the task report");
    }
    if (std::rename(temporary.c_str(), o.report.c_str()) != 0) {
      throw Error(o.report + ": cannot write the task report");
    }
  }
  if (!o.quiet) {
    std::printf("%s done: %zu steps, %.2f s, %.1f MB sent, %.1f MB received%s\n",
                strategy::task_name(assignment.self).c_str(), report.log.steps.size(),
                report.log.finished_at, report.log.bytes_sent / 1e6,
                report.log.bytes_received / 1e6,
                report.outcome.weights_sha256.empty()
                    ? ""
                    : (", weights sha256 " + report.outcome.weights_sha256.substr(0, 16)).c_str());
  }
  return 0;
}

}  // namespace distlab::realnet
