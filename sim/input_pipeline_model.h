// A task's input pipeline on its host's CPU, as tf.data runs it: the
// per-example stages (decoding, resizing, augmenting) spread over
// `threads` cores, and, with prefetch, the next batch prepared while the
// current one trains. It says when each batch is ready; the task waits for
// it when its step is quicker than the pipeline.
#pragma once

#include <cstdint>
#include <optional>

#include "sim/machine.h"
#include "strategy/config.h"

namespace distlab::sim {

class InputPipelineModel {
 public:
  InputPipelineModel(const strategy::InputPipeline& input, InputCpu cpu);

  // Seconds the pipeline takes to prepare a batch of `examples`: each
  // thread prepares its share of the examples one after another, at the
  // stages' cost scaled from the measuring core's clock to this CPU's.
  double batch_seconds(int64_t examples) const;
  // The task asks for its next batch of `examples` at `now`: when it is
  // ready. With prefetch, the batch after it starts as this one is taken.
  double ready_at(double now, int64_t examples);

  int threads() const { return threads_; }

 private:
  double seconds_per_example_;  // on one of this CPU's cores
  int threads_;
  bool prefetch_;
  std::optional<double> next_ready_;  // prefetch: when the batch in preparation is ready
};

}  // namespace distlab::sim
