#include "strategy/parameter_server.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

#include "common/error.h"
#include "nn/kernels/kernels.h"
#include "strategy/gradient_wire.h"
#include "strategy/ps_transfer.h"

namespace distlab::strategy {
namespace {

// PS j's byte range of the parameter buffer: k near-equal contiguous parts.
struct Shard {
  int64_t begin = 0;
  int64_t size = 0;
};

Shard shard_of(int64_t floats, int servers, int j) {
  const int64_t begin = part_begin(floats, servers, j);
  return {begin, part_begin(floats, servers, j + 1) - begin};
}

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

// The floats of a shard with its optimizer state: values, then each slot.
int64_t shard_state_floats(const TrainingSetup& setup, const Shard& shard) {
  return shard.size * static_cast<int64_t>(1 + setup.checkpoint_layout().slots());
}

// A server's part of a restore: its shard's state, then the schedule's
// learning rate where the model has one.
int64_t shard_restore_floats(const TrainingSetup& setup, const Shard& shard) {
  return shard_state_floats(setup, shard) + (setup.spec().reduce_lr_on_plateau ? 1 : 0);
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
    const double loss =
        replica.compute_gradients(step, sync ? LossScale::kGlobalBatch : LossScale::kLocalBatch);
    runtime.among_devices(DeviceCollective::kReduce, model_bytes);
    push(runtime, step, replica.gradients(), versions, wire, segment_floats);
    const bool decides_rate = replica.is_chief() && replica.ends_scheduled_epoch(step);
    // The schedule observes the weights after this update, as a single
    // process's does (sync: the servers answer once it is applied).
    if (decides_rate) {
      pull(runtime, PsRequest::kPull, step, replica.parameters(), versions, segment_floats);
    }
    replica.after_step(step, loss);
    if (decides_rate) send_learning_rate(runtime, replica, step);
    checkpoints.after_step(step + 1);
    runtime.end_step(loss);
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
  const ClusterSpec& cluster = runtime.cluster();
  const int replicas = cluster.replicas();
  const bool sync = setup.strategy().mode == PsMode::kSync;
  const Shard shard = shard_of(setup.parameter_floats(), cluster.ps, runtime.self().index);

  // The shard starts from the same initial weights as every replica.
  std::vector<float> values, sum;
  std::unique_ptr<nn::Optimizer> optimizer;
  if (runtime.full_fidelity()) {
    const nn::Model initial(setup.spec(), setup.seed());
    const auto all = initial.parameters();
    values.assign(all.begin() + shard.begin, all.begin() + shard.begin + shard.size);
    sum.resize(shard.size);
    optimizer = nn::make_optimizer(setup.spec().optimizer, initial.trainable_layout(), shard.begin,
                                   shard.size);
  }
  const FloatRange current = values.empty() && shard.size > 0
                                 ? FloatRange::sized(shard.size)
                                 : FloatRange(values.data(), shard.size);

  int64_t version = 0;  // updates applied to this shard
  int64_t gradients_applied = 0;
  std::vector<int64_t> pushes(replicas, 0);
  std::vector<int64_t> steps_reached(replicas, 0);  // per worker: after its latest push
  if (setup.checkpoints().resuming) {
    // The chief's part of the checkpoint: the shard, its optimizer state and
    // the updates applied to it.
    Message m = runtime.recv(cluster.replica(0), Tag::kRestore);
    const int64_t floats = shard_restore_floats(setup, shard);
    if (m.bytes != static_cast<uint64_t>(floats) * sizeof(float)) {
      throw Error(task_name(runtime.self()) + ": the chief's restore holds " +
                  std::to_string(m.bytes) + " bytes where " + std::to_string(floats * 4) +
                  " were expected");
    }
    version = m.version;
    if (runtime.full_fidelity()) {
      auto from = m.values.begin();
      std::copy(from, from + shard.size, values.begin());
      for (const auto slot : optimizer->state()) {
        from += shard.size;
        std::copy(from, from + shard.size, slot.begin());
      }
      optimizer->set_steps(version);
      if (setup.spec().reduce_lr_on_plateau) optimizer->set_learning_rate(m.values.back());
    }
    // Sync: every worker's pushes so far count as applied.
    std::fill(pushes.begin(), pushes.end(), version);
    std::fill(steps_reached.begin(), steps_reached.end(), m.step);
  }
  const int64_t segment_floats = setup.strategy().segment_floats();
  // Each worker's latest gradient, in float32 (sync: this step's, until all
  // are in); allocated once, as a push of a large model arrives in segments.
  std::vector<std::vector<float>> gradients(sync ? replicas : 1);
  int pending_count = 0;
  std::vector<Message> deferred;  // pulls that wait for an update (sync) or for the end
  // Whether each worker has stopped (a restarted worker may say it twice),
  // and the chief's latest request for the final shard (a restarted chief
  // asks again).
  std::vector<char> stopped_ranks(replicas, 0);
  int stopped = 0;
  std::optional<Message> final_request;
  bool done = false;

  auto reply = [&](const Message& pull_request) {
    send_parameters(runtime, pull_request.from, pull_request.step, version, current,
                    segment_floats);
  };
  // The chief's checkpoint: the shard, then each optimizer slot.
  auto reply_state = [&](const Message& request) {
    std::vector<float> packed;
    if (runtime.full_fidelity()) {
      packed = values;
      for (const auto slot : optimizer->state())
        packed.insert(packed.end(), slot.begin(), slot.end());
    }
    Message m = make_message(Tag::kShardState, request.step, shard_state_floats(setup, shard),
                             runtime.full_fidelity() ? packed.data() : nullptr);
    m.version = version;
    runtime.send(request.from, std::move(m));
  };
  auto answer = [&](const Message& m) {
    if (static_cast<PsRequest>(m.op) == PsRequest::kCheckpoint) {
      reply_state(m);
    } else {
      reply(m);
    }
  };
  auto apply = [&](std::span<const float> gradient, int64_t staleness, int gradients) {
    runtime.begin_step(version);
    runtime.compute(setup.update_work(shard.begin, shard.size),
                    [&] { optimizer->step(values, gradient); });
    ++version;
    gradients_applied += gradients;
    runtime.end_step(std::numeric_limits<double>::quiet_NaN(), staleness);
  };
  // A push holds the shard's gradient in the wire's format: as float32 from
  // here on, in the worker's buffer.
  const GradientType wire = setup.strategy().gradient_type;
  auto read_push = [&](const Message& first, int rank) -> FloatRange {
    std::vector<float>& gradient = gradients[sync ? rank : 0];
    if (runtime.full_fidelity()) gradient.resize(static_cast<std::size_t>(shard.size));
    const FloatRange into =
        gradient.empty() ? FloatRange::sized(shard.size) : FloatRange(gradient.data(), shard.size);
    receive_gradient(runtime, first, into, wire, segment_floats,
                     task_name(runtime.self()) + ": a push");
    return into;
  };
  // Sync: a worker's pull waits until every push it made has been applied.
  auto ready = [&](const Message& m) {
    return !sync || pushes[cluster.replica_rank(m.from)] <= version;
  };

  while (!done) {
    Message m = runtime.recv_any(Tag::kToParameterServer);
    const int rank = cluster.replica_rank(m.from);
    switch (static_cast<PsRequest>(m.op)) {
      case PsRequest::kPull:
      case PsRequest::kCheckpoint:
        if (ready(m)) {
          answer(m);
        } else {
          deferred.push_back(std::move(m));
        }
        break;
      case PsRequest::kPush: {
        const FloatRange gradient = read_push(m, rank);
        ++pushes[rank];
        steps_reached[rank] = std::max(steps_reached[rank], m.step + 1);
        if (!sync) {
          apply(gradient.has_values() ? gradient.values() : std::span<float>(), version - m.version,
                1);
          break;
        }
        if (++pending_count < replicas) break;
        // Every worker's gradient of this step is here: add them up in
        // worker order, so that the sum has the same bits on every run.
        runtime.compute(elementwise_work("sum gradients", shard.size * (replicas - 1), 1, 3), [&] {
          std::copy(gradients[0].begin(), gradients[0].end(), sum.begin());
          for (int r = 1; r < replicas; ++r) {
            nn::kernels::kernels().add(sum.data(), gradients[r].data(), shard.size);
          }
        });
        apply(sum, -1, replicas);
        pending_count = 0;
        for (auto it = deferred.begin(); it != deferred.end();) {
          const auto op = static_cast<PsRequest>(it->op);
          if ((op == PsRequest::kPull || op == PsRequest::kCheckpoint) && ready(*it)) {
            answer(*it);
            it = deferred.erase(it);
          } else {
            ++it;
          }
        }
        break;
      }
      case PsRequest::kStop:
        if (!stopped_ranks[rank]) {
          stopped_ranks[rank] = 1;
          ++stopped;
        }
        break;
      case PsRequest::kRejoin: {
        // Every push of this worker that reached this PS was applied on
        // arrival (async): it goes on after the last one, at the rate in
        // force where the model has a schedule.
        const bool scheduled = setup.spec().reduce_lr_on_plateau.has_value();
        const float rate = optimizer ? optimizer->learning_rate() : 0.0f;
        runtime.send(m.from, make_message(Tag::kRestore, steps_reached[rank], scheduled ? 1 : 0,
                                          scheduled && optimizer ? &rate : nullptr));
        break;
      }
      case PsRequest::kFinal:
        final_request = std::move(m);
        break;
      case PsRequest::kDone:
        done = true;
        break;
      case PsRequest::kLearningRate:
        // For every update from now on. Sync: the epoch's last update, at
        // the old rate, is already applied: the chief pulled its weights
        // (answered only after that update) before it evaluated and sent
        // this.
        if (runtime.full_fidelity()) {
          optimizer->set_learning_rate(learning_rate_in(m, task_name(runtime.self())));
        }
        break;
      default:
        throw Error(task_name(runtime.self()) + ": unknown request " + std::to_string(m.op) +
                    " from " + task_name(m.from));
    }
    if (stopped == replicas && final_request) {
      // Every worker has stopped: the shard is final.
      for (const Message& pending : deferred) answer(pending);
      deferred.clear();
      answer(*final_request);
      final_request.reset();
    }
  }
  return {.updates = gradients_applied};
}

}  // namespace distlab::strategy
