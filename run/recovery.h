// The platform's recovery policy, once for both backends. When a task of a
// cloud job dies, the platform (a Kubernetes restart policy, AI Platform's
// retries) starts it again; what that means for a run, and which failures
// a scenario injects, is decided here. The simulator's supervisor
// (sim/task_supervisor.h) and ./realnet's launcher (apps/realnet/launcher.h)
// only carry the decisions out, each on its own clock (simulated or wall
// seconds):
//
//   - Faults strike at a step (the task dies as it begins it; each fires
//     once, even if a rollback passes its step again), at a time, or at the
//     times of a seeded exponential process, one per fault and task, so that
//     a scenario and seed fail the same tasks at the same moments of the
//     run's clock on either backend.
//   - A task whose strategy lets it rejoin (an asynchronous worker) is
//     restarted alone while the others go on. It loses the step it was in.
//     Once the parameter servers have ended, it is not restarted: there is
//     nothing left to rejoin.
//   - Any other death rolls the run back: every task starts again from the
//     newest valid checkpoint, or from where the run started, and the
//     chief's steps since then are lost.
//   - A run takes at most recovery.max_restarts restarts; the failure after
//     the last one ends it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_file.h"
#include "nn/random.h"
#include "run/run_result.h"
#include "run/scenario.h"
#include "strategy/task.h"

namespace distlab::run {

// When one timed fault strikes one task, on the run's clock: once (a fault
// at_seconds), or again and again at the times of an exponential process
// whose mean is the fault's mtbf (a preemptible VM's life, and a fresh VM's
// after each failure). The times do not depend on what the run does.
class FaultClock {
 public:
  int task() const { return task_; }                   // the ordinal of the task it strikes
  const std::string& cause() const { return cause_; }  // "at_seconds 20", "mtbf"
  // The next time it strikes; infinity once a one-off fault has struck.
  double due() const { return due_; }
  // From the time due before (or the run's start) to this one: what an
  // actor of the simulation sleeps, so that its clock adds up exactly the
  // intervals drawn.
  double interval() const { return interval_; }
  // Past the time due (whether it struck or found its task down): on to the
  // next one.
  void advance();

 private:
  friend class RecoveryPolicy;
  FaultClock(int task, std::string cause, double due, double mtbf_seconds, uint64_t seed);

  int task_;
  std::string cause_;
  double due_;
  double interval_;
  double mtbf_seconds_;  // 0: a one-off fault
  nn::Rng rng_;          // the exponential process's draws
};

// What the platform does about a task that died.
enum class Recovery {
  kRejoin,    // restart the task alone; the others go on
  kRollback,  // stop every task and restart them all from a checkpoint
  kGiveUp,    // the restart budget is spent: the run fails
};

class RecoveryPolicy {
 public:
  // For the tasks of `cluster` (ordinals), as `scenario` runs them.
  RecoveryPolicy(const Scenario& scenario, const strategy::ClusterSpec& cluster);

  // Every timed fault of the scenario, one clock per fault and task it
  // strikes, in the scenario's order of faults and then of tasks.
  std::vector<FaultClock> timed_faults() const;
  // The steps at which a task dies as it begins them, not yet fired.
  const std::vector<int64_t>& step_faults(int task) const;
  // Whether the task dies as it begins `step`; if so, that fault is spent.
  bool take_step_fault(int task, int64_t step);

  // The chief's steps done, as it reports them: what a rollback loses.
  void chief_reached(int64_t steps) { chief_done_ = steps; }

  // `task` died of `cause` at `at` on the run's clock. `died_in_step` says
  // whether it was inside a step (none: the backend cannot tell, and a
  // rejoin counts the step it may have been in; ./realnet measures it
  // afterwards from its tasks' records, run/task_lives.h). Records the
  // failure (but for kGiveUp) and says what to do.
  Recovery on_failure(int task, const std::string& cause, double at,
                      std::optional<bool> died_in_step);
  // A rollback's tasks start again from `restored_step` (0 without a
  // checkpoint): completes the latest failure's record.
  void rolled_back(int64_t restored_step);
  // The failed task (rejoin) or the run (rollback) runs again `seconds`
  // after the latest failure.
  void recovered(double seconds);
  // Whether a task told to rejoin has nothing left to rejoin: every
  // parameter server has ended (`ended`, per task ordinal, says which tasks
  // ended their run). It would wait for servers that are not coming, so it
  // is not restarted.
  bool nothing_to_rejoin(const std::vector<bool>& ended) const;

  const std::vector<Failure>& failures() const { return failures_; }
  // For the user, about the latest failure: "worker:1 died (mtbf) at 2.31
  // s; it rejoins alone, the others go on". `clock` names the run's
  // seconds ("s", "simulated s").
  std::string describe_latest(const std::string& clock) const;
  // Why the run gave up, after on_failure said kGiveUp.
  std::string give_up_reason(const std::string& cause) const;

 private:
  const Scenario& scenario_;
  strategy::ClusterSpec cluster_;
  std::vector<std::vector<int64_t>> step_faults_;  // per task ordinal
  std::vector<Failure> failures_;
  int64_t chief_done_ = 0;
};

// Where a rollback goes on from: the newest valid checkpoint in `folder`,
// else what the run itself started from (null: step 0).
std::shared_ptr<const checkpoint::LoadedCheckpoint> rollback_checkpoint(
    const std::string& folder, const checkpoint::CheckpointLayout& layout,
    std::shared_ptr<const checkpoint::LoadedCheckpoint> started_from);

}  // namespace distlab::run
