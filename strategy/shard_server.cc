#include "strategy/shard_server.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "common/error.h"
#include "nn/kernels/kernels.h"
#include "strategy/gradient_wire.h"
#include "strategy/parameter_server.h"
#include "strategy/ps_transfer.h"

namespace distlab::strategy {

Shard shard_of(int64_t floats, int servers, int j) {
  const int64_t begin = part_begin(floats, servers, j);
  return {begin, part_begin(floats, servers, j + 1) - begin};
}

int64_t shard_state_floats(const TrainingSetup& setup, const Shard& shard) {
  return shard.size * static_cast<int64_t>(1 + setup.checkpoint_layout().slots());
}

int64_t shard_restore_floats(const TrainingSetup& setup, const Shard& shard) {
  return shard_state_floats(setup, shard) + (setup.spec().reduce_lr_on_plateau ? 1 : 0);
}

ShardServer::ShardServer(Runtime& runtime, const TrainingSetup& setup)
    : runtime_(runtime),
      setup_(setup),
      replicas_(runtime.cluster().replicas()),
      sync_(setup.strategy().mode == PsMode::kSync),
      shard_(shard_of(setup.parameter_floats(), runtime.cluster().ps, runtime.self().index)),
      segment_floats_(setup.strategy().segment_floats()),
      wire_(setup.strategy().gradient_type),
      gradients_(sync_ ? replicas_ : 1),
      aggregate_(setup.strategy().replicas_to_aggregate > 0 ? setup.strategy().replicas_to_aggregate
                                                            : replicas_),
      steps_reached_(replicas_, 0),
      pushed_version_(replicas_, -1),
      aggregated_(replicas_, 0),
      stopped_ranks_(replicas_, 0) {
  if (!runtime.full_fidelity()) return;
  const nn::Model initial(setup.spec(), setup.seed());
  const auto all = initial.parameters();
  values_.assign(all.begin() + shard_.begin, all.begin() + shard_.begin + shard_.size);
  sum_.resize(shard_.size);
  optimizer_ = nn::make_optimizer(setup.spec().optimizer, initial.trainable_layout(), shard_.begin,
                                  shard_.size);
}

TaskOutcome ShardServer::run() {
  if (setup_.checkpoints().resuming) restore();
  while (!done_) {
    try {
      serve(runtime_.recv_any_or_gone(Tag::kToParameterServer));
    } catch (const PeerGone& gone) {
      // A worker that left the run for good (lost, not restarted in time)
      // pushes no more: the shard is final without it. Anyone else gone
      // is a failure of the run.
      const int rank = runtime_.cluster().replica_rank(gone.peer());
      if (rank < 0) throw;
      stop(rank);
    }
    // Every worker has stopped: the shard is final.
    if (stopped_ == replicas_ && final_request_) answer_final();
  }
  return {.updates = gradients_applied_, .dropped = gradients_dropped_};
}

// The chief's part of the checkpoint: the shard, its optimizer state and
// the updates applied to it.
void ShardServer::restore() {
  const Message m = runtime_.recv(runtime_.cluster().replica(0), Tag::kRestore);
  const int64_t floats = shard_restore_floats(setup_, shard_);
  if (m.bytes != static_cast<uint64_t>(floats) * sizeof(float)) {
    throw Error(task_name(runtime_.self()) + ": the chief's restore holds " +
                std::to_string(m.bytes) + " bytes where " + std::to_string(floats * 4) +
                " were expected");
  }
  version_ = m.version;
  if (runtime_.full_fidelity()) {
    auto from = m.values.begin();
    std::copy(from, from + shard_.size, values_.begin());
    for (const auto slot : optimizer_->state()) {
      from += shard_.size;
      std::copy(from, from + shard_.size, slot.begin());
    }
    optimizer_->set_steps(version_);
    if (setup_.spec().reduce_lr_on_plateau) optimizer_->set_learning_rate(m.values.back());
  }
  // Sync: no worker's push is pending; each pulls the restored weights.
  std::fill(steps_reached_.begin(), steps_reached_.end(), m.step);
}

void ShardServer::serve(Message request) {
  const int rank = runtime_.cluster().replica_rank(request.from);
  switch (static_cast<PsRequest>(request.op)) {
    case PsRequest::kPull:
    case PsRequest::kCheckpoint:
      return pull(std::move(request));
    case PsRequest::kPush:
      return push(request, rank);
    case PsRequest::kStop:
      return stop(rank);
    case PsRequest::kRejoin:
      return rejoin(request, rank);
    case PsRequest::kFinal:
      return hold_final(std::move(request));
    case PsRequest::kDone:
      done_ = true;  // the chief has the final weights
      return;
    case PsRequest::kLearningRate:
      return set_learning_rate(request);
  }
  throw Error(task_name(runtime_.self()) + ": unknown request " + std::to_string(request.op) +
              " from " + task_name(request.from));
}

void ShardServer::pull(Message request) {
  if (ready(request)) {
    answer(request);
  } else {
    deferred_.push_back(std::move(request));
  }
}

void ShardServer::push(const Message& first, int rank) {
  const FloatRange gradient = receive_push(first, rank);
  steps_reached_[rank] = std::max(steps_reached_[rank], first.step + 1);
  if (!sync_) {
    // Staleness: the updates applied since the worker pulled.
    apply(gradient.has_values() ? gradient.values() : std::span<float>(), version_ - first.version,
          1);
    if (bounded()) answer_ready_pulls();
    return;
  }
  pushed_version_[rank] = first.version;
  if (first.version != version_) {
    // A backup's push: the step it was computed for has been applied.
    ++gradients_dropped_;
    return;
  }
  aggregated_[rank] = 1;
  if (++pending_ >= quorum()) apply_aggregate();
}

// Sync: the pushes a step waits for. A worker that has stopped pushes no
// more, so once fewer are left than replicas_to_aggregate, the step takes
// what they can give.
int ShardServer::quorum() const {
  int able = 0;
  for (int r = 0; r < replicas_; ++r) able += !stopped_ranks_[r] || aggregated_[r];
  return std::min(aggregate_, able);
}

void ShardServer::stop(int rank) {
  if (stopped_ranks_[rank]) return;
  stopped_ranks_[rank] = 1;
  ++stopped_;
  // A bounded pull no longer waits for a replica that trains no more, and
  // a sync step no longer waits for its push.
  if (bounded()) answer_ready_pulls();
  if (sync_ && pending_ > 0 && pending_ >= quorum()) apply_aggregate();
}

// Every push of this worker that reached this PS was applied on arrival
// (async): it goes on after the last one, at the rate in force where the
// model has a schedule.
void ShardServer::rejoin(const Message& request, int rank) {
  const bool scheduled = setup_.spec().reduce_lr_on_plateau.has_value();
  const float rate = optimizer_ ? optimizer_->learning_rate() : 0.0f;
  runtime_.send(request.from, make_message(Tag::kRestore, steps_reached_[rank], scheduled ? 1 : 0,
                                           scheduled && optimizer_ ? &rate : nullptr));
}

// Answered once every worker has stopped (run()).
void ShardServer::hold_final(Message request) {
  final_request_ = std::move(request);
}

// For every update from now on. Sync: the epoch's last update, at the old
// rate, is already applied: the chief pulled its weights (answered only
// after that update) before it evaluated and sent this.
void ShardServer::set_learning_rate(const Message& request) {
  if (runtime_.full_fidelity()) {
    optimizer_->set_learning_rate(learning_rate_in(request, task_name(runtime_.self())));
  }
}

// Sync: a worker's pull waits until the step its last push was computed
// for has been applied (its push with it, or dropped). Bounded: a pull for step k waits until every
// other replica still training has reached step k - bound (pushed step k - 1 - bound).
bool ShardServer::ready(const Message& pull_request) const {
  const int rank = runtime_.cluster().replica_rank(pull_request.from);
  if (sync_) return pushed_version_[rank] < version_;
  if (!bounded() || static_cast<PsRequest>(pull_request.op) != PsRequest::kPull) return true;
  const int64_t bound = setup_.strategy().staleness_bound;
  for (int r = 0; r < replicas_; ++r) {
    if (r == rank || stopped_ranks_[r]) continue;
    if (steps_reached_[r] < pull_request.step - bound) return false;
  }
  return true;
}

void ShardServer::answer(const Message& pull_request) {
  if (static_cast<PsRequest>(pull_request.op) == PsRequest::kCheckpoint) {
    send_state(pull_request);
  } else {
    send_parameters(runtime_, pull_request.from, pull_request.step, version_, weights(),
                    segment_floats_);
  }
}

// The chief's checkpoint: the shard, then each optimizer slot.
void ShardServer::send_state(const Message& checkpoint_request) {
  std::vector<float> packed;
  if (runtime_.full_fidelity()) {
    packed = values_;
    for (const auto slot : optimizer_->state())
      packed.insert(packed.end(), slot.begin(), slot.end());
  }
  Message m =
      make_message(Tag::kShardState, checkpoint_request.step, shard_state_floats(setup_, shard_),
                   runtime_.full_fidelity() ? packed.data() : nullptr);
  m.version = version_;
  runtime_.send(checkpoint_request.from, std::move(m));
}

// A push holds the shard's gradient in the wire's format: as float32 from
// here on, in the worker's buffer.
FloatRange ShardServer::receive_push(const Message& first, int rank) {
  std::vector<float>& gradient = gradients_[sync_ ? rank : 0];
  if (runtime_.full_fidelity()) gradient.resize(static_cast<std::size_t>(shard_.size));
  const FloatRange into =
      gradient.empty() ? FloatRange::sized(shard_.size) : FloatRange(gradient.data(), shard_.size);
  receive_gradient(runtime_, first, into, wire_, segment_floats_,
                   task_name(runtime_.self()) + ": a push");
  return into;
}

// One update of the shard, a step of this task's log.
void ShardServer::apply(std::span<const float> gradient, int64_t staleness, int gradients) {
  runtime_.begin_step(version_);
  runtime_.compute(setup_.update_work(shard_.begin, shard_.size),
                   [&] { optimizer_->step(values_, gradient); });
  ++version_;
  gradients_applied_ += gradients;
  runtime_.end_step(std::numeric_limits<double>::quiet_NaN(), staleness);
}

// The step's pushes are here: add them up in worker order, so that the
// sum has the same bits on every run, and average them when backups' are
// missing (each was scaled for all replicas' batches).
void ShardServer::apply_aggregate() {
  const int taken = pending_;
  const int64_t operations = taken - 1 + (taken < replicas_ ? 1 : 0);  // adds, and the average
  runtime_.compute(packing(elementwise_work("sum gradients", shard_.size * operations, 1, 3)), [&] {
    bool first = true;
    for (int r = 0; r < replicas_; ++r) {
      if (!aggregated_[r]) continue;
      if (first) {
        std::copy(gradients_[r].begin(), gradients_[r].end(), sum_.begin());
      } else {
        nn::kernels::kernels().add(sum_.data(), gradients_[r].data(), shard_.size);
      }
      first = false;
    }
    if (taken == replicas_) return;
    const float scale = static_cast<float>(replicas_) / static_cast<float>(taken);
    for (float& g : sum_) g *= scale;
  });
  std::fill(aggregated_.begin(), aggregated_.end(), 0);
  pending_ = 0;
  apply(sum_, -1, taken);
  answer_ready_pulls();
}

// The pulls that waited (sync: for the update just applied; bounded: for
// the slowest replica) and may go now.
void ShardServer::answer_ready_pulls() {
  for (auto it = deferred_.begin(); it != deferred_.end();) {
    if (ready(*it)) {
      answer(*it);
      it = deferred_.erase(it);
    } else {
      ++it;
    }
  }
}

// Whatever waits is answered, the chief's request for the final shard last.
void ShardServer::answer_final() {
  for (const Message& pending : deferred_) answer(pending);
  deferred_.clear();
  answer(*final_request_);
  final_request_.reset();
}

// The shard's weights; only their size in timing fidelity.
FloatRange ShardServer::weights() {
  return values_.empty() && shard_.size > 0 ? FloatRange::sized(shard_.size)
                                            : FloatRange(values_.data(), shard_.size);
}

}  // namespace distlab::strategy
