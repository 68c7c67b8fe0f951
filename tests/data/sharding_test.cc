#include "nn/data/sharding.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>

#include "common/error.h"

using namespace distlab::nn;

namespace {

bool is_permutation_of_n(std::vector<int64_t> v, int64_t n) {
  std::sort(v.begin(), v.end());
  std::vector<int64_t> expected(n);
  std::iota(expected.begin(), expected.end(), int64_t{0});
  return v == expected;
}

}  // namespace

TEST_CASE("An epoch order is a permutation") {
  CHECK(is_permutation_of_n(epoch_order(1000, 1, 0), 1000));
  CHECK(epoch_order(0, 1, 0).empty());
  CHECK(epoch_order(1, 1, 0) == std::vector<int64_t>{0});
}

TEST_CASE("The same seed and epoch give the same order and others differ") {
  CHECK(epoch_order(500, 9, 3) == epoch_order(500, 9, 3));
  CHECK(epoch_order(500, 9, 3) != epoch_order(500, 9, 4));
  CHECK(epoch_order(500, 9, 3) != epoch_order(500, 10, 3));
}

TEST_CASE("Every example is in exactly one shard and shard sizes differ by at most one") {
  const int workers = GENERATE(range(1, 9));
  const int64_t n = GENERATE(0, 1, 7, 100, 1001);
  const int64_t epoch = GENERATE(0, 5);
  CAPTURE(workers, n, epoch);
  const auto order = epoch_order(n, 77, epoch);
  std::vector<int64_t> all;
  int64_t smallest = n, largest = 0;
  for (int w = 0; w < workers; ++w) {
    const auto s = shard(order, w, workers);
    REQUIRE(static_cast<int64_t>(s.size()) == shard_size(n, w, workers));
    smallest = std::min<int64_t>(smallest, s.size());
    largest = std::max<int64_t>(largest, s.size());
    all.insert(all.end(), s.begin(), s.end());
  }
  CHECK(is_permutation_of_n(all, n));
  CHECK(largest - smallest <= 1);
}

TEST_CASE("A shard takes every workers-th position starting at the worker") {
  const std::vector<int64_t> order{10, 11, 12, 13, 14, 15, 16};
  CHECK(shard(order, 0, 3) == std::vector<int64_t>{10, 13, 16});
  CHECK(shard(order, 1, 3) == std::vector<int64_t>{11, 14});
  CHECK(shard(order, 2, 3) == std::vector<int64_t>{12, 15});
}

TEST_CASE("Batch samplers cover every example once per epoch in equal step counts") {
  const auto [n, batch_size, workers] = GENERATE(table<int64_t, int64_t, int>({
      {100, 10, 1},
      {101, 10, 1},
      {100, 10, 4},
      {103, 8, 4},
      {10, 4, 3},  // shards 4, 3, 3: the small ones end one short
      {9, 3, 2},   // shards 5, 4: last batches of 2 and 1
      {7, 3, 2},   // shards 4, 3: worker 1's last batch is empty
      {5, 64, 8},  // fewer examples than workers
      {60000, 128, 3},
  }));
  CAPTURE(n, batch_size, workers);
  for (int64_t epoch : {0, 1}) {
    std::vector<int64_t> seen;
    std::vector<BatchSampler> samplers;
    for (int w = 0; w < workers; ++w) samplers.emplace_back(n, batch_size, 123, w, workers);
    const int64_t steps = samplers[0].steps_per_epoch();
    for (int64_t step = 0; step < steps; ++step) {
      int64_t global = 0;
      for (auto& s : samplers) {
        REQUIRE(s.steps_per_epoch() == steps);
        const auto b = s.batch(epoch, step);
        REQUIRE(s.local_batch_size(step) == static_cast<int64_t>(b.size()));
        REQUIRE(static_cast<int64_t>(b.size()) <= batch_size);
        if (step + 1 < steps) REQUIRE(static_cast<int64_t>(b.size()) == batch_size);
        global += static_cast<int64_t>(b.size());
        seen.insert(seen.end(), b.begin(), b.end());
      }
      REQUIRE(samplers[0].global_batch_size(step) == global);
    }
    CHECK(is_permutation_of_n(seen, n));
  }
}

