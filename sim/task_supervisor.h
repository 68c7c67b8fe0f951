// The simulated platform's part in a run: it starts one actor per task,
// injects the scenario's faults and restarts failed tasks, carrying out
// the recovery policy of both backends (run/recovery.h) on the simulated
// clock:
//
//   - a task that rejoins is restarted alone, detect + restart seconds
//     after it died, while the others go on;
//   - a rollback stops every task when the failure is noticed (detect
//     seconds), and starts them all again restart seconds later from the
//     newest valid checkpoint (step 0 if none).
//
// A fault at a step makes the task throw as it begins it; a timed one is an
// injector actor that kills the task's actor. What every incarnation of a
// task logged is kept: the work redone after a rollback shows in steps.csv
// and on the timeline.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "run/run_result.h"
#include "run/scenario.h"
#include "sim/platform.h"
#include "sim/sim_runtime.h"
#include "strategy/replica.h"
#include "strategy/task_log.h"
#include "strategy/training_setup.h"

namespace distlab::sim {

struct SupervisedRun {
  std::vector<strategy::TaskLog> logs;  // per task, every incarnation's in order
  std::vector<strategy::TaskOutcome> outcomes;
  uint64_t spans_dropped = 0;
  std::vector<run::Failure> failures;
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
