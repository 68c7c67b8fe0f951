#include "sim/messages_in_turn.h"

#include <utility>

namespace distlab::sim {

void MessagesInTurn::add(int sender, strategy::Message message) {
  by_sender_[sender].push_back(std::move(message));
  ++waiting_;
}

std::optional<strategy::Message> MessagesInTurn::take() {
  if (waiting_ == 0) return std::nullopt;
  auto next = by_sender_.upper_bound(last_sender_);
  while (next != by_sender_.end() && next->second.empty()) ++next;
  if (next == by_sender_.end()) {
    next = by_sender_.begin();
    while (next->second.empty()) ++next;  // one is waiting
  }
  strategy::Message message = std::move(next->second.front());
  next->second.pop_front();
  --waiting_;
  last_sender_ = next->first;
  return message;
}

}  // namespace distlab::sim
