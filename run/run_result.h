// Everything a finished run reports, from either backend: the run as a whole
// and every task's log. run_files.h turns it into the run directory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "run/provenance.h"
#include "strategy/config.h"
#include "strategy/task_log.h"

namespace distlab::run {

// A task's failure and the recovery from it.
struct Failure {
  double at = 0;                // on the run's clock
  std::string task;             // "worker:1"
  std::string cause;            // "at_step 300", "at_seconds 20", "mtbf", "signal 9"
  std::string recovery;         // "rejoin" (restarted alone) or "rollback" (every task)
  int64_t restored_step = 0;    // where a rollback went on from; -1 for a rejoin
  int64_t lost_steps = 0;       // work done again: the chief's steps since the checkpoint
  double recovery_seconds = 0;  // from the failure until the task(s) ran again
};

// A task whose report never reached the chief of a --role cluster: it left
// the run (its connection closed) after training and did not come back.
// Its entry in the run's tasks is its name alone.
struct MissingReport {
  std::string task;    // "worker:1"
  std::string reason;  // what the chief saw
};

// Where the tasks ran: each on a host of its own ("per_task"), or all on
// one host sharing its cores ("one_host": ./realnet --launch, or a
// simulation with cluster.placement: one_host).
struct RunPlacement {
  std::string kind;          // "per_task", "one_host"; "" when not known
  int host_cores = 0;        // cores of the shared host (one_host); 0 when not known
  int threads_per_task = 0;  // compute threads each task used; 0 when not known
};

// A part of a run that was resumed in place (run/out_directory.h): each
// command that added to the run directory, and what it added.
struct Segment {
  std::string command;
  std::string version;
  std::string resumed_from;  // the checkpoint it went on from; "" for none
  int64_t start_step = 0;    // the chief's first step
  int64_t steps = 0;         // the chief's step it ended at
  double started_at = 0;     // on the whole run's clock, where its records begin
  double run_seconds = 0;    // its own length on the run's clock
  double wall_seconds = 0;
};

struct RunResult {
  std::string scenario;  // scenario name (file stem)
  std::string description;
  std::string strategy;  // "allreduce", "parameter_server (async)", ...
  std::string backend;   // "simulate" or "realnet"
  std::string fidelity;  // "full" or "timing"
  uint64_t seed = 0;
  // The run's own clock: simulated seconds (simulate) or wall seconds
  // (realnet), from start to the last task's end.
  double run_seconds = 0;
  double wall_seconds = 0;             // what the run took on this machine, loading included
  double simulation_wall_seconds = 0;  // of which running the simulation (simulate only)
  // The process's CPU time meanwhile (simulate only): short of the wall time
  // when the machine gave the core to others, as a shared one does.
  double simulation_cpu_seconds = 0;
  uint64_t model_bytes = 0;  // the parameter buffer, as it goes on the wire
  int replicas = 0;
  int64_t steps = 0;  // training steps of the chief (replica 0), up to which it trained
  // A resumed run: the checkpoint it went on from, and that checkpoint's step
  // (its first step is start_step; 0 for a run from scratch).
  std::string resumed_from;
  int64_t start_step = 0;
  strategy::CheckpointConfig checkpoint;  // the scenario's checkpoint settings
  int64_t examples = 0;   // examples trained on, all replicas together, every life of each
  double final_loss = 0;  // NaN in timing fidelity
  double final_accuracy = 0;
  std::string weights_sha256;            // empty in timing fidelity
  uint64_t spans_dropped = 0;            // timeline spans beyond the per-task limit
  std::vector<strategy::TaskLog> tasks;  // cluster order: chief, workers, ps
  // Per task, same order: gradients pushed (workers of a parameter-server
  // run) or applied (parameter servers); 0 elsewhere.
  std::vector<int64_t> task_updates;
  // Per task: gradients a sync parameter server dropped as too late (backup
  // workers); 0 elsewhere.
  std::vector<int64_t> task_gradients_dropped;
  std::vector<std::string> task_weights_sha256;  // replicas, full fidelity; "" elsewhere
  std::vector<Failure> failures;                 // in the order they happened
  std::vector<MissingReport> missing_reports;    // none but for a --role chief's
  Provenance provenance;  // the command, distlab's version, the machine types
  RunPlacement placement;
  // A simulation with ./simulate --calibrate-from: the costs it used, as a
  // JSON object (sim/measured_costs.h); "" for none.
  std::string calibrated_from;
  // The segments of a run continued in place, in order; empty for a run of
  // one segment (then the run itself is its only one).
  std::vector<Segment> segments;
};

}  // namespace distlab::run
