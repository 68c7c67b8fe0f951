// The TCP runtime's pool of written messages' buffers (net/buffer_pool.h).
#include "net/runtime/buffer_pool.h"

#include <catch2/catch.hpp>

using distlab::net::BufferPool;

TEST_CASE("a buffer given back serves the next read of its size without a new allocation") {
  BufferPool pool(1 << 20);
  std::vector<float> written(1000, 2.5f);
  const float* storage = written.data();
  pool.give(std::move(written));
  CHECK(pool.kept_buffers() == 1);
  CHECK(pool.kept_bytes() == 4000);
  const std::vector<float> reused = pool.take(1000);
  CHECK(reused.data() == storage);
  CHECK(reused.size() == 1000);
  CHECK(pool.kept_buffers() == 0);
  CHECK(pool.kept_bytes() == 0);
}

TEST_CASE("the pool hands out the smallest buffer that holds the count, else a new one") {
  BufferPool pool(1 << 20);
  std::vector<float> small(100);
  std::vector<float> large(300);
  const float* large_storage = large.data();
  const float* small_storage = small.data();
  pool.give(std::move(large));
  pool.give(std::move(small));
  // A segment one float shorter than the buffer it reuses (chunks of a ring
  // differ by a float).
  const std::vector<float> a = pool.take(99);
  CHECK(a.data() == small_storage);
  CHECK(a.size() == 99);
  const std::vector<float> b = pool.take(200);
  CHECK(b.data() == large_storage);
  CHECK(b.size() == 200);
  const std::vector<float> c = pool.take(50);  // the pool is empty now
  CHECK(c.size() == 50);
  CHECK(pool.kept_buffers() == 0);
}

TEST_CASE("the pool keeps no more than its limit and nothing empty") {
  BufferPool pool(10'000);
  pool.give(std::vector<float>(2000));  // 8,000 bytes: kept
  pool.give(std::vector<float>(1000));  // 4,000 more would pass 10,000
  pool.give(std::vector<float>());
  CHECK(pool.kept_buffers() == 1);
  CHECK(pool.kept_bytes() == 8000);
  const std::vector<float> big = pool.take(5000);  // more than anything kept
  CHECK(big.size() == 5000);
  CHECK(pool.kept_buffers() == 1);
}

TEST_CASE("the pool keeps at most kMaxBuffers buffers, however small") {
  BufferPool pool(1 << 20);
  for (std::size_t i = 0; i < BufferPool::kMaxBuffers + 10; ++i) pool.give(std::vector<float>(4));
  CHECK(pool.kept_buffers() == BufferPool::kMaxBuffers);
  CHECK(pool.kept_bytes() == BufferPool::kMaxBuffers * 16);
}
