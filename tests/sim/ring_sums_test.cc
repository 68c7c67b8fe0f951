// What the ring all-reduce computes (strategy/ring_allreduce.h), bit for
// bit, on the simulator: each chunk's sum in ring order from the member
// that owns it, and with a half-precision wire that sum rounded at every
// hop as the header says. Every member must end with the same bits.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "child_process.h"
#include "collective_harness.h"
#include "strategy/float_range.h"
#include "strategy/ring_allreduce.h"

namespace {

using namespace distlab;
using namespace distlab::strategy;

// Member `rank`'s values: of mixed signs and magnitudes, so that a sum in
// another order, or rounded elsewhere, gives other bits.
std::vector<float> values_of(int rank, int64_t n) {
  std::vector<float> values(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    values[i] = std::sin(0.37f * static_cast<float>(i * (rank + 2))) * std::exp2(rank % 3 - 4);
  }
  return values;
}

// The ring's result, worked out by hand: chunk c's sum starts at member c,
// and each member after it adds its values, in float32, to what it read.
// With a half-precision wire each partial sum travels rounded (one
// rounding a segment message), and every member keeps the last one as
// read from the wire.
std::vector<float> expected_sums(int p, int64_t n, int64_t segment_floats, GradientType wire) {
  std::vector<std::vector<float>> members;
  for (int rank = 0; rank < p; ++rank) members.push_back(values_of(rank, n));
  std::vector<float> sums(static_cast<std::size_t>(n));
  for (int c = 0; c < p; ++c) {
    const FloatRange chunk =
        FloatRange(sums).sub(part_begin(n, p, c), part_begin(n, p, c + 1) - part_begin(n, p, c));
    const int64_t segments = segment_count(chunk.size(), segment_floats);
    for (int64_t s = 0; s < segments; ++s) {
      const FloatRange segment = segment_of(chunk, segments, s);
      const int64_t begin = segment.data() - sums.data();
      std::vector<float> sum(members[c].begin() + begin,
                             members[c].begin() + begin + segment.size());
      for (int k = 1; k < p; ++k) {
        if (wire != GradientType::kFloat32) {
          const Message hop = gradient_message(Tag::kRing, 0, FloatRange(sum), wire);
          read_gradient(hop, wire, FloatRange(sum), "test");
        }
        for (int64_t i = 0; i < segment.size(); ++i) sum[i] += members[(c + k) % p][begin + i];
      }
      if (wire != GradientType::kFloat32) {
        const Message last = gradient_message(Tag::kRing, 0, FloatRange(sum), wire);
        read_gradient(last, wire, FloatRange(sum), "test");
      }
      std::copy(sum.begin(), sum.end(), segment.data());
    }
  }
  return sums;
}

// Every member's values after a simulated ring all-reduce, as bits.
std::vector<std::vector<uint32_t>> ring_results(int p, int64_t n, int64_t segment_floats,
                                                GradientType wire) {
  const std::string text = testing::in_child_process([&] {
    std::vector<TaskId> ring;
    for (int r = 0; r < p; ++r) ring.push_back({Role::kWorker, r});
    std::vector<std::vector<uint32_t>> bits(p);
    testing::run_collective(p, 50e-6, 1e9, Fidelity::kFull, [&](Runtime& runtime, int rank) {
      std::vector<float> data = values_of(rank, n);
      ring_allreduce(runtime, ring, rank, FloatRange(data), 0, segment_floats, wire);
      for (const float v : data) bits[rank].push_back(std::bit_cast<uint32_t>(v));
    });
    return nlohmann::json(bits).dump();
  });
  return nlohmann::json::parse(text).get<std::vector<std::vector<uint32_t>>>();
}

}  // namespace

TEST_CASE("the ring sums each chunk in ring order, rounded at every hop on a half wire") {
  const int p = GENERATE(2, 3, 5);
  const int64_t segment_floats = GENERATE(int64_t{0}, int64_t{7}, int64_t{100});
  const GradientType wire =
      GENERATE(GradientType::kFloat32, GradientType::kFloat16, GradientType::kBFloat16);
  const int64_t n = 1001;  // chunks and segments of unequal sizes
  CAPTURE(p, segment_floats, gradient_type_name(wire));
  const auto results = ring_results(p, n, segment_floats, wire);
  std::vector<uint32_t> expected;
  for (const float v : expected_sums(p, n, segment_floats, wire)) {
    expected.push_back(std::bit_cast<uint32_t>(v));
  }
  for (int rank = 0; rank < p; ++rank) {
    CAPTURE(rank);
    CHECK(results[rank] == expected);
  }
}

TEST_CASE("a ring with more segments than it posts ahead sums as a short one") {
  // 20 members, 50-float chunks in 8 segments: 304 arrivals, posted 32 at a
  // time as the walk goes on a backend that reads into postings, one at a
  // time on the simulator (Float32Segments::kPostedAhead).
  const int p = 20;
  const int64_t segment_floats = 7;
  const int64_t n = 1001;
  const auto results = ring_results(p, n, segment_floats, GradientType::kFloat32);
  std::vector<uint32_t> expected;
  for (const float v : expected_sums(p, n, segment_floats, GradientType::kFloat32)) {
    expected.push_back(std::bit_cast<uint32_t>(v));
  }
  for (int rank = 0; rank < p; ++rank) {
    CAPTURE(rank);
    CHECK(results[rank] == expected);
  }
}
