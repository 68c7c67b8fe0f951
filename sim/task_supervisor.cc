#include "sim/task_supervisor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>

#include "common/error.h"
#include "nn/kernels/kernels.h"
#include "run/recovery.h"
#include "strategy/strategy.h"

namespace distlab::sim {

namespace s4u = simgrid::s4u;
using strategy::TaskId;

namespace {

// Thrown by a task's step hook: the task dies as it begins the step.
struct TaskCrash {
  std::string cause;
};

struct Event {
  enum Kind { kFinished, kDied } kind;
  int ordinal = 0;
  uint32_t incarnation = 0;  // the life that ended
  std::string cause;
  // When it ended: the supervisor hears of it a message's trip later.
  double at = simgrid::s4u::Engine::get_clock();
};

}  // namespace

struct TaskSupervisor::State {
  struct Slot {
    TaskId task;
    s4u::ActorPtr actor;
    uint32_t incarnation = 0;
    bool alive = false;
    bool finished = false;
    bool died_in_step = false;
    bool has_log = false;
    strategy::TaskLog log;
    strategy::TaskOutcome outcome;
  };

  const run::Scenario& scenario;
  const ClusterPlan& plan;
  const std::vector<const ComputeDevice*> devices;  // shared_devices(plan)
  std::vector<s4u::Host*> hosts;
  MailboxTable& mailboxes;
  strategy::TrainingSetup& setup;
  std::size_t span_limit;
  const strategy::CheckpointPlan initial_plan;
  run::RecoveryPolicy policy;
  s4u::Mailbox* events = nullptr;
  s4u::ActorPtr supervisor;

  std::vector<Slot> slots;
  int64_t checkpoint_step = -1;  // the newest checkpoint the chief wrote
  std::vector<int64_t> checkpoint_optimizer_steps;
  bool rollback_pending = false;
  uint64_t spans_dropped = 0;
  std::exception_ptr error;
  std::string error_task;
  std::function<void(const std::string&)> on_event;
  // network.collectives: analytic: where ring members meet (scenario.cc
  // admits it without failures, so no meeting outlives a life).
  std::optional<ClosedFormCollectives> closed_form;

  void say(const std::string& line) const {
    if (on_event) on_event(line);
  }

  State(const run::Scenario& scenario, const ClusterPlan& plan, std::vector<s4u::Host*> hosts,
        MailboxTable& mailboxes, strategy::TrainingSetup& setup, std::size_t span_limit)
      : scenario(scenario),
        plan(plan),
        devices(shared_devices(plan)),
        hosts(std::move(hosts)),
        mailboxes(mailboxes),
        setup(setup),
        span_limit(span_limit),
        initial_plan(setup.checkpoints()),
        policy(scenario, plan.cluster) {
    const int tasks = plan.cluster.task_count();
    slots.resize(static_cast<std::size_t>(tasks));
    for (int t = 0; t < tasks; ++t) slots[t].task = plan.cluster.task_at(t);
    if (scenario.network.collectives == run::Collectives::kAnalytic) {
      std::vector<LinkFigures> links;
      for (const HostPlan& h : plan.hosts) links.push_back({h.link_latency, h.link_bandwidth});
      closed_form.emplace(std::move(links));
    }
  }

  std::string name(int t) const { return strategy::task_name(slots[t].task); }

  void report(Event event) {
    events->put_init(new Event(std::move(event)), 0)->detach([](void* unclaimed) {
      delete static_cast<Event*>(unclaimed);
    });
  }

  void keep_log(int t, strategy::Runtime& runtime) {
    Slot& slot = slots[t];
    spans_dropped += runtime.spans_dropped();
    slot.died_in_step = runtime.in_step();
    strategy::TaskLog log = runtime.take_log();
    log.host = plan.hosts[t].name + " (" + plan.hosts[t].machine + ")";
    log.isa = nn::kernels::kernels().level;
    if (!slot.has_log) {
      slot.log = std::move(log);
      slot.has_log = true;
    } else {
      strategy::append_log(slot.log, std::move(log));
    }
  }

