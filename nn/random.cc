#include "nn/random.h"

#include <bit>
#include <cmath>
#include <numbers>

namespace distlab::nn {
namespace {

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

uint64_t derive_seed(uint64_t seed, std::initializer_list<uint64_t> stream) {
  uint64_t x = seed;
  uint64_t mixed = splitmix64(x);
  for (uint64_t id : stream) {
    x = mixed ^ (id + 0x632be59bd9b4e019ULL);
    mixed = splitmix64(x);
  }
  return mixed;
}

uint64_t derive_seed(uint64_t seed, SeedUse use, std::initializer_list<uint64_t> ids) {
  return derive_seed(derive_seed(seed, {static_cast<uint64_t>(use)}), ids);
}

Rng::Rng(uint64_t seed) {
  for (auto& s : state_) s = splitmix64(seed);
}

uint64_t Rng::next_u64() {
  const uint64_t result = std::rotl(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = std::rotl(state_[3], 45);
  return result;
}

float Rng::uniform() {
  return static_cast<float>(next_u64() >> 40) * 0x1.0p-24f;
}

float Rng::uniform(float low, float high) {
  return low + (high - low) * uniform();
}

float Rng::normal() {
  // Box-Muller in double, so that the result is the same wherever float
  // transcendental functions differ in their last bit.
  const double u1 = (static_cast<double>(next_u64() >> 11) + 1.0) * 0x1.0p-53;
  const double u2 = static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2));
}

uint64_t Rng::below(uint64_t bound) {
  // Lemire's multiply-shift with rejection: unbiased and branch-light.
  unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * bound;
  auto low = static_cast<uint64_t>(m);
  if (low < bound) {
    const uint64_t threshold = -bound % bound;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(next_u64()) * bound;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

void shuffle(std::span<int64_t> values, Rng& rng) {
  for (std::size_t i = values.size(); i > 1; --i) {
    std::swap(values[i - 1], values[rng.below(i)]);
  }
}

}  // namespace distlab::nn
