// ./realnet --launch: every task of a scenario as its own process on
// 127.0.0.1 (free ports, TF_CONFIG in each one's environment), a merged
// progress view, and the run directory gathered from the tasks' reports,
// in ./simulate's schema (wall seconds in place of simulated ones).
//
// Failures: a task that is killed (a scenario's fault, which the launcher
// injects with SIGKILL, or a real kill -9) is recovered from as the
// recovery policy of both backends decides (run/recovery.h): an
// asynchronous worker is restarted alone, any other death stops every task
// and starts them all again from the newest valid checkpoint, at most
// recovery.max_restarts times. A task that ends with an error stops the
// others; the launcher names it and shows its last lines.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "run/provenance.h"
#include "run/scenario.h"

namespace distlab::realnet {

struct LaunchOptions {
  std::string scenario;
  std::vector<run::Override> overrides;
  std::string out;     // run directory; "" for runs/<scenario>-<time>/
  std::string resume;  // --resume: a run directory or a checkpoint file; "" starts afresh
  int threads = 1;     // compute threads per task
  double connect_timeout_seconds = 60;
  double receive_timeout_seconds = 600;
  bool quiet = false;
  bool same_host_reads = false;  // passed on to every task (--same-host-reads)
  run::Provenance provenance;    // for summary.json: the command and distlab's version
  // Fault injection (tests): this task ("worker:1") dies in its first life
  // once its goodbyes are done, before it writes its report.
  std::string crash_after_goodbye;
  // Fault injection (tests): this task dies in its first life before it
  // listens or dials, while its peers connect (they dial it meanwhile).
  std::string crash_before_connect;
  // Fault injection (tests): this task dies in its first life a second
  // after its goodbyes, before it tells the launcher they are done.
  std::string crash_before_finished;
};

// Returns the exit status: 0, or 1 when a task failed.
int launch(const LaunchOptions& options);

}  // namespace distlab::realnet
