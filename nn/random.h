// A small, portable random number generator. The standard library's
// distributions are implementation-defined, so bit-identical weights across
// compilers and backends need our own: xoshiro256** seeded by SplitMix64,
// floats from the top 24 bits, integers by Lemire's unbiased method.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>

namespace distlab::nn {

// Mixes a seed with stream identifiers (layer index, worker rank, epoch...)
// into an independent seed, so that every consumer has its own stream.
uint64_t derive_seed(uint64_t seed, std::initializer_list<uint64_t> stream);

class Rng {
 public:
  explicit Rng(uint64_t seed);

  uint64_t next_u64();
  float uniform();  // [0, 1)
  float uniform(float low, float high);
  float normal();                  // standard normal, Box-Muller
  uint64_t below(uint64_t bound);  // [0, bound), bound > 0

 private:
  uint64_t state_[4];
};

// Fisher-Yates with Rng::below: the same permutation on every platform.
void shuffle(std::span<int64_t> values, Rng& rng);

}  // namespace distlab::nn
