#include "strategy/synchronous.h"

#include <vector>

#include "strategy/ring_allreduce.h"

namespace distlab::strategy {

TaskOutcome train_synchronously(Runtime& runtime, const TrainingSetup& setup) {
  Replica replica(runtime, setup);
  std::vector<TaskId> ring;
  for (int r = 0; r < replica.replicas(); ++r) ring.push_back(runtime.cluster().replica(r));
  const int64_t bucket_floats = setup.strategy().bucket_bytes / static_cast<int64_t>(sizeof(float));
  const int64_t segment_floats =
      setup.strategy().segment_bytes / static_cast<int64_t>(sizeof(float));

  for (int64_t step = 0; step < replica.total_steps(); ++step) {
    runtime.begin_step(step);
    const double loss = replica.compute_gradients(step, LossScale::kGlobalBatch);
    bucketed_allreduce(runtime, ring, replica.rank(), replica.gradients(), bucket_floats,
                       segment_floats, step);
    replica.apply_gradients();
    replica.after_step(step, loss);
    runtime.end_step(loss);
  }
  return replica.finish();
}

}  // namespace distlab::strategy