TEST_CASE("A batch sampler follows the epoch order and changes it each epoch") {
  BatchSampler sampler(50, 7, 5, 1, 2);
  CHECK(sampler.steps_per_epoch() == 4);
  CHECK(sampler.shard_size() == 25);
  const auto order = shard(epoch_order(50, 5, 2), 1, 2);
  const auto b = sampler.batch(2, 1);
  CHECK(std::vector<int64_t>(b.begin(), b.end()) ==
        std::vector<int64_t>(order.begin() + 7, order.begin() + 14));
  const auto last = sampler.batch(2, 3);
  CHECK(last.size() == 4);  // 25 = 3 * 7 + 4
  const std::vector<int64_t> epoch2(last.begin(), last.end());
  const auto other = sampler.batch(3, 3);
  CHECK(std::vector<int64_t>(other.begin(), other.end()) != epoch2);
}

TEST_CASE("Impossible sharding arguments are refused") {
  CHECK_THROWS_AS(BatchSampler(10, 0, 1, 0, 1), distlab::Error);
  CHECK_THROWS_AS(BatchSampler(10, 2, 1, 2, 2), distlab::Error);
  CHECK_THROWS_AS(BatchSampler(10, 2, 1, 0, 0), distlab::Error);
  CHECK_THROWS_AS(epoch_order(-1, 1, 0), distlab::Error);
  BatchSampler ok(10, 4, 1, 0, 1);
  CHECK_THROWS_AS(ok.batch(0, 3), distlab::Error);
}

TEST_CASE("A worker whose shard is one short can get an empty last batch") {
  // 7 examples over 2 workers: shards of 4 and 3, so batches of 3 take
  // 2 steps on both, and worker 1 has nothing left for its second step.
  BatchSampler first(7, 3, 1, 0, 2);
  BatchSampler second(7, 3, 1, 1, 2);
  CHECK(first.steps_per_epoch() == 2);
  CHECK(second.steps_per_epoch() == 2);
  CHECK(first.batch(0, 1).size() == 1);
  CHECK(second.batch(0, 1).empty());
  CHECK(second.global_batch_size(1) == 1);
  CHECK(second.global_batch_size(0) == 6);
}

TEST_CASE("A global batch is split among the workers as tf.data rebatches it") {
  const auto [n, batch_size, workers] = GENERATE(table<int64_t, int64_t, int>({
      {300, 128, 3},  // 43 + 43 + 42, and a last window of 44: 15 + 15 + 14
      {100, 10, 4},
      {103, 8, 4},
      {10, 4, 3},  // windows of 4, 4, 2: the last leaves worker 2 empty
      {5, 64, 8},  // fewer examples than workers
      {60000, 128, 3},
  }));
  CAPTURE(n, batch_size, workers);
  for (int64_t epoch : {0, 1}) {
    const std::vector<int64_t> order = epoch_order(n, 9, epoch);
    std::vector<BatchSampler> samplers;
    for (int w = 0; w < workers; ++w)
      samplers.emplace_back(n, batch_size, 9, w, workers, BatchScope::kGlobal);
    const int64_t steps = samplers[0].steps_per_epoch();
    REQUIRE(steps == (n + batch_size - 1) / batch_size);
    for (int64_t step = 0; step < steps; ++step) {
      // The workers' slices, in worker order, are the step's window of the
      // epoch's order, and their sizes differ by one at most.
      std::vector<int64_t> window;
      int64_t smallest = batch_size, largest = 0;
      for (auto& s : samplers) {
        REQUIRE(s.steps_per_epoch() == steps);
        const auto b = s.batch(epoch, step);
        REQUIRE(s.local_batch_size(step) == static_cast<int64_t>(b.size()));
        smallest = std::min<int64_t>(smallest, b.size());
        largest = std::max<int64_t>(largest, b.size());
        window.insert(window.end(), b.begin(), b.end());
      }
      const int64_t begin = step * batch_size;
      const int64_t end = std::min(n, begin + batch_size);
      REQUIRE(window == std::vector<int64_t>(order.begin() + begin, order.begin() + end));
      REQUIRE(samplers[0].global_batch_size(step) == end - begin);
      REQUIRE(largest - smallest <= 1);
    }
  }
  if (n == 300) {
    BatchSampler third(300, 128, 9, 2, 3, BatchScope::kGlobal);
    CHECK(BatchSampler(300, 128, 9, 0, 3, BatchScope::kGlobal).local_batch_size(0) == 43);
    CHECK(third.local_batch_size(0) == 42);
    CHECK(third.local_batch_size(2) == 14);  // 300 - 256 = 44: 15 + 15 + 14
  }
}
