// A scenario: one experiment, as a YAML file in scenarios/. It names the
// model and data, the cluster (how many tasks of each role, on which machine
// types), the strategy, the network and the simulation fidelity. Both
// ./simulate and ./realnet run scenarios; realnet ignores what only a
// simulation can honour (machine types, network figures).
//
//   description: Chicago taxi tips, asynchronous parameter server
//   model: models/taxi_wide_deep.yaml     # relative to this file; keras:PATH: a Keras model
//   data: synthetic-taxi:20000            # a data source name (nn/data/data_source.h)
//   seed: 0
//   fidelity: full                        # full | timing
//   cluster:
//     machine: n1-standard-4              # every task's type unless overridden
//     chief: 1                            # 0 or 1
//     workers: 4
//     ps: 1
//     ps_machine: n1-highmem-8            # optional: chief_machine, worker_machine, ps_machine
//     placement: per_task                 # per_task: a host each | one_host: all share one
//     gpus_per_task: 1                    # chief and workers on GPU machines: towers per task
//   strategy:
//     name: parameter_server              # local | allreduce | parameter_server | mirrored
//     mode: async                         # parameter_server: async | sync
//     bucket_bytes: 0                     # allreduce, mirrored
//     segment_bytes: 1048576              # ring and PS messages; 0 = whole
//     devices: 4                          # mirrored: 0 = every GPU of the machine
//     gradient_dtype: float32             # allreduce, ps, mirrored: float32 | float16 | bfloat16
//   training:
//     batch_size: 128                     # global for allreduce, mirrored and local (split
//                                         # among the replicas, as Keras does); per worker
//                                         # for parameter_server; 0 = the model's
//     epochs: 1                           # or steps: N (per replica)
//     eval_every: 100
//     eval_examples: 2000
//     train_examples: 0
//     precision: float32                  # float32 | mixed_float16 | mixed_bfloat16 (timing only)
//   input_pipeline:                     # per-example preprocessing on the host's CPU
//     measured_ghz: 2.45                  # (run/input_pipeline_config.h; simulate only)
//     stages: {decode_jpeg: 1283, resize: 1140, augment: 1326, cast: 172}
//     offline: [decode_jpeg, resize, augment]
//     preprocessed: false
//   checkpoint:                         # the chief writes checkpoints/ in the run directory
//     every_steps: 500                    # 0 = not by steps (the default)
//     every_seconds: 0                    # run clock (simulated or wall); 0 = not by time
//     keep: 3                             # the newest files kept
//   faults:                             # failures to inject (see FaultSpec)
//     - {task: worker:1, at_step: 300}
//     - {task: ps:0, at_seconds: 20}
//     - {machine: n1-standard-4, mtbf_hours: 2}   # or {task: ..., mtbf_hours: ...}, or every task
//   slowdowns:                          # tasks slower than their machine (see SlowdownSpec)
//     - {task: worker:2, factor: 1.5}     # a straggler
//     - {task: worker:1, factor: 3, from_seconds: 20, to_seconds: 40}   # a noisy neighbour
//     - {machine: n1-standard-4, lognormal_sigma: 0.2}   # step-time noise; no task: every task
//     - {empirical_steps: runs/measured}  # the step-time noise a real run had
//   recovery:
//     max_restarts: 6                     # failures tolerated before the run gives up
//     restart_seconds: 10                 # simulate: a failed task's process is back after this
//     detect_seconds: 5                   # simulate: a failure is noticed after this
//   network:
//     latency_us: 50                      # one way, host to host
//     bandwidth_gbps: 0                   # 0 = each machine's NIC figure
//     model: cm02                         # cm02 (exact alpha-beta) | lv08 (SimGrid's TCP default)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "run/scenario_overrides.h"
#include "strategy/config.h"
#include "strategy/slowdown.h"
#include "strategy/task.h"

