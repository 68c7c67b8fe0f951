#include "strategy/ring_allreduce.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nn/kernels/kernels.h"

namespace distlab::strategy {
namespace {

// i mod p, in [0, p) for negative i too: chunks count back from the rank.
int wrap(int i, int p) {
  return ((i % p) + p) % p;
}

// The ring's schedule, the same for every wire: where the all-reduce cuts
// `data` (p near-equal chunks, each cut into near-equal segments of at most
// `segment_floats`, one message each) and which segments reach this member
// in which order. Every member derives the same cuts from the same sizes.
class RingSchedule {
 public:
  RingSchedule(FloatRange data, int p, int rank, int64_t segment_floats)
      : data_(data), p_(p), rank_(rank), segment_floats_(segment_floats) {}

  // This member's own chunk, which it sends first.
  template <class Visit>
  void for_each_own_segment(Visit visit) const {
    for_each_segment(rank_, visit);
  }
  // Reduce-scatter: in round r the partial sum of chunk rank - r - 1
  // arrives; in the last round this member completes it.
  template <class Visit>  // visit(FloatRange mine, bool completes)
  void for_each_partial_sum(Visit visit) const {
    for (int r = 0; r < p_ - 1; ++r) {
      for_each_segment(rank_ - r - 1, [&](FloatRange mine) { visit(mine, r == p_ - 2); });
    }
  }
  // All-gather: in round r the complete sum of chunk rank - r arrives; it
  // travels on but in the last round, when the next member has it.
  template <class Visit>  // visit(FloatRange sum, bool pass_on)
  void for_each_complete_sum(Visit visit) const {
    for (int r = 0; r < p_ - 1; ++r) {
      for_each_segment(rank_ - r, [&](FloatRange sum) { visit(sum, r < p_ - 2); });
    }
  }

  // The segments that reach this member, one after another in the order
  // they arrive (for_each_partial_sum's, then for_each_complete_sum's):
  // a cursor rather than a list, which a member of a ring of a thousand
  // would hold 2(p - 1) entries of.
  class Arrivals {
   public:
    explicit Arrivals(const RingSchedule& schedule) : s_(schedule) { enter_round(); }
    bool done() const { return gathering_ && round_ == s_.p_ - 1; }
    // The segment now: where it belongs in `data`, and whether it is a
    // partial sum (the reduce-scatter's) rather than a complete one.
    FloatRange where() const { return segment_of(chunk_, count_, segment_); }
    bool partial() const { return !gathering_; }
    void next() {
      if (++segment_ < count_) return;
      segment_ = 0;
      if (++round_ == s_.p_ - 1 && !gathering_) {
        gathering_ = true;
        round_ = 0;
      }
      if (!done()) enter_round();
    }

   private:
    void enter_round() {
      chunk_ = s_.chunk(gathering_ ? s_.rank_ - round_ : s_.rank_ - round_ - 1);
      count_ = segment_count(chunk_.size(), s_.segment_floats_);
    }
    const RingSchedule& s_;
    bool gathering_ = false;  // in the all-gather
    int round_ = 0;
    FloatRange chunk_ = FloatRange::sized(0);
    int64_t count_ = 0;
    int64_t segment_ = 0;
  };

 private:
  FloatRange chunk(int chunk) const {
    const int i = wrap(chunk, p_);
    const int64_t begin = part_begin(data_.size(), p_, i);
    return data_.sub(begin, part_begin(data_.size(), p_, i + 1) - begin);
  }
  template <class Visit>
  void for_each_segment(int chunk, Visit visit) const {
    const FloatRange whole = this->chunk(chunk);
    const int64_t count = segment_count(whole.size(), segment_floats_);
    for (int64_t s = 0; s < count; ++s) visit(segment_of(whole, count, s));
  }

  FloatRange data_;
  int p_;
  int rank_;
  int64_t segment_floats_;
};

// The all-reduce, one walk for every wire; `Segments` says how a segment
// travels and is added to (Float32Segments, RoundedSegments below).
template <class Segments>
void walk_ring(const RingSchedule& schedule, Segments& segments) {
  // Round 0 of the reduce-scatter: this member's own chunk sets off.
  schedule.for_each_own_segment([&](FloatRange own) { segments.send_own(own); });
  // Each partial sum that arrives gets this member's values added and
  // travels on at once, so that sending overlaps the next arrival; the
  // complete sums are the all-gather's first messages.
  schedule.for_each_partial_sum(
      [&](FloatRange mine, bool completes) { segments.add_and_pass_on(mine, completes); });
  // Each complete sum that arrives is kept and passed on.
  schedule.for_each_complete_sum(
      [&](FloatRange sum, bool pass_on) { segments.keep_sum(sum, pass_on); });
  segments.finish();
}

// The modelled cost of adding `count` floats into a received segment (a
// read-modify-write of 3 floats per element). Segments come in a handful of
// sizes, so each cost is built once (this matters when a simulation runs a
// thousand members).
class AddCosts {
 public:
  const Work& of(int64_t count) {
    if (count == last_count_) return *last_;  // the segments of a chunk are alike
    return look_up(count);
  }

