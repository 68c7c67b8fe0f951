// Which examples each worker trains on, and in what order: a fresh seeded
// permutation every epoch, dealt out to the workers like cards. Every worker
// computes the same permutation from the same seed, so no coordination is
// needed and a simulated run and a real one see identical batches.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace distlab::nn {

// A permutation of 0..n-1 for this epoch, from Rng(derive_seed(seed, {epoch})).
std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, int64_t epoch);

// The positions worker, worker + workers, worker + 2 * workers, ... of
// `order`: every example lands in exactly one shard and shard sizes differ
// by at most one (the first n % workers shards hold one more).
std::vector<int64_t> shard(const std::vector<int64_t>& order, int worker, int workers);

// Size of `worker`'s shard of n examples.
int64_t shard_size(int64_t n, int worker, int workers);

// Whose batch a batch size is: one worker's (each worker draws its batches
// from its own shard, as under TensorFlow's ParameterServerStrategy), or
// every worker's together (a global batch that the workers split, as Keras
// splits a data set's batch under MultiWorkerMirroredStrategy and
// MirroredStrategy).
enum class BatchScope { kPerWorker, kGlobal };

// One worker's batches, epoch by epoch.
//
// kPerWorker: step s of an epoch takes positions [s * batch_size,
// (s + 1) * batch_size) of the worker's shard of that epoch's order.
//
// steps_per_epoch() is the same on every worker (a synchronous strategy
// needs every worker to take the same number of steps): it is the step count
// of the largest shard. So the last batch of an epoch may be shorter than
// batch_size, and on a worker whose shard is one example smaller it may be
// shorter still, even empty (when that shard size is a multiple of
// batch_size), as with TensorFlow's partial batches under
// MultiWorkerMirroredStrategy. global_batch_size(step) says how many
// examples all workers together hold at a step: the right divisor for an
// averaged loss.
//
// kGlobal: step s takes positions [s * batch_size, (s + 1) * batch_size) of
// the epoch's order (fewer at the epoch's end), and worker w the w-th of
// `workers` consecutive slices of that window, whose sizes differ by at most
// one (the first window % workers slices hold one more): a global batch of
// 128 over 3 workers is 43 + 43 + 42, as tf.data's rebatching splits it.
// Every worker takes ceil(n / batch_size) steps an epoch.
class BatchSampler {
 public:
  BatchSampler(int64_t n, int64_t batch_size, uint64_t seed, int worker, int workers,
               BatchScope scope = BatchScope::kPerWorker);

  int64_t steps_per_epoch() const { return steps_per_epoch_; }
  int64_t batch_size() const { return batch_size_; }
  // kPerWorker: the examples of this worker's shard.
  int64_t shard_size() const { return shard_size_; }

  // Indices into the data set for this worker's batch at (epoch, step),
  // 0 <= step < steps_per_epoch(). The span points into the sampler and
  // stays valid until the next call with another epoch.
  std::span<const int64_t> batch(int64_t epoch, int64_t step);

  // The size of this worker's batch at a step, the same each epoch: what
  // batch(epoch, step).size() is, without shuffling anything.
  int64_t local_batch_size(int64_t step) const;
  // The sum of every worker's batch size at this step (the same each epoch).
  int64_t global_batch_size(int64_t step) const;

 private:
  // kGlobal: where this worker's slice of a window of `size` examples
  // starts within it, and its size.
  int64_t slice_start(int64_t size) const;
  int64_t slice_size(int64_t size) const;
  int64_t window(int64_t step) const;

  int64_t n_;
  int64_t batch_size_;
  uint64_t seed_;
  int worker_;
  int workers_;
  BatchScope scope_;
  int64_t shard_size_;
  int64_t steps_per_epoch_;
  std::optional<int64_t> cached_epoch_;
  // The examples this replica takes cached_epoch_'s batches from, in
  // order: kPerWorker, its shard of the epoch's order; kGlobal, the whole
  // order, each step's window then sliced among the replicas.
  std::vector<int64_t> order_;
};

}  // namespace distlab::nn
