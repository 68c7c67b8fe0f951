// A runtime's step observer hears of each step as it begins, after the
// step hook (a fault that strikes as a step begins leaves it unbegun), and
// as it ends, with the step's record and the examples trained on in it.
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
  void transmit(TaskId, Message) override { FAIL("no message is sent"); }
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