 private:
  // Out of line, so that the Works it builds take no room in the frame of
  // each addition (Float32Segments says why that matters).
  [[gnu::noinline]] const Work& look_up(int64_t count) {
    // One cost for every member this thread runs: a simulation runs a
    // thousand on one thread, and they then read one Work in the caches,
    // not a thousand Works each out of them. Nothing changes a Work once
    // built, and a map's elements do not move.
    thread_local std::map<int64_t, const Work> costs;
    auto found = costs.find(count);
    if (found == costs.end()) {
      found = costs.emplace(count, packing(elementwise_work("ring reduce", count, 1, 3))).first;
    }
    last_count_ = count;
    last_ = &found->second;
    return *last_;
  }

  // The last cost: two words beside the ring's other per-message state.
  int64_t last_count_ = -1;
  const Work* last_ = nullptr;
};

// Segments on a float32 wire, copied as little as Gloo's ring copies them
// (runtime.h's messages without copies). Receives are posted ahead of the
// walk, before anything is sent, so that a transport reads each segment
// straight into place: partial sums into buffers of their own, complete
// sums into `data`, from where they are passed on, as is this member's own
// chunk. No region is written before this member is done reading it: a
// complete sum exists only after every member's values went into it.
//
// The walk's steps are kept out of line (gnu::noinline): inlined, their
// locals would add up in one wide frame of the walk; apart, each one's
// frame lies where the others' lie, below the walk's. A simulated member
// among a thousand finds each stack line it touches out of the caches.
class alignas(64) Float32Segments {
 public:
  // On a backend that reads payloads straight into posted receives, a
  // ring of up to 17 members has every receive posted before it sends
  // anything; a larger one keeps this many posted ahead of its walk. A
  // backend that copies (the simulator) gains nothing by posting early and
  // has one posted at a time: a simulated member among a thousand touches
  // one slot, not a cache line a message across 32 of them.
  static constexpr std::size_t kPostedAhead = 32;

  Float32Segments(Runtime& runtime, const RingSchedule& schedule, TaskId previous, TaskId next,
                  int64_t step)
      : runtime_(runtime),
        previous_(previous),
        next_(next),
        step_(step),
        window_(runtime.reads_into_postings() ? kPostedAhead : 1),
        schedule_(schedule),
        arrivals_(schedule_),
        more_slots_(window_ > 1 ? std::make_unique<PostedReceive[]>(window_ - 1u) : nullptr) {
    post_ahead();
  }
  Float32Segments(const Float32Segments&) = delete;
  Float32Segments& operator=(const Float32Segments&) = delete;

  // The walk's schedule, kept beside the segments' own state.
  const RingSchedule& schedule() const { return schedule_; }

  void send_own(FloatRange own) { pass_on(own); }

  // An addition into `to` of `count` floats from `from`.
  struct Addition {
    float* to;
    const float* from;
    int64_t count;
  };

  // The partial sum is added to in its own buffer and passed on as it is;
  // the sum that completes the chunk is made in `mine` and sent from there.
  [[gnu::noinline]] void add_and_pass_on(FloatRange mine, bool completes) {
    Message sum = arrive();
    // a + b == b + a in IEEE arithmetic: the same bits either way.
    const Addition add = completes ? Addition{mine.data(), sum.values.data(), mine.size()}
                                   : Addition{sum.values.data(), mine.data(), mine.size()};
    const bool values = mine.has_values() && !sum.values.empty();
    // The closure holds a pointer and a flag, which std::function keeps
    // without a heap allocation: a simulated ring of a thousand adds
    // millions of times.
    runtime_.compute(add_costs_.of(mine.size()), [&add, values] {
      if (values) nn::kernels::kernels().add(add.to, add.from, add.count);
    });
    if (completes) {
      runtime_.recycle(std::move(sum));
      pass_on(mine);
    } else {
      runtime_.send(next_, std::move(sum));
    }
  }

