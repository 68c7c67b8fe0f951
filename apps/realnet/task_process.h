// One task of a real run, as its own process: who it is (cluster file or
// TF_CONFIG), the scenario, the TCP runtime, the strategy, and at the end
// its report (run/task_report.h) for whoever gathers the run: the launcher
// (--report FILE), or else the cluster's chief, which receives every other
// task's report over the run's connections (run/report_exchange.h) and
// writes the run directory; the other tasks keep theirs in a temporary
// folder.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "run/provenance.h"
#include "run/scenario.h"

namespace distlab::realnet {

struct TaskProcessOptions {
  std::string scenario;
  std::vector<run::Override> overrides;
  std::optional<std::string> cluster_file;
  std::optional<std::string> role;
  std::optional<int> index;
  std::string secret;
  // Where to write the task's report (the launcher's, which gathers the
  // files); "" sends it to the chief, which writes the run directory.
  std::string report;
  // The run directory, which the chief writes with its checkpoints/
  // (default: runs/<scenario>-<time>/).
  std::string out;
  std::string resume;  // --resume: a run directory or a checkpoint file; "" starts afresh
  std::optional<int64_t> epoch_ns;  // steady_clock origin shared by a launcher's tasks
  double connect_timeout_seconds = 60;
  double receive_timeout_seconds = 600;
  // Once training is over, how long a task waits for a peer whose
  // connection closed to come back (restarted): then the chief writes the
  // run directory without that peer's report and exits non-zero, and the
  // others no longer wait for its goodbye.
  double rejoin_wait_seconds = 15;
  int threads = 2;
  // Payloads between tasks of one host read from the sender's memory
  // (net::TcpOptions::same_host_reads).
  bool same_host_reads = false;
  bool progress_lines = false;  // "@progress DONE TOTAL" lines on stdout (for the launcher)
  // Restarts (the launcher's): every task's incarnation (runtime.h), this
  // one's included, whether it rejoins a run that went on without it, and
  // the steps at which it kills itself (a scenario's at_step faults; it
  // says "@crash STEP" first).
  std::vector<uint32_t> incarnations;
  bool rejoin = false;
  std::vector<int64_t> crash_at_steps;
  bool crash_before_report = false;  // fault injection: dies once trained, its report unsent
  bool crash_after_goodbye = false;  // fault injection: dies once its goodbyes are done
  // Fault injection: dies a second after its goodbyes, before it tells the
  // launcher they are done (a kill that falls in between).
  bool crash_before_finished = false;
  bool crash_before_connect = false;  // fault injection: dies as its peers start connecting
  bool quiet = false;
  run::Provenance provenance;  // for the chief's summary.json: the command, version, machine
};

// Runs the task to its end; returns the exit status. Throws InputError for
// bad input (scenario, cluster, secret) and Error for a failed run.
int run_task_process(const TaskProcessOptions& options);

}  // namespace distlab::realnet