  // Task t's costs in its life `incarnation`: a life of its own draws.
  TaskCosts costs_of(int t, uint32_t incarnation) {
    TaskCosts costs = plan.hosts[t].costs;
    costs.seed += 0xD1B54A32D192ED03ULL * incarnation;
    if (plan.one_host) costs.neighbours = plan.cluster.replicas() - 1;
    return costs;
  }

  // Starts the current incarnations of these tasks. Every one's mailboxes
  // take messages for it before any of them runs: a task created and run
  // before its peer's mailboxes have a receiver would see its first
  // messages wait for the peer to ask for them.
  void launch(const std::vector<int>& which, bool rejoin) {
    // One list for every task started now, shared: a copy per task would
    // be tasks squared (400 MB at 10,000 replicas).
    auto everyone = std::make_shared<std::vector<uint32_t>>();
    for (const Slot& s : slots) everyone->push_back(s.incarnation);
    for (const int t : which) {
      Slot& slot = slots[t];
      if (slot.incarnation > 0) mailboxes.renew(t, slot.incarnation);
      slot.alive = true;
      slot.finished = false;
      slot.actor = s4u::Actor::init(plan.hosts[t].name, hosts[t]);
      mailboxes.set_receiver(t, slot.actor);
    }
    for (const int t : which) start(t, rejoin, everyone);
  }

  void launch_all() {
    std::vector<int> all(slots.size());
    for (std::size_t t = 0; t < slots.size(); ++t) all[t] = static_cast<int>(t);
    launch(all, false);
  }

  void start(int t, bool rejoin, std::shared_ptr<const std::vector<uint32_t>> everyone) {
    const uint32_t incarnation = slots[t].incarnation;
    slots[t].actor->start([this, t, incarnation, rejoin, everyone] {
      SimRuntime runtime(slots[t].task, plan.cluster, scenario.fidelity, mailboxes, *devices[t],
                         plan.hosts[t].disk, plan.one_host ? plan.cores : 0,
                         plan.hosts[t].message_cpu, plan.hosts[t].input_cpu,
                         costs_of(t, incarnation), plan.hosts[t].share);
      runtime.set_span_limit(
          std::max<std::size_t>(span_limit / static_cast<std::size_t>(slots.size()), 100));
      runtime.set_incarnations(incarnation, everyone);
      runtime.set_devices(plan.hosts[t].device.devices);
      runtime.set_slowdown(run::task_slowdown(scenario, slots[t].task));
      runtime.set_rejoining(rejoin);
      if (plan.hosts[t].takes_messages_in_turn) runtime.take_messages_in_turn();
      if (closed_form) runtime.set_closed_form(&*closed_form);
      // Without faults no task is killed before it ends (but when another
      // fails the run): its sends may be kept until delivered.
      if (scenario.faults.empty()) runtime.keep_sends_until_delivered();
      runtime.set_step_hook([this, t](int64_t step) {
        if (policy.take_step_fault(t, step)) throw TaskCrash{"at_step " + std::to_string(step)};
      });
      bool finished = false;
      try {
        strategy::TaskOutcome outcome = strategy::run_task(runtime, setup);
        keep_log(t, runtime);
        slots[t].outcome = std::move(outcome);
        report({Event::kFinished, t, incarnation, ""});
        finished = true;
      } catch (const simgrid::ForcefulKillException&) {
        keep_log(t, runtime);  // what it did before it was killed stays in the run
        throw;
      } catch (const TaskCrash& crash) {
        keep_log(t, runtime);
        report({Event::kDied, t, incarnation, crash.cause});
      } catch (...) {
        // A task's error (not a fault) ends the simulation: the others
        // would wait for it forever.
        if (!error) {
          error = std::current_exception();
          error_task = name(t);
        }
        s4u::Actor::kill_all();
      }
      // Its last messages are still on their way (its log is closed: the
      // task has ended, as a process whose socket still sends).
      if (finished) runtime.deliver_kept_sends();
    });
  }

