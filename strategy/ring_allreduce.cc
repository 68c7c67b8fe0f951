#include "strategy/ring_allreduce.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>

#include "common/error.h"
#include "nn/kernels/kernels.h"

namespace distlab::strategy {
namespace {

int wrap(int i, int p) {
  return ((i % p) + p) % p;
}

// Where the all-reduce cuts `data`: p near-equal chunks, each cut into
// near-equal segments of at most `segment_floats`, one message each. Every
// member derives the same cuts from the same sizes.
class RingCuts {
 public:
  RingCuts(FloatRange data, int p, int64_t segment_floats)
      : data_(data), p_(p), segment_floats_(segment_floats) {}

  int64_t segments(int chunk) const {
    const int64_t size = chunk_size(chunk);
    if (segment_floats_ <= 0 || size <= segment_floats_) return 1;
    return (size + segment_floats_ - 1) / segment_floats_;
  }
  FloatRange segment(int chunk, int64_t s) const {
    const int64_t chunk_begin = part_begin(data_.size(), p_, wrap(chunk, p_));
    const int64_t n = segments(chunk);
    const int64_t size = chunk_size(chunk);
    const int64_t begin = part_begin(size, n, s);
    return data_.sub(chunk_begin + begin, part_begin(size, n, s + 1) - begin);
  }

 private:
  int64_t chunk_size(int chunk) const {
    const int i = wrap(chunk, p_);
    return part_begin(data_.size(), p_, i + 1) - part_begin(data_.size(), p_, i);
  }

  FloatRange data_;
  int p_;
  int64_t segment_floats_;
};

// The modelled cost of adding `count` floats into a received segment (a
// read-modify-write of 3 floats per element). Segments come in a handful of
// sizes, so each cost is built once per all-reduce (this matters when a
// simulation runs a thousand members).
class AddCosts {
 public:
  const Work& of(int64_t count) {
    auto found = costs_.find(count);
    if (found == costs_.end()) {
      found = costs_.emplace(count, elementwise_work("ring reduce", count, 1, 3)).first;
    }
    return found->second;
  }

