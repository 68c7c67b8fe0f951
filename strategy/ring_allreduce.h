// Bandwidth-optimal ring all-reduce (Patarasuk & Yuan, 2009): the buffer is
// cut into p chunks; p - 1 rounds of reduce-scatter leave each member with
// the full sum of one chunk, p - 1 rounds of all-gather hand every sum
// around. Each member sends and receives 2(p-1)/p of the buffer.
//
// Pipelined, as NCCL and Gloo do it: each chunk travels as segments of at
// most `segment_floats`, and a segment moves on as soon as it has been
// added to (reduce-scatter) or has arrived (all-gather), so that one round's
// sending overlaps the previous round's arrival and additions.
//
// Copying as little as Gloo's ring does (runtime.h's messages without
// copies): every receive is posted before the all-reduce sends anything; the
// all-gather's sums land straight in the caller's buffer and are passed on
// from it, as is the member's own chunk in the first round; a partial sum
// of the reduce-scatter is added to in its own buffer and passed on as it
// is. So the floats are copied only by the transport, and the buffer is the
// caller's again when the function returns.
//
// The sum of each chunk is accumulated in ring order, starting at a fixed
// member: every member ends with bit-identical values, the same for every
// segment size, and the same run gives the same bits on every backend.
//
// With a half-precision wire (gradient_wire.h) a member turns each arriving
// partial sum back into float32, adds its own values in float32 and rounds
// the result for the next member; the member that completes a chunk keeps
// the sum as rounded, the values every other member receives, so that the
// members still end with the same bits.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "strategy/float_range.h"
#include "strategy/gradient_wire.h"
#include "strategy/runtime.h"

namespace distlab::strategy {

// Sums `data` over the members of `ring` (all of them call it with ranges of
// the same size and the same segment size), in place. `rank` is the
// caller's position in `ring`; `segment_floats` <= 0 sends each chunk whole;
// `wire` is the format the values travel in.
void ring_allreduce(Runtime& runtime, const std::vector<TaskId>& ring, int rank, FloatRange data,
                    int64_t step, int64_t segment_floats = 0,
                    GradientType wire = GradientType::kFloat32);

// The same, one bucket of at most `bucket_floats` after another (0: one
// bucket), as frameworks do to start reducing before the whole gradient is
// ready.
void bucketed_allreduce(Runtime& runtime, const std::vector<TaskId>& ring, int rank,
                        FloatRange data, int64_t bucket_floats, int64_t segment_floats,
                        int64_t step, GradientType wire = GradientType::kFloat32);

// bucketed_allreduce for communication that overlaps the backward pass, as
// DDP's does: buckets of at most `bucket_floats` (0: kOverlapBucketBytes)
// cut from the end of `data`, the last layers' gradients that the backward
// pass makes final first, each reduced as soon as `before_bucket(its first
// float, its floats)` returns (the caller waits there for the backward
// pass). Every member cuts the same buckets, so the sums keep their order.
void overlapped_allreduce(Runtime& runtime, const std::vector<TaskId>& ring, int rank,
                          FloatRange data, int64_t bucket_floats, int64_t segment_floats,
                          int64_t step, GradientType wire,
                          const std::function<void(int64_t begin, int64_t floats)>& before_bucket);

}  // namespace distlab::strategy