  // Kills the current life of task t (a fault, or a rollback).
  void kill(int t) {
    Slot& slot = slots[t];
    if (!slot.alive) return;
    slot.alive = false;
    mailboxes.set_receiver(t, nullptr);
    if (slot.actor) slot.actor->kill();
    slot.actor = nullptr;
  }

  // An injector's fault: kills the task if it runs, and says so.
  void strike(int t, const std::string& cause) {
    Slot& slot = slots[t];
    if (!slot.alive || rollback_pending) return;
    const uint32_t incarnation = slot.incarnation;
    kill(t);
    report({Event::kDied, t, incarnation, cause});
  }

  // One actor per timed fault and task, on the task's host: it sleeps the
  // intervals the policy's clock draws and strikes at each.
  void start_injectors() {
    for (run::FaultClock& clock : policy.timed_faults()) {
      const int t = clock.task();
      s4u::Actor::create("fault", hosts[t], [this, t, clock]() mutable {
        while (std::isfinite(clock.interval())) {
          s4u::this_actor::sleep_for(clock.interval());
          strike(t, clock.cause());
          clock.advance();
        }
      })->daemonize();
    }
  }

  // Where a rollback goes on from: the newest valid checkpoint of the run,
  // else what the run itself started from.
  strategy::CheckpointPlan rollback_plan() {
    strategy::CheckpointPlan next = initial_plan;
    std::shared_ptr<const checkpoint::LoadedCheckpoint> resume = initial_plan.resume;
    if (scenario.fidelity == strategy::Fidelity::kFull) {
      resume = run::rollback_checkpoint(next.folder, setup.checkpoint_layout(), resume);
    } else if (checkpoint_step >= 0) {
      // Timing fidelity has no values to restore, only where to go on from.
      auto step_only = std::make_shared<checkpoint::LoadedCheckpoint>();
      step_only->path =
          "(timing fidelity: the checkpoint of step " + std::to_string(checkpoint_step) + ")";
      step_only->info.step = checkpoint_step;
      step_only->state.step = checkpoint_step;
      step_only->state.optimizer_steps = checkpoint_optimizer_steps;
      resume = step_only;
    }
    if (resume) {
      next.resuming = true;
      next.resume = resume;
    }
    return next;
  }

  // Ends the run: the others would wait for a task that is not coming.
  void give_up(int t, const std::string& reason) {
    error = std::make_exception_ptr(Error(reason));
    error_task = name(t);
    s4u::Actor::kill_all();
  }

  // The policy's decision about a task's death, carried out after the
  // scenario's detect and restart seconds.
  void on_death(const Event& event) {
    const int t = event.ordinal;
    Slot& slot = slots[t];
    slot.alive = false;
    mailboxes.set_receiver(t, nullptr);
    if (rollback_pending) return;  // the rollback under way covers it
    const double delay = scenario.recovery.detect_seconds + scenario.recovery.restart_seconds;
    switch (policy.on_failure(t, event.cause, event.at, slot.died_in_step)) {
      case run::Recovery::kGiveUp:
        give_up(t, policy.give_up_reason(event.cause));
        return;
      case run::Recovery::kRejoin:
        policy.recovered(delay);
        say(policy.describe_latest("simulated s"));
        rejoin_later(t, delay);
        return;
      case run::Recovery::kRollback:
        policy.recovered(delay);
        roll_back_later();
        return;
    }
  }

  void rejoin_later(int t, double delay) {
    const uint32_t next = ++slots[t].incarnation;
    s4u::Actor::create("restart", hosts[t], [this, t, next, delay] {
      s4u::this_actor::sleep_for(delay);
      // A rollback meanwhile restarted every task already.
      if (slots[t].incarnation != next || slots[t].alive) return;
      std::vector<bool> ended;
      for (const Slot& s : slots) ended.push_back(s.finished);
      if (policy.nothing_to_rejoin(ended)) {
        report({Event::kFinished, t, next, ""});
        return;
      }
      launch({t}, true);
    });
  }

