// A task's cached mailboxes (sim/sim_runtime.h): the box it sends to and the
// one it receives at, kept beside its state, must follow the table when a
// restart renews a task's mailboxes, and whenever the task asks for another.
#include <catch2/catch.hpp>
#include <simgrid/s4u.hpp>

#include "child_process.h"
#include "sim/sim_runtime.h"

namespace {

using namespace distlab;
using strategy::Tag;

}  // namespace

TEST_CASE("a cached mailbox is the table's, through renewals and other peers") {
  const std::string findings = testing::in_child_process([] {
    int argc = 1;
    char name[] = "mailbox_cache";
    char* argv[] = {name, nullptr};
    const simgrid::s4u::Engine engine(&argc, argv);
    sim::MailboxTable table(3);
    sim::CachedMailbox cache;
    std::string seen;
    const auto note = [&](bool same) { seen += same ? '=' : 'x'; };
    simgrid::s4u::Mailbox* const first = cache.at(table, 1, Tag::kRing);
    note(first == table.at(1, Tag::kRing));
    note(cache.at(table, 1, Tag::kRing) == first);
    table.renew(1, 1);  // task 1 restarted: its messages go to new boxes
    note(table.at(1, Tag::kRing) != first);
    note(cache.at(table, 1, Tag::kRing) == table.at(1, Tag::kRing));
    note(cache.at(table, 2, Tag::kRing) == table.at(2, Tag::kRing));
    note(cache.at(table, 2, Tag::kParameters) == table.at(2, Tag::kParameters));
    note(cache.at(table, 1, Tag::kRing) == table.at(1, Tag::kRing));
    return seen;
  });
  CHECK(findings == "=======");
}
