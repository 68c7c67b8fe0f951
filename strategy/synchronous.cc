#include "strategy/synchronous.h"

#include <vector>

#include "common/error.h"
#include "strategy/checkpointing.h"
#include "strategy/ring_allreduce.h"

namespace distlab::strategy {
namespace {

// A replica's part of a restore: everything but the step, in one message:
// parameters, moving statistics, each optimizer slot, then the schedule's
// learning rate where the model has one.
int64_t restore_floats(const TrainingSetup& setup) {
  const checkpoint::CheckpointLayout& layout = setup.checkpoint_layout();
  return layout.parameter_floats() * static_cast<int64_t>(1 + layout.slots()) +
         layout.state_floats() + (setup.spec().reduce_lr_on_plateau ? 1 : 0);
}

checkpoint::TrainingState gather_replica_state(Runtime&, Replica& chief, int64_t steps_done) {
  // Every replica holds the same weights and optimizer state: the chief's
  // own are the run's.
  return chief.training_state(steps_done);
}

void scatter_replica_state(Runtime& runtime, Replica& chief,
                           const checkpoint::TrainingState& state) {
  std::vector<float> packed;
  if (runtime.full_fidelity()) {
    packed = state.parameters;
    packed.insert(packed.end(), state.model_state.begin(), state.model_state.end());
    for (const auto& slot : state.optimizer_slots)
      packed.insert(packed.end(), slot.begin(), slot.end());
    if (chief.setup().spec().reduce_lr_on_plateau) packed.push_back(chief.learning_rate());
  }
  const int64_t floats = restore_floats(chief.setup());
  for (int r = 1; r < chief.replicas(); ++r) {
    Message m = make_message(Tag::kRestore, state.step, floats,
                             runtime.full_fidelity() ? packed.data() : nullptr);
    m.version = state.optimizer_steps.empty() ? 0 : state.optimizer_steps.front();
    runtime.send(runtime.cluster().replica(r), std::move(m));
  }
}

int64_t receive_replica_state(Runtime& runtime, Replica& replica) {
  Message m = runtime.recv(runtime.cluster().replica(0), Tag::kRestore);
  if (m.bytes != static_cast<uint64_t>(restore_floats(replica.setup())) * sizeof(float)) {
    throw Error(task_name(runtime.self()) + ": the chief's restore holds " +
                std::to_string(m.bytes) + " bytes where " +
                std::to_string(restore_floats(replica.setup()) * 4) + " were expected");
  }
  if (runtime.full_fidelity()) {
    const checkpoint::CheckpointLayout& layout = replica.setup().checkpoint_layout();
    checkpoint::TrainingState state;
    state.step = m.step;
    auto take = [&, at = m.values.begin()](int64_t n) mutable {
      std::vector<float> part(at, at + n);
      at += n;
      return part;
    };
    state.parameters = take(layout.parameter_floats());
    state.model_state = take(layout.state_floats());
    for (std::size_t s = 0; s < layout.slots(); ++s) {
      state.optimizer_slots.push_back(take(layout.parameter_floats()));
    }
    state.optimizer_steps = {m.version};
    // The rate only: the chief's schedule alone observes.
    if (replica.setup().spec().reduce_lr_on_plateau) {
      state.schedule = checkpoint::ScheduleState{.learning_rate = take(1).front()};
    }
    replica.restore(state);
  }
  return m.step;
}

// Keras' ReduceLROnPlateau, agreed: at the end of an epoch the chief's
// schedule has observed its evaluation (Replica::after_step), and every
// other replica takes the rate it set before the next step.
void share_learning_rate(Runtime& runtime, Replica& replica, int64_t step) {
  const ClusterSpec& cluster = runtime.cluster();
  if (replica.is_chief()) {
    const float rate = replica.learning_rate();
    for (int r = 1; r < replica.replicas(); ++r) {
      runtime.send(cluster.replica(r), make_message(Tag::kLearningRate, step, 1,
                                                    runtime.full_fidelity() ? &rate : nullptr));
    }
    return;
  }
  const Message m = runtime.recv(cluster.replica(0), Tag::kLearningRate);
  if (runtime.full_fidelity()) {
    replica.set_learning_rate(learning_rate_in(m, task_name(runtime.self())));
  }
}

}  // namespace

CheckpointHooks synchronous_checkpoint_hooks() {
  return {.gather = gather_replica_state,
          .scatter = scatter_replica_state,
          .receive = receive_replica_state};
}

TaskOutcome train_synchronously(Runtime& runtime, const TrainingSetup& setup) {
  Replica replica(runtime, setup);
  Checkpointing checkpoints(runtime, setup, replica);
  const std::vector<TaskId>& ring = replicas_in_rank_order(runtime.cluster());
  const int64_t bucket_floats = setup.strategy().bucket_bytes / static_cast<int64_t>(sizeof(float));
  const int64_t segment_floats = setup.strategy().segment_floats();
  const auto model_bytes = static_cast<uint64_t>(setup.parameter_floats()) * sizeof(float);

  const GradientType wire = setup.strategy().gradient_type;

  for (int64_t step = checkpoints.start(); step < replica.total_steps(); ++step) {
    runtime.begin_step(step);
    double loss = 0;
    if (setup.strategy().overlap) {
      // Each bucket, from the last layers' down, reduced while the
      // backward pass makes the next final.
      loss = replica.compute_gradients(
          step, LossScale::kGlobalBatch, [&](const Replica::AwaitFinalFrom& await_final_from) {
            overlapped_allreduce(runtime, ring, replica.rank(), replica.gradients(), bucket_floats,
                                 segment_floats, step, wire, [&](int64_t begin, int64_t floats) {
                                   await_final_from(begin);
                                   // The bucket on the bus first, as below.
                                   runtime.among_devices(
                                       DeviceCollective::kReduceScatter,
                                       static_cast<uint64_t>(floats) * sizeof(float));
                                 });
          });
      runtime.among_devices(DeviceCollective::kAllGather, model_bytes);
    } else {
      loss = replica.compute_gradients(step, LossScale::kGlobalBatch);
      // Hierarchical over a task's GPUs: a reduce-scatter on its machine's
      // bus, the ring between tasks, an all-gather on the bus.
      runtime.among_devices(DeviceCollective::kReduceScatter, model_bytes);
      bucketed_allreduce(runtime, ring, replica.rank(), replica.gradients(), bucket_floats,
                         segment_floats, step, wire);
      runtime.among_devices(DeviceCollective::kAllGather, model_bytes);
    }
    replica.apply_gradients();
    replica.after_step(step, loss);
    if (replica.ends_scheduled_epoch(step)) share_learning_rate(runtime, replica, step);
    runtime.end_step(loss);
    checkpoints.after_step(step + 1);
  }
  checkpoints.finish(replica.total_steps());
  return replica.finish();
}

}  // namespace distlab::strategy
