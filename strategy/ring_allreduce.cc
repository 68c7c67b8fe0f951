#include "strategy/ring_allreduce.h"

#include <algorithm>
#include <string>

#include "common/error.h"

namespace distlab::strategy {
namespace {

int wrap(int i, int p) {
  return ((i % p) + p) % p;
}

FloatRange chunk(FloatRange data, int p, int i) {
  const int64_t begin = part_begin(data.size(), p, i);
  return data.sub(begin, part_begin(data.size(), p, i + 1) - begin);
}

void send_chunk(Runtime& runtime, TaskId to, FloatRange c, int64_t step) {
  runtime.send(to, make_message(Tag::kRing, step, c.size(), c.data()));
}

Message receive_chunk(Runtime& runtime, TaskId from, FloatRange c) {
  Message m = runtime.recv(from, Tag::kRing);
  if (m.bytes != static_cast<uint64_t>(c.size()) * sizeof(float)) {
    throw Error("ring all-reduce: " + task_name(from) + " sent " + std::to_string(m.bytes) +
                " bytes where " + std::to_string(c.size() * sizeof(float)) + " were expected");
  }
  return m;
}

}  // namespace

void ring_allreduce(Runtime& runtime, const std::vector<TaskId>& ring, int rank, FloatRange data,
                    int64_t step) {
  const int p = static_cast<int>(ring.size());
  if (p <= 1) return;
  const TaskId next = ring[wrap(rank + 1, p)];
  const TaskId previous = ring[wrap(rank - 1, p)];
  // Chunks come in two sizes, so two costs serve every round.
  const int64_t small = data.size() / p;
  const Work add_small = elementwise_work("ring reduce", small, 1, 3);
  const Work add_large = elementwise_work("ring reduce", small + 1, 1, 3);

  // Reduce-scatter: in round r, pass on the partial sum of chunk rank - r
  // and add our own values to the partial sum of chunk rank - r - 1. After
  // p - 1 rounds this member holds the complete sum of chunk rank + 1.
  for (int r = 0; r < p - 1; ++r) {
    send_chunk(runtime, next, chunk(data, p, wrap(rank - r, p)), step);
    const FloatRange mine = chunk(data, p, wrap(rank - r - 1, p));
    const Message partial = receive_chunk(runtime, previous, mine);
    runtime.compute(mine.size() == small ? add_small : add_large, [&] {
      float* out = mine.data();
      const float* in = partial.values.data();
      for (int64_t i = 0; i < mine.size(); ++i) out[i] = in[i] + out[i];
    });
  }
  // All-gather: in round r, pass on the complete sum of chunk rank + 1 - r
  // and take the complete sum of chunk rank - r.
  for (int r = 0; r < p - 1; ++r) {
    send_chunk(runtime, next, chunk(data, p, wrap(rank + 1 - r, p)), step);
    const FloatRange theirs = chunk(data, p, wrap(rank - r, p));
    const Message complete = receive_chunk(runtime, previous, theirs);
    if (theirs.has_values())
      std::copy(complete.values.begin(), complete.values.end(), theirs.data());
  }
}

void bucketed_allreduce(Runtime& runtime, const std::vector<TaskId>& ring, int rank,
                        FloatRange data, int64_t bucket_floats, int64_t step) {
  if (bucket_floats <= 0 || bucket_floats >= data.size()) {
    ring_allreduce(runtime, ring, rank, data, step);
    return;
  }
  for (int64_t begin = 0; begin < data.size(); begin += bucket_floats) {
    const int64_t count = std::min(bucket_floats, data.size() - begin);
    ring_allreduce(runtime, ring, rank, data.sub(begin, count), step);
  }
}

}  // namespace distlab::strategy
