// The recovery policy both backends carry out: when faults strike (one
// seeded clock per fault and task), that each fault at a step fires once,
// who rejoins and who rolls back, when there is nothing left to rejoin,
// what a rollback loses, the restart budget, and where a rollback goes on
// from.
#include "run/recovery.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>

#include "checkpoint/checkpoint_store.h"
#include "nn/model.h"
#include "nn/random.h"

using namespace distlab;
using run::Recovery;
using run::RecoveryPolicy;
using strategy::Role;

namespace {

namespace fs = std::filesystem;

const fs::path kSource = DISTLAB_SOURCE_DIR;

run::Scenario scenario(const std::string& file, std::vector<run::Override> overrides) {
  return run::load_scenario((kSource / "scenarios" / file).string(), overrides);
}

// The taxi lab: async parameter server, chief + 4 workers + 1 ps.
run::Scenario ps_lab(const std::string& faults, const std::string& mode = "async") {
  return scenario("ps_4workers.yaml", {{"faults", faults}, {"strategy.mode", mode}});
}

}  // namespace

TEST_CASE("recovery: each task has its own failure clock, drawn from the scenario's seed") {
  const run::Scenario s = ps_lab("[{mtbf_hours: 2}]");
  const RecoveryPolicy policy(s, s.cluster.spec);
  const std::vector<run::FaultClock> clocks = policy.timed_faults();
  REQUIRE(clocks.size() == 6);  // chief, 4 workers, ps
  for (int t = 0; t < 6; ++t) {
    const run::FaultClock& clock = clocks[t];
    CHECK(clock.task() == t);
    CHECK(clock.cause() == "mtbf");
    // The first draw of fault 0's process for task t.
    nn::Rng rng(nn::derive_seed(0, {0xfa17, 0, static_cast<uint64_t>(t)}));
    const double u = rng.uniform();
    CHECK(clock.due() == -7200.0 * std::log1p(-u));
    CHECK(clock.interval() == clock.due());
  }
  CHECK(clocks[1].due() != clocks[2].due());
  // Another policy of the same scenario draws the same times: the simulator
  // and the launcher each build their own.
  const std::vector<run::FaultClock> again = RecoveryPolicy(s, s.cluster.spec).timed_faults();
  for (int t = 0; t < 6; ++t) CHECK(again[t].due() == clocks[t].due());
  // Another seed, other times.
  run::Scenario reseeded = s;
  reseeded.seed = 1;
  CHECK(RecoveryPolicy(reseeded, s.cluster.spec).timed_faults()[0].due() != clocks[0].due());
}

TEST_CASE("recovery: a failure clock strikes at exponential intervals of the mean") {
  const run::Scenario s = ps_lab("[{task: worker:1, mtbf_hours: 1}]");
  run::FaultClock clock = RecoveryPolicy(s, s.cluster.spec).timed_faults().at(0);
  CHECK(clock.task() == s.cluster.spec.ordinal({Role::kWorker, 1}));
  double previous = 0, sum = 0;
  const int draws = 4000;
  for (int i = 0; i < draws; ++i) {
    REQUIRE(clock.due() > previous);
    REQUIRE(clock.due() == previous + clock.interval());
    sum += clock.interval();
    previous = clock.due();
    clock.advance();
  }
  // The mean of 4,000 draws is within 5% of 3,600 s (its standard error is
  // 1.6%); the seed is fixed, so this does not flake.
  CHECK(sum / draws == Approx(3600).epsilon(0.05));
}

TEST_CASE("recovery: a fault at a time strikes once, and only its task") {
  const run::Scenario s = ps_lab("[{task: ps:0, at_seconds: 20}]");
  const std::vector<run::FaultClock> clocks = RecoveryPolicy(s, s.cluster.spec).timed_faults();
  REQUIRE(clocks.size() == 1);
  run::FaultClock clock = clocks[0];
  CHECK(clock.task() == s.cluster.spec.ordinal({Role::kPs, 0}));
  CHECK(clock.cause() == "at_seconds 20");
  CHECK(clock.due() == 20);
  clock.advance();
  CHECK(std::isinf(clock.due()));
  CHECK(std::isinf(clock.interval()));
}

