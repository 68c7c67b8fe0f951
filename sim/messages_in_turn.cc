#include "sim/messages_in_turn.h"

#include <utility>

namespace distlab::sim {

void MessagesInTurn::add(int sender, strategy::Message message) {
  by_sender_[sender].push_back(std::move(message));
}

std::optional<strategy::Message> MessagesInTurn::take() {
  if (by_sender_.empty()) return std::nullopt;
  auto next = by_sender_.upper_bound(last_sender_);
  if (next == by_sender_.end()) next = by_sender_.begin();
  strategy::Message message = std::move(next->second.front());
  next->second.pop_front();
  last_sender_ = next->first;
  if (next->second.empty()) by_sender_.erase(next);  // only senders with messages waiting
  return message;
}

}  // namespace distlab::sim
