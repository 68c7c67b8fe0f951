#include "strategy/parameter_server.h"

#include <algorithm>
#include <vector>

#include "common/error.h"
#include "strategy/ps_transfer.h"
#include "strategy/shard_server.h"

namespace distlab::strategy {
namespace {

Message request(PsRequest what, int64_t step) {
  Message m = make_message(Tag::kToParameterServer, step, 0, nullptr);
  m.op = static_cast<int32_t>(what);
  return m;
}

// Worker side: fetch every shard into `params`, remembering each version.
// The receives are posted before the requests go, so that the shards land
// in place (ps_transfer.h).
void pull(Runtime& runtime, PsRequest what, int64_t step, FloatRange params,
          std::vector<int64_t>& versions, int64_t segment_floats) {
  const int servers = runtime.cluster().ps;
  std::vector<std::vector<PostedReceive>> shards;
  for (int j = 0; j < servers; ++j) {
    const Shard shard = shard_of(params.size(), servers, j);
    shards.push_back(post_parameters(runtime, {Role::kPs, j}, params.sub(shard.begin, shard.size),
                                     segment_floats));
  }
  for (int j = 0; j < servers; ++j) runtime.send({Role::kPs, j}, request(what, step));
  for (int j = 0; j < servers; ++j) versions[j] = wait_parameters(runtime, shards[j]);
}

// Worker side: send each shard of the gradient to its PS, in the wire's format.
void push(Runtime& runtime, int64_t step, FloatRange grads, const std::vector<int64_t>& versions,
          GradientType wire, int64_t segment_floats) {
  const int servers = runtime.cluster().ps;
  for (int j = 0; j < servers; ++j) {
    const Shard shard = shard_of(grads.size(), servers, j);
    push_gradient(runtime, {Role::kPs, j}, step, versions[j], grads.sub(shard.begin, shard.size),
                  wire, segment_floats);
  }
}

// The chief, at an epoch's end: the rate its plateau schedule set, to every
// server, whose optimizers apply the updates (Replica::after_step).
void send_learning_rate(Runtime& runtime, const Replica& chief, int64_t step) {
  const float rate = chief.learning_rate();
  for (int j = 0; j < runtime.cluster().ps; ++j) {
    Message m =
        make_message(Tag::kToParameterServer, step, 1, runtime.full_fidelity() ? &rate : nullptr);
    m.op = static_cast<int32_t>(PsRequest::kLearningRate);
    runtime.send({Role::kPs, j}, std::move(m));
  }
}

// Which of a checkpoint's optimizer step counts belongs to shard j: its own
// when the checkpoint has one per shard, else the single one it has.
int64_t optimizer_steps_of(const checkpoint::TrainingState& state, int j) {
  if (state.optimizer_steps.empty()) return 0;
  const std::size_t index = static_cast<std::size_t>(j);
  return index < state.optimizer_steps.size() ? state.optimizer_steps[index]
                                              : state.optimizer_steps.front();
}

checkpoint::TrainingState gather_shards(Runtime& runtime, Replica& chief, int64_t steps_done) {
  const int servers = runtime.cluster().ps;
  const TrainingSetup& setup = chief.setup();
  checkpoint::TrainingState state = chief.training_state(steps_done);  // its moving statistics
  const std::size_t slots = setup.checkpoint_layout().slots();
  const bool values = runtime.full_fidelity();
  if (values) state.optimizer_slots.assign(slots, std::vector<float>(setup.parameter_floats()));
  state.optimizer_steps.assign(servers, 0);
  for (int j = 0; j < servers; ++j)
    runtime.send({Role::kPs, j}, request(PsRequest::kCheckpoint, steps_done));
  for (int j = 0; j < servers; ++j) {
    const Shard shard = shard_of(setup.parameter_floats(), servers, j);
    Message reply = runtime.recv({Role::kPs, j}, Tag::kShardState);
    const int64_t floats = shard_state_floats(setup, shard);
    if (reply.bytes != static_cast<uint64_t>(floats) * sizeof(float)) {
      throw Error(task_name(runtime.self()) + ": ps:" + std::to_string(j) + " sent " +
                  std::to_string(reply.bytes) + " bytes of shard state where " +
                  std::to_string(floats * 4) + " were expected");
    }
    state.optimizer_steps[j] = reply.version;
    if (!values) continue;
    auto from = reply.values.begin();
    std::copy(from, from + shard.size, state.parameters.begin() + shard.begin);
    for (std::size_t s = 0; s < slots; ++s) {
      from += shard.size;
      std::copy(from, from + shard.size, state.optimizer_slots[s].begin() + shard.begin);
    }
  }
  return state;
}

void scatter_shards(Runtime& runtime, Replica& chief, const checkpoint::TrainingState& state) {
  const int servers = runtime.cluster().ps;
  const TrainingSetup& setup = chief.setup();
  const bool values = runtime.full_fidelity();
  for (int j = 0; j < servers; ++j) {
    const Shard shard = shard_of(setup.parameter_floats(), servers, j);
    std::vector<float> packed;
    if (values) {
      auto add = [&](const std::vector<float>& from) {
        packed.insert(packed.end(), from.begin() + shard.begin,
                      from.begin() + shard.begin + shard.size);
      };
      add(state.parameters);
      for (const auto& slot : state.optimizer_slots) add(slot);
      if (setup.spec().reduce_lr_on_plateau) packed.push_back(chief.learning_rate());
    }
    Message m = make_message(Tag::kRestore, state.step, shard_restore_floats(setup, shard),
                             values ? packed.data() : nullptr);
    m.version = optimizer_steps_of(state, j);
    runtime.send({Role::kPs, j}, std::move(m));
  }
  // Workers pull their weights from the servers: they need only the step.
  for (int r = 1; r < chief.replicas(); ++r) {
    runtime.send(runtime.cluster().replica(r), make_message(Tag::kRestore, state.step, 0, nullptr));
  }
}

int64_t receive_step(Runtime& runtime, Replica&) {
  return runtime.recv(runtime.cluster().replica(0), Tag::kRestore).step;
}

int64_t rejoin(Runtime& runtime, Replica& replica) {
  runtime.send({Role::kPs, 0}, request(PsRequest::kRejoin, 0));
  const Message reply = runtime.recv({Role::kPs, 0}, Tag::kRestore);
  // With a plateau schedule the reply holds the rate the servers apply: a
  // chief back alone goes on from it, not from the spec's first rate (the
  // schedule's counters died with its previous life).
  if (runtime.full_fidelity() && reply.values.size() == 1) {
    replica.set_learning_rate(reply.values.front());
  }
  return std::min(reply.step, replica.total_steps());
}

}  // namespace

CheckpointHooks parameter_server_checkpoint_hooks() {
  return {.gather = gather_shards,
          .scatter = scatter_shards,
          .receive = receive_step,
          .rejoin = rejoin};
}

TaskOutcome train_with_parameter_servers(Runtime& runtime, const TrainingSetup& setup) {
  Replica replica(runtime, setup);
  Checkpointing checkpoints(runtime, setup, replica);
  const bool sync = setup.strategy().mode == PsMode::kSync;
  const int servers = runtime.cluster().ps;
  std::vector<int64_t> versions(servers, 0);
  const int64_t first_step = checkpoints.start();
  const auto model_bytes = static_cast<uint64_t>(setup.parameter_floats()) * sizeof(float);
  const int64_t segment_floats = setup.strategy().segment_floats();
  const GradientType wire = setup.strategy().gradient_type;

  for (int64_t step = first_step; step < replica.total_steps(); ++step) {
    runtime.begin_step(step);
    pull(runtime, PsRequest::kPull, step, replica.parameters(), versions, segment_floats);
    // Every server answered this pull after the previous push: that push's
    // borrowed gradient is free to be overwritten.
    runtime.wait_sends();
    // A worker of several GPUs hands the weights to each, and sums their
    // towers' gradients on one before it pushes (the lab's GPU workers).
    runtime.among_devices(DeviceCollective::kBroadcast, model_bytes);
    const LossScale scale = sync ? LossScale::kGlobalBatch : LossScale::kLocalBatch;
    double loss = 0;
    if (setup.strategy().overlap) {
      // Each server's shard pushed as soon as the backward pass has made it
      // final, the last shard's first.
      loss = replica.compute_gradients(
          step, scale, [&](const Replica::AwaitFinalFrom& await_final_from) {
            const FloatRange grads = replica.gradients();
            for (int j = servers - 1; j >= 0; --j) {
              const Shard shard = shard_of(grads.size(), servers, j);
              await_final_from(shard.begin);
              runtime.among_devices(DeviceCollective::kReduce,
                                    static_cast<uint64_t>(shard.size) * sizeof(float));
              push_gradient(runtime, {Role::kPs, j}, step, versions[j],
                            grads.sub(shard.begin, shard.size), wire, segment_floats);
            }
          });
    } else {
      loss = replica.compute_gradients(step, scale);
      runtime.among_devices(DeviceCollective::kReduce, model_bytes);
      push(runtime, step, replica.gradients(), versions, wire, segment_floats);
    }
    const bool decides_rate = replica.is_chief() && replica.ends_scheduled_epoch(step);
    // The schedule observes the weights after this update, as a single
    // process's does (sync: the servers answer once it is applied).
    if (decides_rate) {
      pull(runtime, PsRequest::kPull, step, replica.parameters(), versions, segment_floats);
    }
    replica.after_step(step, loss);
    if (decides_rate) send_learning_rate(runtime, replica, step);
    runtime.end_step(loss);
    checkpoints.after_step(step + 1);
  }
  runtime.wait_sends();
  checkpoints.finish(replica.total_steps());
  for (int j = 0; j < servers; ++j) {
    runtime.send({Role::kPs, j}, request(PsRequest::kStop, replica.total_steps()));
  }
  // The chief evaluates and fingerprints the weights every worker trained.
  if (replica.is_chief())
    pull(runtime, PsRequest::kFinal, replica.total_steps(), replica.parameters(), versions,
         segment_floats);
  TaskOutcome outcome = replica.finish();
  if (replica.is_chief()) {
    for (int j = 0; j < servers; ++j) {
      runtime.send({Role::kPs, j}, request(PsRequest::kDone, replica.total_steps()));
    }
  }
  outcome.updates = std::max<int64_t>(replica.total_steps() - first_step, 0) * servers;
  return outcome;
}

TaskOutcome serve_parameters(Runtime& runtime, const TrainingSetup& setup) {
  return ShardServer(runtime, setup).run();
}

}  // namespace distlab::strategy