TEST_CASE("recovery: a fault at a step fires once, even if a rollback passes it again") {
  const run::Scenario s = ps_lab("[{task: worker:2, at_step: 12}, {task: worker:2, at_step: 30}]");
  RecoveryPolicy policy(s, s.cluster.spec);
  const int worker2 = s.cluster.spec.ordinal({Role::kWorker, 2});
  CHECK(policy.step_faults(worker2) == std::vector<int64_t>{12, 30});
  CHECK(policy.step_faults(0).empty());
  CHECK(policy.timed_faults().empty());
  CHECK_FALSE(policy.take_step_fault(worker2, 11));
  CHECK_FALSE(policy.take_step_fault(0, 12));
  CHECK(policy.take_step_fault(worker2, 12));
  CHECK_FALSE(policy.take_step_fault(worker2, 12));
  CHECK(policy.step_faults(worker2) == std::vector<int64_t>{30});
}

TEST_CASE("recovery: an asynchronous worker rejoins alone, everyone else rolls the run back") {
  const run::Scenario async = ps_lab("[]");
  RecoveryPolicy policy(async, async.cluster.spec);
  const int worker1 = async.cluster.spec.ordinal({Role::kWorker, 1});
  const int ps0 = async.cluster.spec.ordinal({Role::kPs, 0});
  CHECK(policy.on_failure(worker1, "mtbf", 3.5, true) == Recovery::kRejoin);
  CHECK(policy.on_failure(0, "mtbf", 4.0, false) == Recovery::kRejoin);  // the chief trains too
  CHECK(policy.on_failure(ps0, "signal 9", 5.0, std::nullopt) == Recovery::kRollback);
  REQUIRE(policy.failures().size() == 3);
  const run::Failure& rejoin = policy.failures()[0];
  CHECK(rejoin.task == "worker:1");
  CHECK(rejoin.cause == "mtbf");
  CHECK(rejoin.at == 3.5);
  CHECK(rejoin.recovery == "rejoin");
  CHECK(rejoin.restored_step == -1);
  CHECK(rejoin.lost_steps == 1);                // the step it was in
  CHECK(policy.failures()[1].lost_steps == 0);  // between steps
  CHECK(policy.failures()[2].recovery == "rollback");

  const run::Scenario sync = ps_lab("[]", "sync");
  RecoveryPolicy sync_policy(sync, sync.cluster.spec);
  CHECK(sync_policy.on_failure(worker1, "mtbf", 1, true) == Recovery::kRollback);
  const run::Scenario ring = scenario("mnist_cnn_sync.yaml", {});
  RecoveryPolicy ring_policy(ring, ring.cluster.spec);
  CHECK(ring_policy.on_failure(1, "at_step 3", 1, true) == Recovery::kRollback);
}

TEST_CASE("recovery: once every parameter server has ended, there is nothing to rejoin") {
  const run::Scenario two_servers =
      scenario("ps_4workers.yaml", {{"faults", "[]"}, {"cluster.ps", "2"}});
  const strategy::ClusterSpec& spec = two_servers.cluster.spec;
  RecoveryPolicy policy(two_servers, spec);
  std::vector<bool> ended(static_cast<std::size_t>(spec.task_count()), false);
  CHECK_FALSE(policy.nothing_to_rejoin(ended));
  // Workers and the chief that are done hold nothing a rejoiner needs.
  for (int t = 0; t < spec.task_count(); ++t) ended[t] = spec.task_at(t).role != Role::kPs;
  CHECK_FALSE(policy.nothing_to_rejoin(ended));
  ended[spec.ordinal({Role::kPs, 0})] = true;
  CHECK_FALSE(policy.nothing_to_rejoin(ended));  // one server still serves
  ended[spec.ordinal({Role::kPs, 1})] = true;
  CHECK(policy.nothing_to_rejoin(ended));
}

