// The cluster's numbering and the splitting of buffers into parts: what
// every backend and strategy relies on to agree on who is who and who owns
// which floats, and how a buffer travels in segments.
#include <catch2/catch.hpp>
#include <vector>

#include "strategy/float_range.h"
#include "strategy/task.h"

using namespace distlab::strategy;

TEST_CASE("tasks are numbered chief, workers, then parameter servers") {
  const ClusterSpec cluster{.chiefs = 1, .workers = 3, .ps = 2};
  const auto tasks = cluster.tasks();
  REQUIRE(tasks.size() == 6);
  CHECK(tasks[0] == TaskId{Role::kChief, 0});
  CHECK(tasks[3] == TaskId{Role::kWorker, 2});
  CHECK(tasks[5] == TaskId{Role::kPs, 1});
  for (int i = 0; i < cluster.task_count(); ++i) CHECK(cluster.ordinal(cluster.task_at(i)) == i);
  CHECK(task_name(tasks[4]) == "ps:0");
}

TEST_CASE("replica ranks put the chief first and leave parameter servers out") {
  const ClusterSpec with_chief{.chiefs = 1, .workers = 2, .ps = 1};
  CHECK(with_chief.replicas() == 3);
  CHECK(with_chief.replica(0) == TaskId{Role::kChief, 0});
  CHECK(with_chief.replica(2) == TaskId{Role::kWorker, 1});
  CHECK(with_chief.replica_rank({Role::kWorker, 1}) == 2);
  CHECK(with_chief.replica_rank({Role::kPs, 0}) == -1);
  const ClusterSpec no_chief{.chiefs = 0, .workers = 2, .ps = 0};
  CHECK(no_chief.replica(0) == TaskId{Role::kWorker, 0});
  CHECK(no_chief.replica_rank({Role::kWorker, 1}) == 1);
  CHECK_THROWS(no_chief.replica(2));
}

TEST_CASE("the replicas in rank order are one list per cluster shape") {
  const ClusterSpec cluster{.chiefs = 1, .workers = 3, .ps = 2};
  const std::vector<TaskId>& ring = replicas_in_rank_order(cluster);
  REQUIRE(ring.size() == 4);
  for (int r = 0; r < 4; ++r) CHECK(ring[r] == cluster.replica(r));
  // Another task of the same shape (servers apart) gets the same list.
  CHECK(&replicas_in_rank_order({.chiefs = 1, .workers = 3, .ps = 0}) == &ring);
  const std::vector<TaskId>& no_chief = replicas_in_rank_order({.chiefs = 0, .workers = 3});
  CHECK(&no_chief != &ring);
  CHECK(no_chief.front() == TaskId{Role::kWorker, 0});
}

TEST_CASE("parts of a buffer cover it exactly and differ by at most one") {
  const int64_t size = GENERATE(0, 1, 7, 64, 1001);
  const int64_t parts = GENERATE(1, 2, 3, 8, 13);
  CHECK(part_begin(size, parts, 0) == 0);
  CHECK(part_begin(size, parts, parts) == size);
  int64_t smallest = size, largest = 0;
  for (int64_t i = 0; i < parts; ++i) {
    const int64_t n = part_begin(size, parts, i + 1) - part_begin(size, parts, i);
    CHECK(n >= 0);
    smallest = std::min(smallest, n);
    largest = std::max(largest, n);
  }
  CHECK(largest - smallest <= 1);
}

TEST_CASE("a buffer is cut into near-equal segments of at most the segment size") {
  CHECK(segment_count(1000, 0) == 1);
  CHECK(segment_count(1000, 1000) == 1);
  CHECK(segment_count(1001, 1000) == 2);
  CHECK(segment_count(0, 16) == 1);
  std::vector<float> values(10);
  const FloatRange all(values);
  CHECK(segment_of(all, 3, 0).size() == 4);  // the first size % count hold one more
  CHECK(segment_of(all, 3, 1).data() == values.data() + 4);
  CHECK(segment_of(all, 3, 2).size() == 3);
}

TEST_CASE("a range without values keeps its size through sub-ranges") {
  const FloatRange sized = FloatRange::sized(100);
  CHECK_FALSE(sized.has_values());
  CHECK(sized.sub(10, 30).size() == 30);
  CHECK_FALSE(sized.sub(10, 30).has_values());
  float values[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  const FloatRange real(values, 8);
  CHECK(real.sub(3, 2).values()[1] == 4);
}
