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

// What a run's seed is used for. Each use mixes its tag in first, so that
// one seed can drive them all without two of them drawing the same numbers
// (the shuffle of epoch 1 and the dropout masks, say).
enum class SeedUse : uint64_t {
  kWeights = 0x5745494748545321,  // initial parameters
  kDropout,                       // dropout masks
  kShuffle,                       // the order of examples in each epoch
  kSyntheticImages,               // generated image data sets
  kSyntheticTaxi,                 // generated taxi trips
};

// derive_seed(seed, {use, ids...}).
uint64_t derive_seed(uint64_t seed, SeedUse use, std::initializer_list<uint64_t> ids = {});

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
