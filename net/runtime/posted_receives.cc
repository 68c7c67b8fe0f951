#include "net/runtime/posted_receives.h"

namespace distlab::net {

namespace {

PostedReceives::Key key_of(const strategy::Posting& posting) {
  return {posting.peer, posting.tag, posting.sequence};
}

}  // namespace

void PostedReceives::add(const strategy::Posting& posting) {
  if (!posting.into.has_values()) return;  // it keeps a buffer of its own
  std::lock_guard lock(mutex_);
  posted_[key_of(posting)] = {.posting = posting};
}

void PostedReceives::withdraw(const strategy::Posting& posting,
                              const std::function<void()>& end_read) {
  if (!posting.into.has_values()) return;
  const Key key = key_of(posting);
  std::unique_lock lock(mutex_);
  auto found = posted_.find(key);
  if (found == posted_.end()) return;
  if (found->second.reading) {
    lock.unlock();  // ending the read takes the io thread, which releases under this lock
    end_read();
    lock.lock();
    released_.wait(lock, [&] {
      const auto now = posted_.find(key);
      return now == posted_.end() || !now->second.reading;
    });
  }
  posted_.erase(key);
}

std::optional<strategy::FloatRange> PostedReceives::claim(int peer, strategy::Tag tag,
                                                          uint64_t sequence,
                                                          uint32_t from_incarnation,
                                                          uint32_t to_incarnation, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  auto found = posted_.find({peer, tag, sequence});
  if (found == posted_.end()) return std::nullopt;
  Entry& entry = found->second;
  const strategy::Posting& p = entry.posting;
  if (entry.reading || p.from_incarnation != from_incarnation ||
      p.to_incarnation != to_incarnation ||
      static_cast<uint64_t>(p.into.size()) * sizeof(float) != bytes) {
    return std::nullopt;  // not the message it waits for: it takes it as it comes
  }
  entry.reading = true;
  return p.into;
}

void PostedReceives::release(const Key& key) {
  {
    std::lock_guard lock(mutex_);
    posted_.erase(key);
  }
  released_.notify_all();
}

}  // namespace distlab::net
