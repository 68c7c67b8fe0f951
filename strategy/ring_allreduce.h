// Bandwidth-optimal ring all-reduce (Patarasuk & Yuan, 2009): the buffer is
// cut into p chunks; p - 1 rounds of reduce-scatter leave each member with
// the full sum of one chunk, p - 1 rounds of all-gather hand every sum
// around. Each member sends and receives 2(p-1)/p of the buffer.
//
// The sum of each chunk is accumulated in ring order, starting at a fixed
// member, and then copied: every member ends with bit-identical values, and
// the same run gives the same bits on every backend.
#pragma once

#include <cstdint>
#include <vector>

#include "strategy/float_range.h"
#include "strategy/runtime.h"

namespace distlab::strategy {

// Sums `data` over the members of `ring` (all of them call it with ranges of
// the same size), in place. `rank` is the caller's position in `ring`.
void ring_allreduce(Runtime& runtime, const std::vector<TaskId>& ring, int rank, FloatRange data,
                    int64_t step);

// The same, one bucket of at most `bucket_floats` after another (0: one
// bucket), as frameworks do to start reducing before the whole gradient is
// ready.
void bucketed_allreduce(Runtime& runtime, const std::vector<TaskId>& ring, int rank,
                        FloatRange data, int64_t bucket_floats, int64_t step);

}  // namespace distlab::strategy