  [[gnu::noinline]] void keep_sum(FloatRange sum, bool passes_on) {
    arrive();
    if (passes_on) pass_on(sum);
  }

  // The caller may change `data` once the all-reduce returns.
  void finish() { runtime_.wait_sends(); }

 private:
  // Segments this member sends from floats it leaves alone until finish().
  [[gnu::noinline]] void pass_on(FloatRange values) {
    runtime_.send_borrowed(next_, make_message(Tag::kRing, step_, 0, nullptr), values);
  }
  [[gnu::noinline]] void post_ahead() {
    for (; !arrivals_.done() && posted_count_ < window_; arrivals_.next()) {
      const FloatRange where = arrivals_.where();
      slot((first_posted_ + posted_count_++) % window_) = runtime_.post_recv(
          previous_, Tag::kRing, arrivals_.partial() ? FloatRange::sized(where.size()) : where);
    }
  }
  // The next segment, received where it was posted; one more posted.
  Message arrive() {
    Message message = runtime_.wait(slot(first_posted_));
    if (++first_posted_ == window_) first_posted_ = 0;
    --posted_count_;
    post_ahead();
    return message;
  }

  // What each message reads, in the object's first three lines with the
  // first slot (a simulated member among a thousand finds them out of the
  // caches, a line at a time, three times a message).
  Runtime& runtime_;
  TaskId previous_;
  TaskId next_;
  int64_t step_;
  static_assert(kPostedAhead <= UINT8_MAX);
  uint8_t window_;  // receives kept posted
  uint8_t first_posted_ = 0;
  uint8_t posted_count_ = 0;
  const RingSchedule schedule_;
  RingSchedule::Arrivals arrivals_;  // the next to post
  AddCosts add_costs_;
  // The receives posted, in the order of arrival: a ring of window_ slots,
  // the first in place and the rest (a TCP window's) on the heap. A
  // simulated member among a thousand posts one at a time, and finds its
  // slot in the object's first lines; thirty-one empty ones in place were
  // 1.5 KB of stack between the walk's frames and the Runtime, spreading
  // what each message touches over more pages, which a thousand members
  // pay for beside the lines (bench/RESULTS.md: 5% of the wall time at
  // 1,024 replicas).
  PostedReceive& slot(std::size_t i) { return i == 0 ? first_slot_ : more_slots_[i - 1]; }
  PostedReceive first_slot_;
  std::unique_ptr<PostedReceive[]> more_slots_;  // window_ - 1 of them
};

// One piece of work after another, as one.
Work chained(std::string label, std::initializer_list<Work> parts) {
  Work work{.label = std::move(label)};
  for (const Work& part : parts)
    work.items.insert(work.items.end(), part.items.begin(), part.items.end());
  return work;
}

constexpr const char* kWhat = "ring all-reduce";

// Segments on a half-precision wire (the header): each arriving partial
// sum is read back into float32 before this member's values are added, and
// rounded again for the next member; the member that completes a chunk
// keeps the sum as rounded, as every other member reads it. Rounding and
// reading are costed as this member's compute; every message is a copy.
class RoundedSegments {
 public:
  RoundedSegments(Runtime& runtime, TaskId previous, TaskId next, int64_t step, GradientType wire)
      : runtime_(runtime), previous_(previous), next_(next), step_(step), wire_(wire) {}

  void send_own(FloatRange own) {
    Message m = gradient_message(Tag::kRing, step_, FloatRange::sized(own.size()), wire_);
    runtime_.compute(encode_work(own.size(), wire_), [&] {
      if (own.has_values()) m = gradient_message(Tag::kRing, step_, own, wire_);
    });
    runtime_.send(next_, std::move(m));
  }

  void add_and_pass_on(FloatRange mine, bool completes) {
    const int64_t n = mine.size();
    const Message partial = runtime_.recv(previous_, Tag::kRing);
    read_gradient(partial, wire_, FloatRange::sized(n), kWhat);  // its size, in both fidelities
    Message out = gradient_message(Tag::kRing, step_, FloatRange::sized(n), wire_);
    const Work work =
        chained("ring reduce", {decode_work(n, wire_), elementwise_work("add", n, 1, 3),
                                encode_work(n, wire_), completes ? decode_work(n, wire_) : Work{}});
    runtime_.compute(work, [&] {
      if (!mine.has_values()) return;
      sum_.resize(static_cast<std::size_t>(n));
      read_gradient(partial, wire_, FloatRange(sum_.data(), n), kWhat);
      nn::kernels::kernels().add(sum_.data(), mine.data(), n);
      out = gradient_message(Tag::kRing, step_, FloatRange(sum_.data(), n), wire_);
      // The complete sum, as every other member will read it.
      if (completes) read_gradient(out, wire_, mine, kWhat);
    });
    runtime_.send(next_, std::move(out));
  }