 private:
  std::map<int64_t, Work> costs_;
};

// One piece of work after another, as one.
Work chained(std::string label, std::initializer_list<Work> parts) {
  Work work{.label = std::move(label)};
  for (const Work& part : parts)
    work.items.insert(work.items.end(), part.items.begin(), part.items.end());
  return work;
}

// `values` rounded to `wire` as a ring message, costed as the sender's compute.
Message encoded(Runtime& runtime, int64_t step, FloatRange values, GradientType wire) {
  Message m = gradient_message(Tag::kRing, step, FloatRange::sized(values.size()), wire);
  runtime.compute(encode_work(values.size(), wire), [&] {
    if (values.has_values()) m = gradient_message(Tag::kRing, step, values, wire);
  });
  return m;
}

constexpr const char* kWhat = "ring all-reduce";

// The ring of the header with a half-precision wire: the same rounds and
// segments, each arriving partial sum read back into float32 before this
// member's values are added, and rounded again for the next member.
void rounded_ring_allreduce(Runtime& runtime, const std::vector<TaskId>& ring, int rank,
                            FloatRange data, int64_t step, int64_t segment_floats,
                            GradientType wire) {
  const int p = static_cast<int>(ring.size());
  const TaskId next = ring[wrap(rank + 1, p)];
  const TaskId previous = ring[wrap(rank - 1, p)];
  const RingCuts cuts(data, p, segment_floats);
  const auto& k = nn::kernels::kernels();
  std::vector<float> sum;  // a partial sum in float32, this member's values added

  for (int64_t s = 0; s < cuts.segments(rank); ++s) {
    runtime.send(next, encoded(runtime, step, cuts.segment(rank, s), wire));
  }
  for (int r = 0; r < p - 1; ++r) {
    const int chunk = rank - r - 1;
    const bool complete = r == p - 2;
    for (int64_t s = 0; s < cuts.segments(chunk); ++s) {
      const FloatRange mine = cuts.segment(chunk, s);
      const int64_t n = mine.size();
      const Message partial = runtime.recv(previous, Tag::kRing);
      read_gradient(partial, wire, FloatRange::sized(n), kWhat);  // its size, in both fidelities
      Message out = gradient_message(Tag::kRing, step, FloatRange::sized(n), wire);
      const Work work =
          chained("ring reduce", {decode_work(n, wire), elementwise_work("add", n, 1, 3),
                                  encode_work(n, wire), complete ? decode_work(n, wire) : Work{}});
      runtime.compute(work, [&] {
        if (!mine.has_values()) return;
        sum.resize(static_cast<std::size_t>(n));
        read_gradient(partial, wire, FloatRange(sum.data(), n), kWhat);
        k.add(sum.data(), mine.data(), n);
        out = gradient_message(Tag::kRing, step, FloatRange(sum.data(), n), wire);
        // The complete sum, as every other member will read it.
        if (complete) read_gradient(out, wire, mine, kWhat);
      });
      runtime.send(next, std::move(out));
    }
  }
  for (int r = 0; r < p - 1; ++r) {
    const int chunk = rank - r;
    for (int64_t s = 0; s < cuts.segments(chunk); ++s) {
      const FloatRange theirs = cuts.segment(chunk, s);
      Message total = runtime.recv(previous, Tag::kRing);
      read_gradient(total, wire, FloatRange::sized(theirs.size()), kWhat);
      runtime.compute(decode_work(theirs.size(), wire),
                      [&] { read_gradient(total, wire, theirs, kWhat); });
      if (r < p - 2) runtime.send(next, std::move(total));
    }
  }
}

}  // namespace

void ring_allreduce(Runtime& runtime, const std::vector<TaskId>& ring, int rank, FloatRange data,
                    int64_t step, int64_t segment_floats, GradientType wire) {
  const int p = static_cast<int>(ring.size());
  if (p <= 1) return;
  if (wire != GradientType::kFloat32) {
    rounded_ring_allreduce(runtime, ring, rank, data, step, segment_floats, wire);
    return;
  }
  const TaskId next = ring[wrap(rank + 1, p)];
  const TaskId previous = ring[wrap(rank - 1, p)];
  const RingCuts cuts(data, p, segment_floats);
  AddCosts add;
  const Message header = make_message(Tag::kRing, step, 0, nullptr);

  // Every message this member will receive, posted before any of them can
  // come (as Gloo's ring does): the reduce-scatter's partial sums keep
  // buffers of their own, the all-gather's complete sums land straight in
  // `data`. No region is written before this member is done reading it: a
  // complete sum exists only after every member's values went into it.
  std::vector<PostedReceive> partials, sums;
  for (int r = 0; r < p - 1; ++r) {
    const int chunk = rank - r - 1;
    for (int64_t s = 0; s < cuts.segments(chunk); ++s) {
      partials.push_back(runtime.post_recv(previous, Tag::kRing,
                                           FloatRange::sized(cuts.segment(chunk, s).size())));
    }
  }
  for (int r = 0; r < p - 1; ++r) {
    const int chunk = rank - r;
    for (int64_t s = 0; s < cuts.segments(chunk); ++s) {
      sums.push_back(runtime.post_recv(previous, Tag::kRing, cuts.segment(chunk, s)));
    }
  }

  // Reduce-scatter. Round 0 sends this member's own chunk, from `data`. In
  // round r the partial sum of chunk rank - r - 1 arrives, segment by
  // segment; each segment gets this member's values added and travels on
  // at once as round r + 1's message. In round p - 2 the sum of chunk
  // rank + 1 is completed in `data` instead, and sent from there: the first
  // messages of the all-gather.
  for (int64_t s = 0; s < cuts.segments(rank); ++s) {
    runtime.send_borrowed(next, header, cuts.segment(rank, s));
  }
  auto partial = partials.begin();
  for (int r = 0; r < p - 1; ++r) {
    const int chunk = rank - r - 1;
    const bool complete = r == p - 2;
    for (int64_t s = 0; s < cuts.segments(chunk); ++s) {
      const FloatRange mine = cuts.segment(chunk, s);
      Message sum = runtime.wait(*partial++);
      const bool values = mine.has_values() && !sum.values.empty();
      runtime.compute(add.of(mine.size()), [&] {
        if (!values) return;
        const auto& k = nn::kernels::kernels();
        // a + b == b + a in IEEE arithmetic: the same bits either way.
        complete ? k.add(mine.data(), sum.values.data(), mine.size())
                 : k.add(sum.values.data(), mine.data(), mine.size());
      });
      if (complete) {
        runtime.recycle(std::move(sum));
        runtime.send_borrowed(next, header, mine);
      } else {
        runtime.send(next, std::move(sum));
      }
    }
  }
  // All-gather: in round r the complete sum of chunk rank - r arrives in
  // `data`, segment by segment, and is passed on from there, except in the
  // last round, when the next member already holds it.
  auto total = sums.begin();
  for (int r = 0; r < p - 1; ++r) {
    const int chunk = rank - r;
    for (int64_t s = 0; s < cuts.segments(chunk); ++s) {
      runtime.wait(*total++);
      if (r < p - 2) runtime.send_borrowed(next, header, cuts.segment(chunk, s));
    }
  }
  // The caller may change `data` once this returns.
  runtime.wait_sends();
}

void bucketed_allreduce(Runtime& runtime, const std::vector<TaskId>& ring, int rank,
                        FloatRange data, int64_t bucket_floats, int64_t segment_floats,
                        int64_t step, GradientType wire) {
  if (bucket_floats <= 0 || bucket_floats >= data.size()) {
    ring_allreduce(runtime, ring, rank, data, step, segment_floats, wire);
    return;
  }
  for (int64_t begin = 0; begin < data.size(); begin += bucket_floats) {
    const int64_t count = std::min(bucket_floats, data.size() - begin);
    ring_allreduce(runtime, ring, rank, data.sub(begin, count), step, segment_floats, wire);
  }
}

}  // namespace distlab::strategy
