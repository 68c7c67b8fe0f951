#include "nn/data/sharding.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "common/error.h"
#include "nn/random.h"

namespace distlab::nn {
namespace {

void check_worker(int worker, int workers) {
  if (workers < 1 || worker < 0 || worker >= workers) {
    throw Error(
        fmt::format("sharding: worker {} of {} is not a valid worker index", worker, workers));
  }
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, int64_t epoch) {
  if (n < 0) throw Error(fmt::format("epoch_order: n must not be negative, got {}", n));
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), int64_t{0});
  Rng rng(derive_seed(seed, SeedUse::kShuffle, {static_cast<uint64_t>(epoch)}));
  shuffle(order, rng);
  return order;
}

int64_t shard_size(int64_t n, int worker, int workers) {
  check_worker(worker, workers);
  return n / workers + (worker < n % workers ? 1 : 0);
}

std::vector<int64_t> shard(const std::vector<int64_t>& order, int worker, int workers) {
  std::vector<int64_t> out;
  out.reserve(shard_size(static_cast<int64_t>(order.size()), worker, workers));
  for (std::size_t i = worker; i < order.size(); i += workers) out.push_back(order[i]);
  return out;
}

BatchSampler::BatchSampler(int64_t n, int64_t batch_size, uint64_t seed, int worker, int workers,
                           BatchScope scope)
    : n_(n),
      batch_size_(batch_size),
      seed_(seed),
      worker_(worker),
      workers_(workers),
      scope_(scope) {
  if (n < 0) throw Error(fmt::format("BatchSampler: n must not be negative, got {}", n));
  if (batch_size < 1) {
    throw Error(fmt::format("BatchSampler: batch size must be at least 1, got {}", batch_size));
  }
  shard_size_ = nn::shard_size(n, worker, workers);
  steps_per_epoch_ = scope == BatchScope::kGlobal
                         ? ceil_div(n, batch_size)
                         : ceil_div(nn::shard_size(n, 0, workers), batch_size);
}

int64_t BatchSampler::window(int64_t step) const {
  return std::clamp<int64_t>(n_ - step * batch_size_, 0, batch_size_);
}

int64_t BatchSampler::slice_start(int64_t size) const {
  return worker_ * (size / workers_) + std::min<int64_t>(worker_, size % workers_);
}

int64_t BatchSampler::slice_size(int64_t size) const {
  return size / workers_ + (worker_ < size % workers_ ? 1 : 0);
}

std::span<const int64_t> BatchSampler::batch(int64_t epoch, int64_t step) {
  if (step < 0 || step >= steps_per_epoch_) {
    throw Error(fmt::format("BatchSampler: step {} is outside the epoch's {} steps", step,
                            steps_per_epoch_));
  }
  if (epoch != cached_epoch_) {
    order_ = scope_ == BatchScope::kGlobal
                 ? epoch_order(n_, seed_, epoch)
                 : shard(epoch_order(n_, seed_, epoch), worker_, workers_);
    cached_epoch_ = epoch;
  }
  if (scope_ == BatchScope::kGlobal) {
    const int64_t size = window(step);
    return std::span<const int64_t>(order_).subspan(step * batch_size_ + slice_start(size),
                                                    slice_size(size));
  }
  const int64_t begin = std::min(step * batch_size_, shard_size_);
  const int64_t end = std::min(begin + batch_size_, shard_size_);
  return std::span<const int64_t>(order_).subspan(begin, end - begin);
}

int64_t BatchSampler::local_batch_size(int64_t step) const {
  if (scope_ == BatchScope::kGlobal) return slice_size(window(step));
  return std::clamp<int64_t>(shard_size_ - step * batch_size_, 0, batch_size_);
}

int64_t BatchSampler::global_batch_size(int64_t step) const {
  if (scope_ == BatchScope::kGlobal) return window(step);
  // Shards come in two sizes: n / workers + 1 (the first n % workers of
  // them) and n / workers.
  const int64_t base = n_ / workers_;
  const int64_t larger = n_ % workers_;
  auto at_step = [&](int64_t size) {
    return std::clamp<int64_t>(size - step * batch_size_, 0, batch_size_);
  };
  return larger * at_step(base + 1) + (workers_ - larger) * at_step(base);
}

}  // namespace distlab::nn
