// The simulated platform's part in a run: it starts one actor per task,
// injects the scenario's faults, and restarts failed tasks as a restart
// policy would (Kubernetes, AI Platform's retries):
//
//   - a task that rejoins (an asynchronous worker: StrategyDescription::
//     rejoins) is restarted alone, detect + restart seconds after it died,
//     while the others go on;
//   - any other failure rolls the run back: every task is stopped when the
//     failure is noticed (detect seconds), and all start again restart
//     seconds later from the newest valid checkpoint (step 0 if none).
//
// Faults strike at a step (the task throws as it begins it), at a time or
// at the times of an exponential process (an injector actor kills the
// task's actor). What every incarnation of a task logged is kept: the work
// redone after a rollback shows in steps.csv and on the timeline.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "run/scenario.h"
#include "sim/platform.h"
#include "sim/sim_runtime.h"
#include "strategy/replica.h"
#include "strategy/task_log.h"
#include "strategy/training_setup.h"

namespace distlab::sim {

// One failure and what recovering from it cost.
struct FailureRecord {
  double at = 0;                // simulated seconds
  std::string task;             // "worker:1"
  std::string cause;            // "at_step 300", "at_seconds 20", "mtbf"
  std::string recovery;         // "rejoin" or "rollback"
  int64_t restored_step = 0;    // where training went on from
  int64_t lost_steps = 0;       // steps done again (rollback), or the step it was in (rejoin)
  double recovery_seconds = 0;  // from the failure until the task(s) ran again
};

struct SupervisedRun {
  std::vector<strategy::TaskLog> logs;  // per task, every incarnation's in order
  std::vector<strategy::TaskOutcome> outcomes;
  uint64_t spans_dropped = 0;
  std::vector<FailureRecord> failures;
};

class TaskSupervisor {
 public:
  TaskSupervisor(const run::Scenario& scenario, const ClusterPlan& plan,
                 std::vector<simgrid::s4u::Host*> hosts, MailboxTable& mailboxes,
                 strategy::TrainingSetup& setup, std::size_t span_limit,
                 std::function<void(const std::string&)> on_event = {});
  ~TaskSupervisor();
  TaskSupervisor(const TaskSupervisor&) = delete;
  TaskSupervisor& operator=(const TaskSupervisor&) = delete;

  // Creates the supervisor's actor; call before the engine runs.
  void start();
  // After the engine ran: what the tasks did. Rethrows the first error of
  // a task (not a fault), naming it.
  SupervisedRun finish();
  // The tasks still running, for a deadlock's message.
  std::string unfinished() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace distlab::sim
