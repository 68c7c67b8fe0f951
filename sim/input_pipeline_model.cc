#include "sim/input_pipeline_model.h"

#include <algorithm>

namespace distlab::sim {

InputPipelineModel::InputPipelineModel(const strategy::InputPipeline& input, InputCpu cpu)
    : seconds_per_example_(
          input.microseconds_per_example() * 1e-6 *
          (input.measured_ghz > 0 && cpu.ghz > 0 ? input.measured_ghz / cpu.ghz : 1.0)),
      threads_(std::max(
          1, input.threads > 0 ? std::min(input.threads, std::max(cpu.vcpus, 1)) : cpu.vcpus)),
      prefetch_(input.prefetch) {}

double InputPipelineModel::batch_seconds(int64_t examples) const {
  const int64_t per_thread = (examples + threads_ - 1) / threads_;
  return static_cast<double>(per_thread) * seconds_per_example_;
}

double InputPipelineModel::ready_at(double now, int64_t examples) {
  if (!prefetch_) return now + batch_seconds(examples);
  // The first batch is prepared from the first request on; each later one
  // was started when the one before it was taken.
  const double ready = next_ready_ ? *next_ready_ : now + batch_seconds(examples);
  next_ready_ = std::max(now, ready) + batch_seconds(examples);
  return ready;
}

}  // namespace distlab::sim