  void keep_sum(FloatRange sum, bool pass_on) {
    Message total = runtime_.recv(previous_, Tag::kRing);
    read_gradient(total, wire_, FloatRange::sized(sum.size()), kWhat);
    runtime_.compute(decode_work(sum.size(), wire_),
                     [&] { read_gradient(total, wire_, sum, kWhat); });
    if (pass_on) runtime_.send(next_, std::move(total));
  }

  void finish() {}  // no borrowed floats to wait for

 private:
  Runtime& runtime_;
  TaskId previous_;
  TaskId next_;
  int64_t step_;
  GradientType wire_;
  std::vector<float> sum_;  // a partial sum in float32, this member's values added
};

// The ring in closed form (Runtime::closed_form_ring): this member's
// computing as the ring's (the reduce-scatter's p - 1 additions of a
// chunk; on a half-precision wire every rounding and reading too), in one
// computation, then the network's 2(p - 1) rounds of a chunk. Chunks are
// taken at the largest (they differ by one float).
void closed_form_allreduce(Runtime& runtime, const std::vector<TaskId>& ring, int64_t floats,
                           int64_t segment_floats, GradientType wire) {
  const int p = static_cast<int>(ring.size());
  const int64_t chunk = part_begin(floats, p, 1);
  Work chunk_work = packing(elementwise_work("ring reduce", chunk, 1, 3));
  double times = p - 1;
  if (wire != GradientType::kFloat32) {
    // Per chunk of the walk: p - 1 decodes, adds and encodes, the own
    // chunk's encoding, one more decode (the completed sum) and p - 1
    // decodes of complete sums: about 3 roundings an addition.
    chunk_work = packing(
        chained("ring reduce", {decode_work(chunk, wire), elementwise_work("add", chunk, 1, 3),
                                encode_work(chunk, wire), decode_work(chunk, wire)}));
  }
  Work work = chunk_work;
  for (WorkItem& item : work.items) {
    item.flops *= times;
    item.bytes *= times;
    item.ops *= times;
    item.regions *= times;
    item.kernels = static_cast<int>(item.kernels * times);
  }
  runtime.compute(work, nullptr);
  const uint64_t chunk_bytes = gradient_bytes(chunk, wire);
  const int rounds = 2 * (p - 1);
  runtime.closed_form_ring(ring, chunk_bytes, rounds, static_cast<uint64_t>(rounds) * chunk_bytes,
                           static_cast<uint64_t>(rounds * segment_count(chunk, segment_floats)));
}

}  // namespace

void ring_allreduce(Runtime& runtime, const std::vector<TaskId>& ring, int rank, FloatRange data,
                    int64_t step, int64_t segment_floats, GradientType wire) {
  const int p = static_cast<int>(ring.size());
  if (p <= 1) return;
  if (runtime.collectives_in_closed_form()) {
    closed_form_allreduce(runtime, ring, data.size(), segment_floats, wire);
    return;
  }
  const TaskId previous = ring[wrap(rank - 1, p)];
  const TaskId next = ring[wrap(rank + 1, p)];
  const RingSchedule schedule(data, p, rank, segment_floats);
  if (wire == GradientType::kFloat32) {
    Float32Segments segments(runtime, schedule, previous, next, step);
    walk_ring(segments.schedule(), segments);
  } else {
    RoundedSegments segments(runtime, previous, next, step, wire);
    walk_ring(schedule, segments);
  }
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

void overlapped_allreduce(Runtime& runtime, const std::vector<TaskId>& ring, int rank,
                          FloatRange data, int64_t bucket_floats, int64_t segment_floats,
                          int64_t step, GradientType wire,
                          const std::function<void(int64_t begin, int64_t floats)>& before_bucket) {
  if (bucket_floats <= 0) bucket_floats = kOverlapBucketBytes / int64_t{sizeof(float)};
  for (int64_t end = data.size(); end > 0; end -= bucket_floats) {
    const int64_t begin = std::max<int64_t>(0, end - bucket_floats);
    before_bucket(begin, end - begin);
    ring_allreduce(runtime, ring, rank, data.sub(begin, end - begin), step, segment_floats, wire);
  }
}

}  // namespace distlab::strategy