TEST_CASE("recovery: a rollback loses the chief's steps since the checkpoint it goes on from") {
  const run::Scenario s = scenario("mnist_cnn_sync.yaml", {});
  RecoveryPolicy policy(s, s.cluster.spec);
  policy.chief_reached(37);
  REQUIRE(policy.on_failure(1, "mtbf", 10, true) == Recovery::kRollback);
  policy.rolled_back(30);
  policy.recovered(0.25);
  CHECK(policy.failures().back().restored_step == 30);
  CHECK(policy.failures().back().lost_steps == 7);
  CHECK(policy.failures().back().recovery_seconds == 0.25);
  CHECK(policy.describe_latest("s") ==
        "worker:0 died (mtbf) at 10.00 s; every task went back to step 30 (7 steps lost)");
  // The run goes on from step 30: a second failure at 35 loses 5.
  policy.chief_reached(35);
  REQUIRE(policy.on_failure(0, "mtbf", 12, true) == Recovery::kRollback);
  policy.rolled_back(30);
  CHECK(policy.failures().back().lost_steps == 5);
  // Without a checkpoint, back to step 0.
  policy.chief_reached(4);
  REQUIRE(policy.on_failure(0, "mtbf", 13, true) == Recovery::kRollback);
  policy.rolled_back(0);
  CHECK(policy.failures().back().lost_steps == 4);
}

TEST_CASE("recovery: the failure after recovery.max_restarts ends the run") {
  const run::Scenario s = scenario("ps_4workers.yaml", {{"recovery.max_restarts", "2"}});
  RecoveryPolicy policy(s, s.cluster.spec);
  CHECK(policy.on_failure(1, "mtbf", 1, true) == Recovery::kRejoin);
  CHECK(policy.on_failure(2, "mtbf", 2, true) == Recovery::kRejoin);
  CHECK(policy.on_failure(3, "mtbf", 3, true) == Recovery::kGiveUp);
  CHECK(policy.failures().size() == 2);
  CHECK(policy.give_up_reason("mtbf") ==
        "it failed again (mtbf) after 2 restarts; the run gives up (recovery.max_restarts)");
  CHECK(policy.describe_latest("simulated s") ==
        "worker:1 died (mtbf) at 2.00 simulated s; it rejoins alone, the others go on");
}

TEST_CASE("recovery: a rollback goes on from the newest valid checkpoint, else the run's start") {
  const fs::path folder = fs::temp_directory_path() /
                          ("distlab-recovery-" + std::to_string(::getpid()) + "/checkpoints");
  fs::remove_all(folder.parent_path());
  const nn::Model model(nn::load_model_spec((kSource / "scenarios/models/mnist_cnn.yaml").string()),
                        0);
  const checkpoint::CheckpointLayout layout(model);
  auto started_from = std::make_shared<checkpoint::LoadedCheckpoint>();
  started_from->info.step = 5;
  // No folder yet: where the run started.
  CHECK(run::rollback_checkpoint(folder.string(), layout, started_from) == started_from);
  CHECK(run::rollback_checkpoint(folder.string(), layout, nullptr) == nullptr);
  CHECK(run::rollback_checkpoint("", layout, started_from) == started_from);

  checkpoint::TrainingState state;
  state.step = 20;
  state.parameters.assign(static_cast<std::size_t>(layout.parameter_floats()), 0.5f);
  state.model_state.assign(static_cast<std::size_t>(layout.state_floats()), 0.0f);
  state.optimizer_slots.assign(layout.slots(), state.parameters);
  state.optimizer_steps = {20};
  const checkpoint::CheckpointInfo info{.step = 20};
  checkpoint::save_checkpoint(folder.string(), 20,
                              checkpoint::encode_checkpoint(layout, state, info), 3);
  const auto found = run::rollback_checkpoint(folder.string(), layout, started_from);
  REQUIRE(found != nullptr);
  CHECK(found->info.step == 20);
  CHECK(found->path.find("step-000000020") != std::string::npos);
  fs::remove_all(folder.parent_path());
}
