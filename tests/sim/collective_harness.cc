#include "collective_harness.h"

#include <algorithm>
#include <exception>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>

#include "sim/platform.h"
#include "sim/sim_runtime.h"

namespace distlab::testing {

CollectiveRun run_collective(int tasks, double latency, double bandwidth,
                             strategy::Fidelity fidelity,
                             const std::function<void(strategy::Runtime&, int rank)>& body,
                             const CollectiveOptions& options) {
  int argc = 2;
  char name[] = "collective";
  char log[] = "--log=root.thres:critical";
  char* argv[] = {name, log, nullptr};
  simgrid::s4u::Engine engine(&argc, argv);
  sim::configure_network_model(run::NetworkModel::kCm02);

  sim::ClusterPlan plan;
  plan.cluster = {.chiefs = 0, .workers = tasks, .ps = 0};
  // Compute is free: the collective's own time is what is measured.
  const sim::ComputeDevice instant = sim::uniform_device("instant", 1e30, 1e30, 0);
  for (int t = 0; t < tasks; ++t) {
    plan.hosts.push_back({.name = "host-" + std::to_string(t),
                          .machine = "test",
                          .device = instant,
                          .link_bandwidth = bandwidth,
                          .link_latency = latency / 2});
  }
  const auto hosts = sim::build_platform(plan);
  const sim::MailboxTable mailboxes(tasks);
  CollectiveRun run;
  run.finished_at.resize(tasks);
  run.bytes_sent.resize(tasks);
  run.bytes_received.resize(tasks);
  std::exception_ptr failure;
  std::vector<simgrid::s4u::ActorPtr> actors;
  for (int t = 0; t < tasks; ++t) {
    actors.push_back(simgrid::s4u::Actor::create(plan.hosts[t].name, hosts[t], [&, t] {
      sim::SimRuntime runtime({strategy::Role::kWorker, t}, plan.cluster, fidelity, mailboxes,
                              instant, sim::Disk{});
      if (options.messages_in_turn) runtime.take_messages_in_turn();
      // No task is killed here but when another fails the run.
      if (options.keep_sends) runtime.keep_sends_until_delivered();
      try {
        body(runtime, t);
      } catch (const simgrid::ForcefulKillException&) {
        throw;  // SimGrid unwinding an actor that kill_all() stopped
      } catch (...) {
        failure = std::current_exception();
        simgrid::s4u::Actor::kill_all();
        return;
      }
      const strategy::TaskLog log = runtime.take_log();
      run.seconds = std::max(run.seconds, log.finished_at);
      run.finished_at[t] = log.finished_at;
      run.bytes_sent[t] = log.bytes_sent;
      run.bytes_received[t] = log.bytes_received;
      runtime.deliver_kept_sends();  // the task's last messages, still on their way
    }));
  }
  for (int t = 0; t < tasks; ++t) mailboxes.set_receiver(t, actors[t]);
  engine.run();
  mailboxes.release_receivers();
  if (failure) std::rethrow_exception(failure);
  return run;
}

}  // namespace distlab::testing
