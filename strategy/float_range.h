// A run of floats that a strategy sends, reduces or applies: a view of a
// model's parameter or gradient buffer. In timing fidelity there is no
// buffer, only the size, so that the same strategy code moves exact message
// sizes without touching memory.
#pragma once

#include <cstdint>
#include <span>

namespace distlab::strategy {

class FloatRange {
 public:
  FloatRange(float* data, int64_t size) : data_(data), size_(size) {}
  explicit FloatRange(std::span<float> values)
      : data_(values.data()), size_(static_cast<int64_t>(values.size())) {}
  // A size without values (timing fidelity).
  static FloatRange sized(int64_t size) { return {nullptr, size}; }

  int64_t size() const { return size_; }
  bool has_values() const { return data_ != nullptr; }
  float* data() const { return data_; }
  std::span<float> values() const { return {data_, static_cast<std::size_t>(size_)}; }

  FloatRange sub(int64_t offset, int64_t count) const {
    return {data_ != nullptr ? data_ + offset : nullptr, count};
  }

 private:
  float* data_;
  int64_t size_;
};

// Where part `i` of `n` near-equal parts of `size` items begins: the first
// size % n parts hold one item more. part_begin(size, n, n) == size.
inline int64_t part_begin(int64_t size, int64_t n, int64_t i) {
  const int64_t base = size / n;
  const int64_t extra = size % n;
  return i * base + (i < extra ? i : extra);
}

// How many messages of at most `segment_floats` floats `floats` travel in
// (at least 1; segment_floats <= 0: one), and segment `s` of them: the ring
// cuts its chunks so, and the parameter servers their shards.
inline int64_t segment_count(int64_t floats, int64_t segment_floats) {
  if (segment_floats <= 0 || floats <= segment_floats) return 1;
  return (floats + segment_floats - 1) / segment_floats;
}
inline FloatRange segment_of(FloatRange values, int64_t count, int64_t s) {
  const int64_t begin = part_begin(values.size(), count, s);
  return values.sub(begin, part_begin(values.size(), count, s + 1) - begin);
}

}  // namespace distlab::strategy
