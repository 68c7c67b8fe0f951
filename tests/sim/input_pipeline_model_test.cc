// The input pipeline's arithmetic: a batch's time on a host's CPU, and when
// each batch is ready with and without prefetch.
#include "sim/input_pipeline_model.h"

#include <catch2/catch.hpp>

using Catch::Matchers::WithinRel;
using distlab::sim::InputCpu;
using distlab::sim::InputPipelineModel;
using distlab::strategy::InputPipeline;

namespace {

// 1,000 + 500 microseconds an example on a 2 GHz core.
InputPipeline two_stages() {
  InputPipeline input;
  input.stages = {{"decode", 1000}, {"augment", 500}};
  input.measured_ghz = 2.0;
  return input;
}

}  // namespace

TEST_CASE("a batch takes each thread's share of its examples, scaled to the host's clock") {
  InputPipeline input = two_stages();
  // Every vCPU of a 4 GHz host of 4: 10 examples are 3 on the busiest
  // thread, at half the measured time each.
  const InputPipelineModel all(input, InputCpu{.ghz = 4.0, .vcpus = 4});
  CHECK(all.threads() == 4);
  CHECK_THAT(all.batch_seconds(10), WithinRel(3 * 1500e-6 * 0.5, 1e-12));
  // Fewer threads than vCPUs; more than it has are its vCPUs.
  input.threads = 2;
  CHECK_THAT(InputPipelineModel(input, {.ghz = 2.0, .vcpus = 4}).batch_seconds(10),
             WithinRel(5 * 1500e-6, 1e-12));
  input.threads = 64;
  CHECK(InputPipelineModel(input, {.ghz = 2.0, .vcpus = 4}).threads() == 4);
  // Without a measuring clock the stages are taken as they are.
  input.measured_ghz = 0;
  input.threads = 1;
  CHECK_THAT(InputPipelineModel(input, {.ghz = 3.0, .vcpus = 4}).batch_seconds(2),
             WithinRel(2 * 1500e-6, 1e-12));
}

TEST_CASE("preprocessed records leave out the stages done offline") {
  InputPipeline input = two_stages();
  input.offline = {"decode"};
  CHECK(input.microseconds_per_example() == 1500);
  input.preprocessed = true;
  CHECK(input.microseconds_per_example() == 500);
}

TEST_CASE("with prefetch the next batch is prepared while the step runs") {
  InputPipeline input = two_stages();
  input.threads = 1;
  InputPipelineModel slow_input(input, {.ghz = 2.0, .vcpus = 8});
  const double batch = slow_input.batch_seconds(4);  // 6 ms
  // The first batch is prepared from the first request on.
  CHECK_THAT(slow_input.ready_at(0, 4), WithinRel(batch, 1e-12));
  // A step of 1 ms: the next batch, started when the first was taken at
  // 6 ms, is ready at 12 ms; the step asks at 7 ms and waits 5 ms.
  CHECK_THAT(slow_input.ready_at(batch + 1e-3, 4), WithinRel(2 * batch, 1e-12));
  // A step longer than the pipeline finds its batch ready: no wait.
  InputPipelineModel fast_input(input, {.ghz = 2.0, .vcpus = 8});
  const double first = fast_input.ready_at(0, 4);
  const double asked = first + 2 * batch;
  CHECK(fast_input.ready_at(asked, 4) < asked);
  // Without prefetch every batch is prepared when asked for.
  input.prefetch = false;
  InputPipelineModel on_demand(input, {.ghz = 2.0, .vcpus = 8});
  CHECK_THAT(on_demand.ready_at(1.0, 4), WithinRel(1.0 + batch, 1e-12));
  CHECK_THAT(on_demand.ready_at(5.0, 4), WithinRel(5.0 + batch, 1e-12));
}
