#include "nn/regularizer.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "nn/eigen.h"

namespace distlab::nn {
namespace {

using ConstValues = Eigen::Map<const Eigen::ArrayXf>;
using Values = Eigen::Map<Eigen::ArrayXf>;

// A kernel's values are taken in chunks of this many, the chunks shared
// among the threads and their penalties summed in chunk order: the sum has
// the same bits at any thread count, and a chunk (64 KiB) is still in the
// L2 when the penalty reads it after the gradient. A lab MLP's kernels hold
// 1.4 million values: taken by one thread they were a serial stretch of
// every step, the longer beside the products the more threads share those.
constexpr int64_t kChunkValues = int64_t{1} << 14;

ConstValues values(std::span<const float> s) {
  return {s.data(), static_cast<Eigen::Index>(s.size())};
}

int64_t chunks_of(std::size_t n) {
  return (static_cast<int64_t>(n) + kChunkValues - 1) / kChunkValues;
}

template <typename Span>
Span chunk(Span s, int64_t c) {
  const auto first = static_cast<std::size_t>(c * kChunkValues);
  return s.subspan(first, std::min(s.size() - first, static_cast<std::size_t>(kChunkValues)));
}

double chunk_penalty(const Regularizer& r, std::span<const float> w) {
  const auto v = values(w);
  double total = 0;
  if (r.l1 != 0) total += r.l1 * static_cast<double>(v.abs().sum());
  if (r.l2 != 0) total += r.l2 * static_cast<double>(v.square().sum());
  return total;
}

void add_chunk_gradient(const Regularizer& r, std::span<const float> w, std::span<float> grad) {
  const auto v = values(w);
  Values g(grad.data(), static_cast<Eigen::Index>(grad.size()));
  if (r.l1 != 0 && r.l2 != 0) {
    g += r.l1 * v.sign() + (2 * r.l2) * v;
  } else if (r.l1 != 0) {
    g += r.l1 * v.sign();
  } else if (r.l2 != 0) {
    g += (2 * r.l2) * v;
  }
}

// Runs body(c) for every chunk c of n values, the chunks shared among the
// threads when there is more than one.
template <typename Body>
void for_each_chunk(std::size_t n, Body body) {
  const int64_t chunks = chunks_of(n);
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (int64_t c = 0; c < chunks; ++c) body(c);
}

// Sums chunk_sum(c) over the chunks of n values in chunk order, whichever
// threads computed the terms.
template <typename ChunkSum>
double sum_of_chunks(std::size_t n, ChunkSum chunk_sum) {
  std::vector<double> partial(chunks_of(n), 0.0);
  for_each_chunk(n, [&](int64_t c) { partial[c] = chunk_sum(c); });
  return std::accumulate(partial.begin(), partial.end(), 0.0);
}

}  // namespace

double Regularizer::penalty(std::span<const float> w) const {
  return sum_of_chunks(w.size(), [&](int64_t c) { return chunk_penalty(*this, chunk(w, c)); });
}

void Regularizer::add_gradient(std::span<const float> w, std::span<float> grad) const {
  for_each_chunk(w.size(),
                 [&](int64_t c) { add_chunk_gradient(*this, chunk(w, c), chunk(grad, c)); });
}

double Regularizer::apply(std::span<const float> w, std::span<float> grad) const {
  return sum_of_chunks(w.size(), [&](int64_t c) {
    add_chunk_gradient(*this, chunk(w, c), chunk(grad, c));
    return chunk_penalty(*this, chunk(w, c));
  });
}

}  // namespace distlab::nn
