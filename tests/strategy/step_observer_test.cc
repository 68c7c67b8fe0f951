// A runtime's step observer hears of each step as it begins, after the
// step hook (a fault that strikes as a step begins leaves it unbegun), and
// as it ends, with the step's record and the examples trained on in it.
// Work between two steps (a checkpoint) comes after the step before is
// heard to end, and is accounted to the step after. The log's totals and
// a step's record are up to date whenever the log is read.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "strategy/runtime.h"

using namespace distlab;
using namespace distlab::strategy;

namespace {

// A runtime of one task whose clock moves a second at each reading; it
// sends and receives nothing.
class ClockRuntime : public Runtime {
 public:
  ClockRuntime() : Runtime({Role::kChief, 0}, ClusterSpec{.chiefs = 1}, Fidelity::kFull) {}
  double now() const override { return clock_++; }
  double cpu_now() const override { return 0; }

 protected:
  void transmit(TaskId, Message&&) override { FAIL("no message is sent"); }
  Message receive(Tag) override { throw Error("no message comes"); }
  void execute(const Work&, const std::function<void()>& work_fn) override { work_fn(); }
  void store(uint64_t, const std::function<void()>& io_fn) override { io_fn(); }
  void hold(double) override {}
  void begin_background(const std::vector<Work>&, double, const BackgroundFn&) override {
    FAIL("nothing computes in the background");
  }
  double await_background(std::size_t) override { return 0; }

 private:
  mutable double clock_ = 0;
};

struct Heard : Runtime::StepObserver {
  std::vector<std::string> events;
  void began(int64_t step) override { events.push_back("began " + std::to_string(step)); }
  void ended(const StepRecord& record, int64_t examples) override {
    events.push_back("ended " + std::to_string(record.step) + " at " +
                     std::to_string(static_cast<int>(record.end)) + ", loss " +
                     std::to_string(record.loss).substr(0, 4) + ", " + std::to_string(examples) +
                     " examples");
  }
};

struct Crash {};

}  // namespace

TEST_CASE("A step observer hears each step begin after the step hook, and end with its examples") {
  ClockRuntime runtime;
  Heard heard;
  runtime.set_step_observer(&heard);
  runtime.set_step_hook([](int64_t step) {
    if (step == 2) throw Crash{};
  });
  runtime.count_examples(7);  // outside a step: no step's
  runtime.begin_step(0);
  runtime.count_examples(64);
  runtime.end_step(0.25);
  runtime.begin_step(1);
  runtime.count_examples(32);
  runtime.count_examples(32);
  runtime.end_step(0.5);
  CHECK_THROWS_AS(runtime.begin_step(2), Crash);
  CHECK(heard.events == std::vector<std::string>{"began 0", "ended 0 at 1, loss 0.25, 64 examples",
                                                 "began 1",
                                                 "ended 1 at 3, loss 0.50, 64 examples"});
  CHECK(runtime.log().examples == 7 + 64 + 64);
  CHECK(runtime.log().steps.size() == 2);
}

TEST_CASE("Work between steps comes after the step before is kept, and is the next step's") {
  ClockRuntime runtime;  // each reading of the clock a second later
  Heard heard;
  runtime.set_step_observer(&heard);
  runtime.begin_step(0);   // from 0
  runtime.end_step(0.25);  // to 1
  runtime.begin_step(1);   // from 2
  runtime.end_step(0.5);   // to 3
  std::vector<std::string> heard_before_work;
  runtime.between_steps(2, [&] {  // from 4
    heard_before_work = heard.events;
    CHECK(runtime.in_step());
    CHECK_THROWS_AS(runtime.between_steps(3, [] {}), Error);
    runtime.checkpoint("checkpoint step 2", 100, [] {});  // from 5 to 6
  });
  CHECK_FALSE(runtime.in_step());
  // A task killed while writing the checkpoint has kept step 1's record.
  CHECK(heard_before_work.back() == "ended 1 at 3, loss 0.50, 0 examples");
  CHECK(runtime.log().steps.size() == 2);
  runtime.begin_step(2);
  runtime.end_step(0.75);  // to 7
  REQUIRE(runtime.log().steps.size() == 3);
  const StepRecord& step = runtime.log().steps.back();
  CHECK(step.step == 2);
  CHECK(step.start == 4);
  CHECK(step.end == 7);
  CHECK(step.checkpoint_seconds == 1);
  CHECK(step.phases[index_of(Phase::kCheckpoint)] == 1);
  CHECK(runtime.log().checkpoint_seconds == 1);
}

TEST_CASE("Work between steps that no step follows is the run's alone") {
  ClockRuntime runtime;
  runtime.begin_step(0);
  runtime.end_step();
  runtime.between_steps(1, [&] { runtime.checkpoint("checkpoint step 1", 100, [] {}); });
  CHECK(runtime.log().steps.size() == 1);
  CHECK(runtime.log().steps[0].checkpoint_seconds == 0);
  CHECK(runtime.log().checkpoint_seconds == 1);
  CHECK(runtime.log().checkpoints == 1);
}

TEST_CASE("The log's totals and the open step's are up to date whenever the log is read") {
  ClockRuntime runtime;  // each reading of the clock a second later
  Work update;
  update.phase = Phase::kOptimizer;
  const auto optimizer = index_of(Phase::kOptimizer);
  runtime.compute(update, [] {});  // 0 to 1, before any step: the run's alone
  runtime.begin_step(0);           // from 2
  runtime.compute(update, [] {});  // 3 to 4
  CHECK(runtime.log().compute_seconds == 2);
  CHECK(runtime.log().phases[optimizer] == 2);
  runtime.compute(update, [] {});    // 5 to 6
  runtime.end_step();                // to 7
  runtime.between_steps(1, [&] {     // from 8
    runtime.compute(update, [] {});  // 9 to 10: the next step's
  });
  runtime.begin_step(1);
  runtime.end_step();  // to 11
  const TaskLog& log = runtime.log();
  REQUIRE(log.steps.size() == 2);
  CHECK(log.steps[0].compute_seconds == 2);
  CHECK(log.steps[0].phases[optimizer] == 2);
  CHECK(log.steps[0].phases[index_of(Phase::kOther)] == 3);
  CHECK(log.steps[1].start == 8);
  CHECK(log.steps[1].compute_seconds == 1);
  CHECK(log.steps[1].phases[index_of(Phase::kOther)] == 2);
  CHECK(log.compute_seconds == 4);
  CHECK(log.phases[optimizer] == 4);
  CHECK(log.phases[index_of(Phase::kOther)] == 0);  // the steps' rest is theirs
}
