#include "run/recovery.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "checkpoint/checkpoint_store.h"
#include "common/error.h"
#include "strategy/strategies.h"

namespace distlab::run {

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// One draw of an exponential process with mean `mean`, from [0, 1).
double exponential(nn::Rng& rng, double mean) {
  const double u = rng.uniform();
  return -mean * std::log1p(-u);
}

}  // namespace

FaultClock::FaultClock(int task, std::string cause, double due, double mtbf_seconds, uint64_t seed)
    : task_(task),
      cause_(std::move(cause)),
      due_(due),
      interval_(due),
      mtbf_seconds_(mtbf_seconds),
      rng_(seed) {
  if (mtbf_seconds_ > 0) due_ = interval_ = exponential(rng_, mtbf_seconds_);
}

void FaultClock::advance() {
  interval_ = mtbf_seconds_ > 0 ? exponential(rng_, mtbf_seconds_) : kNever;
  due_ += interval_;
}

RecoveryPolicy::RecoveryPolicy(const Scenario& scenario, const strategy::ClusterSpec& cluster)
    : scenario_(scenario),
      cluster_(cluster),
      step_faults_(static_cast<std::size_t>(cluster.task_count())) {
  for (const FaultSpec& fault : scenario.faults) {
    if (fault.at_step < 0 || !fault.task) continue;  // at_step always names its task
    step_faults_[static_cast<std::size_t>(cluster.ordinal(*fault.task))].push_back(fault.at_step);
  }
}

std::vector<FaultClock> RecoveryPolicy::timed_faults() const {
  std::vector<FaultClock> clocks;
  for (std::size_t f = 0; f < scenario_.faults.size(); ++f) {
    const FaultSpec& fault = scenario_.faults[f];
    for (int t = 0; t < cluster_.task_count(); ++t) {
      const strategy::TaskId task = cluster_.task_at(t);
      if (!fault.strikes(task, scenario_.cluster.machine_of(task.role))) continue;
      if (fault.at_seconds >= 0) {
        clocks.push_back(FaultClock(t, fmt::format("at_seconds {:g}", fault.at_seconds),
                                    fault.at_seconds, 0, 0));
      } else if (fault.random()) {
        // Each task's own process, seeded by the fault and the task: the
        // same draws on every backend, whatever the others do.
        const uint64_t seed =
            nn::derive_seed(scenario_.seed, {0xfa17, f, static_cast<uint64_t>(t)});
        clocks.push_back(FaultClock(t, "mtbf", 0, fault.mtbf_seconds, seed));
      }
    }
  }
  return clocks;
}

const std::vector<int64_t>& RecoveryPolicy::step_faults(int task) const {
  return step_faults_.at(static_cast<std::size_t>(task));
}

bool RecoveryPolicy::take_step_fault(int task, int64_t step) {
  auto& pending = step_faults_.at(static_cast<std::size_t>(task));
  const auto found = std::find(pending.begin(), pending.end(), step);
  if (found == pending.end()) return false;
  pending.erase(found);  // a fault fires once, even if a rollback passes its step again
  return true;
}

Recovery RecoveryPolicy::on_failure(int task, const std::string& cause, double at,
                                    std::optional<bool> died_in_step) {
  if (static_cast<int>(failures_.size()) >= scenario_.recovery.max_restarts) {
    return Recovery::kGiveUp;
  }
  const strategy::TaskId id = cluster_.task_at(task);
  const strategy::StrategyDescription& strategy = strategy::describe(scenario_.strategy.kind);
  Failure failure{.at = at, .task = strategy::task_name(id), .cause = cause};
  if (strategy.rejoins && strategy.rejoins(scenario_.strategy, id.role)) {
    // Restarted alone, it asks where it left off; it loses the step it was in.
    failure.recovery = "rejoin";
    failure.restored_step = -1;
    failure.lost_steps = died_in_step.value_or(true) ? 1 : 0;
    failures_.push_back(failure);
    return Recovery::kRejoin;
  }
  failure.recovery = "rollback";
  failures_.push_back(failure);
  return Recovery::kRollback;
}

void RecoveryPolicy::rolled_back(int64_t restored_step) {
  if (failures_.empty()) throw Error("a rollback without a failure");
  Failure& failure = failures_.back();
  failure.restored_step = restored_step;
  failure.lost_steps = std::max<int64_t>(chief_done_ - restored_step, 0);
  chief_done_ = restored_step;
}

void RecoveryPolicy::recovered(double seconds) {
  if (!failures_.empty()) failures_.back().recovery_seconds = seconds;
}

bool RecoveryPolicy::nothing_to_rejoin(const std::vector<bool>& ended) const {
  for (int t = 0; t < cluster_.task_count(); ++t) {
    const bool ended_here = static_cast<std::size_t>(t) < ended.size() && ended[t];
    if (cluster_.task_at(t).role == strategy::Role::kPs && !ended_here) return false;
  }
  return true;
}

std::string RecoveryPolicy::describe_latest(const std::string& clock) const {
  if (failures_.empty()) return "";
  const Failure& f = failures_.back();
  const std::string died = fmt::format("{} died ({}) at {:.2f} {}", f.task, f.cause, f.at, clock);
  if (f.recovery == "rejoin") return died + "; it rejoins alone, the others go on";
  return fmt::format("{}; every task went back to step {} ({} step{} lost)", died, f.restored_step,
                     f.lost_steps, f.lost_steps == 1 ? "" : "s");
}

std::string RecoveryPolicy::give_up_reason(const std::string& cause) const {
  return "it failed again (" + cause + ") after " + std::to_string(failures_.size()) +
         " restarts; the run gives up (recovery.max_restarts)";
}

std::shared_ptr<const checkpoint::LoadedCheckpoint> rollback_checkpoint(
    const std::string& folder, const checkpoint::CheckpointLayout& layout,
    std::shared_ptr<const checkpoint::LoadedCheckpoint> started_from) {
  std::error_code ec;
  if (!folder.empty() && std::filesystem::is_directory(folder, ec)) {
    try {
      return std::make_shared<const checkpoint::LoadedCheckpoint>(
          checkpoint::choose_checkpoint(folder, layout).checkpoint);
    } catch (const InputError&) {
      // none valid yet
    }
  }
  return started_from;
}

}  // namespace distlab::run