  // Every task stopped once the failure is noticed, and all started again
  // from the rollback's checkpoint once the platform has restarted them.
  void roll_back_later() {
    rollback_pending = true;
    const double detect = scenario.recovery.detect_seconds;
    const double restart = scenario.recovery.restart_seconds;
    s4u::Actor::create("rollback", hosts[0], [this, detect, restart] {
      s4u::this_actor::sleep_for(detect);
      for (int u = 0; u < static_cast<int>(slots.size()); ++u) {
        kill(u);
        ++slots[u].incarnation;
        slots[u].finished = false;
      }
      s4u::this_actor::sleep_for(restart);
      setup.set_checkpoints(rollback_plan());
      const auto& resume = setup.checkpoints().resume;
      policy.rolled_back(resume ? resume->info.step : 0);
      say(policy.describe_latest("simulated s"));
      rollback_pending = false;
      launch_all();
    });
  }

  void supervise() {
    launch_all();
    start_injectors();
    int finished = 0;
    while (finished < static_cast<int>(slots.size())) {
      std::unique_ptr<Event> event(events->get<Event>());
      Slot& slot = slots[event->ordinal];
      if (event->incarnation != slot.incarnation) continue;  // a life already over
      if (event->kind == Event::kFinished) {
        slot.alive = false;
        slot.finished = true;
      } else {
        on_death(*event);
        if (error) return;  // every other actor was killed: the run is over
      }
      finished = static_cast<int>(
          std::count_if(slots.begin(), slots.end(), [](const Slot& s) { return s.finished; }));
    }
  }
};

TaskSupervisor::TaskSupervisor(const run::Scenario& scenario, const ClusterPlan& plan,
                               std::vector<s4u::Host*> hosts, MailboxTable& mailboxes,
                               strategy::TrainingSetup& setup, std::size_t span_limit,
                               std::function<void(const std::string&)> on_event)
    : state_(
          std::make_unique<State>(scenario, plan, std::move(hosts), mailboxes, setup, span_limit)) {
  State& s = *state_;
  s.on_event = std::move(on_event);
  auto progress = setup.on_chief_step;
  setup.on_chief_step = [&s, progress](int64_t done, int64_t total) {
    s.policy.chief_reached(done);
    if (progress) progress(done, total);
  };
  setup.on_checkpoint = [&s](int64_t step, const std::vector<int64_t>& optimizer_steps) {
    s.checkpoint_step = step;
    s.checkpoint_optimizer_steps = optimizer_steps;
  };
}

TaskSupervisor::~TaskSupervisor() = default;

void TaskSupervisor::start() {
  State& s = *state_;
  s.events = s4u::Mailbox::by_name("supervisor");
  s.supervisor = s4u::Actor::create("supervisor", s.hosts[0], [&s] { s.supervise(); });
  s.events->set_receiver(s.supervisor);
}

std::string TaskSupervisor::unfinished() const {
  std::string names;
  for (std::size_t t = 0; t < state_->slots.size(); ++t) {
    if (state_->slots[t].finished) continue;
    names += (names.empty() ? "" : ", ") + state_->name(static_cast<int>(t));
  }
  return names;
}

SupervisedRun TaskSupervisor::finish() {
  State& s = *state_;
  s.events->set_receiver(nullptr);
  if (s.error) {
    try {
      std::rethrow_exception(s.error);
    } catch (const InputError&) {
      throw;
    } catch (const std::exception& e) {
      throw Error(s.error_task + " failed: " + e.what());
    }
  }
  SupervisedRun run;
  for (State::Slot& slot : s.slots) {
    run.logs.push_back(std::move(slot.log));
    run.outcomes.push_back(std::move(slot.outcome));
  }
  run.spans_dropped = s.spans_dropped;
  run.failures = s.policy.failures();
  return run;
}

}  // namespace distlab::sim
