// A crowded task takes the messages that have arrived one per sender in
// turn (sim/messages_in_turn.h), each sender's in the order sent.
#include "sim/messages_in_turn.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using distlab::sim::MessagesInTurn;
using distlab::strategy::Message;

namespace {

Message numbered(int sender, int64_t step) {
  Message m;
  m.from = {distlab::strategy::Role::kWorker, sender};
  m.step = step;
  return m;
}

// "sender.step" of each message taken until none is left.
std::vector<std::string> take_all(MessagesInTurn& waiting) {
  std::vector<std::string> taken;
  while (auto m = waiting.take()) {
    taken.push_back(std::to_string(m->from.index) + "." + std::to_string(m->step));
  }
  return taken;
}

}  // namespace

TEST_CASE("Messages are taken one per sender in turn, each sender's in order") {
  MessagesInTurn waiting;
  CHECK(waiting.empty());
  CHECK_FALSE(waiting.take());
  waiting.add(3, numbered(3, 0));  // arrived first
  waiting.add(3, numbered(3, 1));
  waiting.add(1, numbered(1, 0));
  waiting.add(2, numbered(2, 0));
  CHECK_FALSE(waiting.empty());
  CHECK(take_all(waiting) == std::vector<std::string>{"1.0", "2.0", "3.0", "3.1"});
  CHECK(waiting.empty());
}

TEST_CASE("The turn goes on after the sender last taken, wrapping round") {
  MessagesInTurn waiting;
  waiting.add(2, numbered(2, 0));
  CHECK(take_all(waiting) == std::vector<std::string>{"2.0"});
  waiting.add(1, numbered(1, 0));
  waiting.add(4, numbered(4, 0));
  waiting.add(2, numbered(2, 1));
  CHECK(take_all(waiting) == std::vector<std::string>{"4.0", "1.0", "2.1"});
  // A message taken as it came, not from here, moves the turn too.
  waiting.took_from(0);
  waiting.add(4, numbered(4, 1));
  waiting.add(0, numbered(0, 0));
  waiting.add(1, numbered(1, 1));
  CHECK(take_all(waiting) == std::vector<std::string>{"1.1", "4.1", "0.0"});
}
