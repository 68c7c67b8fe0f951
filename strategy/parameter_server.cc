#include "strategy/parameter_server.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

#include "common/error.h"
#include "nn/kernels/kernels.h"
#include "strategy/gradient_wire.h"

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
void pull(Runtime& runtime, PsRequest what, int64_t step, FloatRange params,
          std::vector<int64_t>& versions) {
  const int servers = runtime.cluster().ps;
  for (int j = 0; j < servers; ++j) runtime.send({Role::kPs, j}, request(what, step));
  for (int j = 0; j < servers; ++j) {
    const Shard shard = shard_of(params.size(), servers, j);
    Message reply = runtime.recv({Role::kPs, j}, Tag::kParameters);
    if (reply.bytes != static_cast<uint64_t>(shard.size) * sizeof(float)) {
      throw Error(task_name(runtime.self()) + ": ps:" + std::to_string(j) + " sent " +
                  std::to_string(reply.bytes) + " bytes of parameters where " +
                  std::to_string(shard.size * sizeof(float)) + " were expected");
    }
    if (params.has_values())
      std::copy(reply.values.begin(), reply.values.end(), params.data() + shard.begin);
    versions[j] = reply.version;
  }
}

// Worker side: send each shard of the gradient to its PS, in the wire's format.
void push(Runtime& runtime, int64_t step, FloatRange grads, const std::vector<int64_t>& versions,
          GradientType wire) {
  const int servers = runtime.cluster().ps;
  for (int j = 0; j < servers; ++j) {
    const Shard shard = shard_of(grads.size(), servers, j);
    const FloatRange part = grads.sub(shard.begin, shard.size);
    Message m =
        gradient_message(Tag::kToParameterServer, step, FloatRange::sized(part.size()), wire);
    runtime.compute(encode_work(part.size(), wire), [&] {
      if (part.has_values()) m = gradient_message(Tag::kToParameterServer, step, part, wire);
    });
    m.op = static_cast<int32_t>(PsRequest::kPush);
    m.version = versions[j];
    runtime.send({Role::kPs, j}, std::move(m));
  }
}

// The floats of a shard with its optimizer state: values, then each slot.
int64_t shard_state_floats(const TrainingSetup& setup, const Shard& shard) {
  return shard.size * static_cast<int64_t>(1 + setup.checkpoint_layout().slots());
}

// Which of a checkpoint's optimizer step counts belongs to shard j: its own
// when the checkpoint has one per shard, else the single one it has.
int64_t optimizer_steps_of(const TrainingState& state, int j) {
  if (state.optimizer_steps.empty()) return 0;
  const std::size_t index = static_cast<std::size_t>(j);
  return index < state.optimizer_steps.size() ? state.optimizer_steps[index]
                                              : state.optimizer_steps.front();
}

TrainingState gather_shards(Runtime& runtime, Replica& chief, int64_t steps_done) {
  const int servers = runtime.cluster().ps;
  const TrainingSetup& setup = chief.setup();
  TrainingState state = chief.training_state(steps_done);  // its moving statistics
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

void scatter_shards(Runtime& runtime, Replica& chief, const TrainingState& state) {
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
    }
    Message m = make_message(Tag::kRestore, state.step, shard_state_floats(setup, shard),
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
  const int64_t step = runtime.recv({Role::kPs, 0}, Tag::kRestore).step;
  return std::min(step, replica.total_steps());
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

  for (int64_t step = first_step; step < replica.total_steps(); ++step) {
    runtime.begin_step(step);
    pull(runtime, PsRequest::kPull, step, replica.parameters(), versions);
    // A worker of several GPUs hands the weights to each, and sums their
    // towers' gradients on one before it pushes (the lab's GPU workers).
    runtime.among_devices(DeviceCollective::kBroadcast, model_bytes);
    const double loss =
        replica.compute_gradients(step, sync ? LossScale::kGlobalBatch : LossScale::kLocalBatch);
    runtime.among_devices(DeviceCollective::kReduce, model_bytes);
    push(runtime, step, replica.gradients(), versions, setup.strategy().gradient_type);
    replica.after_step(step, loss);
    checkpoints.after_step(step + 1);
    runtime.end_step(loss);
  }
  checkpoints.finish(replica.total_steps());
  for (int j = 0; j < servers; ++j) {
    runtime.send({Role::kPs, j}, request(PsRequest::kStop, replica.total_steps()));
  }
  // The chief evaluates and fingerprints the weights every worker trained.
  if (replica.is_chief())
    pull(runtime, PsRequest::kFinal, replica.total_steps(), replica.parameters(), versions);
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
    optimizer = nn::make_optimizer(setup.spec().optimizer, shard.size);
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
    const int64_t floats = shard_state_floats(setup, shard);
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
    }
    // Sync: every worker's pushes so far count as applied.
    std::fill(pushes.begin(), pushes.end(), version);
    std::fill(steps_reached.begin(), steps_reached.end(), m.step);
  }
  std::vector<std::optional<Message>> pending(replicas);  // sync: this step's gradients
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
    Message m = make_message(Tag::kParameters, pull_request.step, shard.size, current.data());
    m.version = version;
    runtime.send(pull_request.from, std::move(m));
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
    runtime.compute(setup.update_work(shard.size), [&] { optimizer->step(values, gradient); });
    ++version;
    gradients_applied += gradients;
    runtime.end_step(std::numeric_limits<double>::quiet_NaN(), staleness);
  };
  // A push holds the shard's gradient in the wire's format: as float32 from
  // here on.
  const GradientType wire = setup.strategy().gradient_type;
  auto read_pushed_gradient = [&](Message& m) {
    const std::string what = task_name(runtime.self()) + ": a push";
    read_gradient(m, wire, FloatRange::sized(shard.size), what);
    if (wire == GradientType::kFloat32) return;
    std::vector<float> gradient(runtime.full_fidelity() ? shard.size : 0);
    runtime.compute(decode_work(shard.size, wire), [&] {
      if (!gradient.empty()) read_gradient(m, wire, FloatRange(gradient.data(), shard.size), what);
    });
    m.values = std::move(gradient);
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
      case PsRequest::kPush:
        read_pushed_gradient(m);
        ++pushes[rank];
        steps_reached[rank] = std::max(steps_reached[rank], m.step + 1);
        if (!sync) {
          apply(m.values, version - m.version, 1);
          break;
        }
        pending[rank] = std::move(m);
        if (++pending_count < replicas) break;
        // Every worker's gradient of this step is here: add them up in
        // worker order, so that the sum has the same bits on every run.
        runtime.compute(elementwise_work("sum gradients", shard.size * (replicas - 1), 1, 3), [&] {
          std::copy(pending[0]->values.begin(), pending[0]->values.end(), sum.begin());
          for (int r = 1; r < replicas; ++r) {
            nn::kernels::kernels().add(sum.data(), pending[r]->values.data(), shard.size);
          }
        });
        apply(sum, -1, replicas);
        for (auto& p : pending) p.reset();
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
      case PsRequest::kStop:
        if (!stopped_ranks[rank]) {
          stopped_ranks[rank] = 1;
          ++stopped;
        }
        break;
      case PsRequest::kRejoin:
        // Every push of this worker that reached this PS was applied on
        // arrival (async): it goes on after the last one.
        runtime.send(m.from, make_message(Tag::kRestore, steps_reached[rank], 0, nullptr));
        break;
      case PsRequest::kFinal:
        final_request = std::move(m);
        break;
      case PsRequest::kDone:
        done = true;
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
