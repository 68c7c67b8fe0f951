#include "net/runtime/buffer_pool.h"

#include <utility>

namespace distlab::net {
namespace {

std::size_t capacity_bytes(const std::vector<float>& buffer) {
  return buffer.capacity() * sizeof(float);
}

}  // namespace

std::vector<float> BufferPool::take(std::size_t count) {
  std::unique_lock lock(mutex_);
  std::size_t best = kept_.size();
  for (std::size_t i = 0; i < kept_.size(); ++i) {
    if (kept_[i].capacity() < count) continue;
    if (best == kept_.size() || kept_[i].capacity() < kept_[best].capacity()) best = i;
  }
  std::vector<float> buffer;
  if (best < kept_.size()) {
    buffer = std::move(kept_[best]);
    kept_[best] = std::move(kept_.back());
    kept_.pop_back();
    kept_bytes_ -= capacity_bytes(buffer);
  }
  lock.unlock();
  // A kept buffer is as long as the message it carried: no values are
  // written unless this one is longer (segments differ by a float at most).
  buffer.resize(count);
  return buffer;
}

void BufferPool::give(std::vector<float> buffer) {
  const std::size_t bytes = capacity_bytes(buffer);
  if (bytes == 0) return;
  std::unique_lock lock(mutex_);
  if (kept_.size() >= kMaxBuffers || kept_bytes_ + bytes > max_bytes_) {
    lock.unlock();  // the buffer is freed outside the lock
    return;
  }
  kept_bytes_ += bytes;
  kept_.push_back(std::move(buffer));
}

std::size_t BufferPool::kept_bytes() const {
  std::lock_guard lock(mutex_);
  return kept_bytes_;
}

std::size_t BufferPool::kept_buffers() const {
  std::lock_guard lock(mutex_);
  return kept_.size();
}

}  // namespace distlab::net
