// A parameter server (parameter_server.h): one shard of the parameters
// with its own optimizer, serving the workers' requests one at a time in
// the order they arrive, one method per request, until the chief says it
// is done.
//
//   async: each push is applied on arrival; a pull is answered at once,
//          or, with a staleness bound (stale-synchronous), once every
//          other replica still training is within the bound of its step;
//   sync:  a push waits for the other pushes of the step, then their sum
//          (in worker order) is applied once; a worker's pull waits until
//          its last push has been applied or dropped. With backup workers
//          (TensorFlow's SyncReplicasOptimizer), a step takes the first
//          `replicas_to_aggregate` pushes computed on the shard's current
//          weights, averages them and drops the late ones, which were
//          computed on weights no longer current.
//
// Pulls that cannot be answered yet wait in `deferred_`; once every worker
// has stopped, the shard is final and everything that waits is answered.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "nn/optimizer.h"
#include "strategy/replica.h"
#include "strategy/runtime.h"
#include "strategy/training_setup.h"

namespace distlab::strategy {

// PS j's part of the parameter buffer: k near-equal contiguous ranges.
struct Shard {
  int64_t begin = 0;
  int64_t size = 0;
};
Shard shard_of(int64_t floats, int servers, int j);

// The floats of a shard with its optimizer state, as a server sends them
// for a checkpoint: values, then each slot.
int64_t shard_state_floats(const TrainingSetup& setup, const Shard& shard);
// A server's part of a restore: its shard's state, then the schedule's
// learning rate where the model has one.
int64_t shard_restore_floats(const TrainingSetup& setup, const Shard& shard);

class ShardServer {
 public:
  // Starts from the same initial weights as every replica.
  ShardServer(Runtime& runtime, const TrainingSetup& setup);

  // Takes the chief's part of the checkpoint when resuming, then serves
  // until the chief's kDone. Its outcome: the gradients applied.
  TaskOutcome run();

 private:
  void restore();
  void serve(Message request);

  // One method per request (PsRequest).
  void pull(Message request);  // kPull and kCheckpoint
  void push(const Message& first, int rank);
  void stop(int rank);
  void rejoin(const Message& request, int rank);
  void hold_final(Message request);
  void set_learning_rate(const Message& request);

  bool ready(const Message& pull_request) const;
  int quorum() const;
  bool bounded() const { return !sync_ && setup_.strategy().staleness_bound >= 0; }
  void answer(const Message& pull_request);
  void send_state(const Message& checkpoint_request);
  FloatRange receive_push(const Message& first, int rank);
  void apply(std::span<const float> gradient, int64_t staleness, int gradients);
  void apply_aggregate();
  void answer_ready_pulls();
  void answer_final();
  FloatRange weights();

  Runtime& runtime_;
  const TrainingSetup& setup_;
  const int replicas_;
  const bool sync_;
  const Shard shard_;
  const int64_t segment_floats_;
  const GradientType wire_;

  // Full fidelity only (empty or null in timing fidelity).
  std::vector<float> values_;  // (shard size) the shard's weights
  std::unique_ptr<nn::Optimizer> optimizer_;
  // Each worker's latest gradient in float32 (sync: this step's, until all
  // are in; async: one buffer), allocated once, as a push of a large model
  // arrives in segments; and their sum (sync).
  std::vector<std::vector<float>> gradients_;
  std::vector<float> sum_;

  int64_t version_ = 0;  // updates applied to this shard
  int64_t gradients_applied_ = 0;
  int64_t gradients_dropped_ = 0;  // sync: pushes computed on weights no longer current
  const int aggregate_;            // sync: the pushes a step applies (all replicas' but backups)
  std::vector<int64_t> steps_reached_;  // per worker: after its latest push
  // Sync: per worker, the version its latest push was computed on (-1:
  // none since the start), and whether this step takes it.
  std::vector<int64_t> pushed_version_;
  std::vector<char> aggregated_;
  int pending_ = 0;  // sync: the pushes this step has taken so far
  // Pulls that wait for an update (sync), for the slowest replica
  // (bounded), or for the end.
  std::vector<Message> deferred_;
  // Whether each worker has stopped (a restarted worker may say it twice),
  // and the chief's latest request for the final shard (a restarted chief
  // asks again).
  std::vector<char> stopped_ranks_;
  int stopped_ = 0;
  std::optional<Message> final_request_;
  bool done_ = false;
};

}  // namespace distlab::strategy