namespace distlab::run {

enum class NetworkModel { kCm02, kLv08 };
// How the simulator times collectives: every message of the ring, or the
// ring in closed form (sim/closed_form_collectives.h), for thousands of
// replicas.
enum class Collectives { kMessages, kAnalytic };

struct NetworkConfig {
  double latency_seconds = 50e-6;  // one way, host to host
  double bandwidth = 0;            // bytes/s; 0: each host's NIC figure
  NetworkModel model = NetworkModel::kCm02;
  Collectives collectives = Collectives::kMessages;
};

// Where the simulated tasks run: each on a host of its own, as on a cloud
// cluster, or all on one host of the chief's machine type, sharing its
// cores and talking over its loopback, as `./realnet --launch` runs them.
enum class Placement { kPerTask, kOneHost };

struct ClusterConfig {
  strategy::ClusterSpec spec;
  Placement placement = Placement::kPerTask;
  std::string chief_machine;
  std::string worker_machine;
  std::string ps_machine;
  // GPUs each chief and worker trains on: its batch split among them, one
  // tower each, gradients combined over the machine's bus (TensorFlow's
  // --num-gpus); parameter servers use none. The simulator's time only:
  // the NN core computes a task's batch as one.
  int gpus_per_task = 1;

  const std::string& machine_of(strategy::Role role) const;
};

// A failure to inject: a task dies when it begins a step, at a time on the
// run's clock, or at the times of a seeded exponential process (a
// preemptible VM's life) for one task, every task of a machine type, or
// every task. A fixed fault fires once, even if the run passes its step
// again after a rollback.
struct FaultSpec {
  std::optional<strategy::TaskId> task;  // none: every task (of `machine`, if given)
  std::string machine;
  int64_t at_step = -1;
  double at_seconds = -1;
  double mtbf_seconds = 0;
  std::string where;  // "file:line" of the entry, for messages

  bool random() const { return mtbf_seconds > 0; }
  // Whether this fault concerns a task on a machine type.
  bool strikes(strategy::TaskId t, const std::string& machine_type) const;
};

// A task slower than its machine (strategy/slowdown.h): one task, every
// task of a machine type, or every task, by a fixed factor, by seeded
// step-time noise (lognormal, or drawn from a real run's steps), or
// several, for the whole run or from one moment of the run's clock to
// another.
struct SlowdownSpec {
  std::optional<strategy::TaskId> task;  // none: every task (of `machine`, if given)
  std::string machine;
  strategy::SlowdownPart part;

  // Whether it slows a task on a machine type.
  bool slows(strategy::TaskId t, const std::string& machine_type) const;
};

// How failures are survived: the platform restarts failed tasks (a
// Kubernetes restart policy, AI Platform's retries), at most max_restarts
// times in a run.
struct RecoveryConfig {
  int max_restarts = 6;  // Kubernetes Job's default backoffLimit
  // Simulated only (./realnet measures them): until a failure is noticed,
  // a heartbeat's timeout, and until the failed task runs again.
  double detect_seconds = 5;
  double restart_seconds = 10;
};

struct Scenario {
  std::string path;  // the file it came from
  std::string name;  // file name without directory and .yaml
  std::string description;
  // The document realnet sends: the file's text as is without overrides;
  // with them, the edited tree emitted as YAML (comments are lost).
  std::string text;
  std::string model_path;  // resolved against the scenario's folder
  std::string data = "fashion-mnist";
  uint64_t seed = 0;
  strategy::Fidelity fidelity = strategy::Fidelity::kFull;
  ClusterConfig cluster;
  strategy::StrategyConfig strategy;
  strategy::TrainingConfig training;
  strategy::CheckpointConfig checkpoint;
  std::vector<FaultSpec> faults;
  std::vector<SlowdownSpec> slowdowns;
  RecoveryConfig recovery;
  NetworkConfig network;
  // What the overrides adjusted to fit a new strategy (scenario_overrides.h),
  // one line each, for the command to print.
  std::vector<std::string> notes;
};

// The slowdown of one task: every entry of `slowdowns` that slows it, drawn
// from the scenario's seed and the task's ordinal.
strategy::Slowdown task_slowdown(const Scenario& scenario, strategy::TaskId task);

// "allreduce", "parameter_server (async)": how run directories name it.
std::string strategy_label(const Scenario& scenario);

// Reads and checks a scenario. Overrides are applied to the document before
// it is checked, so an override with a bad value is reported like a bad line
// of the file (naming the override). Errors are ConfigErrors (file, line,
// key, hint); a missing file too. Machine type names are checked against
// `machine_types`, the backend's catalog, when it is given (./simulate
// gives it; ./realnet runs on whatever machines it has).
Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides = {},
                       const std::vector<std::string>& machine_types = {});

}  // namespace distlab::run
