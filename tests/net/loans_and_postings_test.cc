// The two pieces of bookkeeping behind the TCP runtime's zero-copy paths,
// on their own: borrowed sends counted until written, and posted receives
// claimed by the io thread.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "net/runtime/posted_receives.h"
#include "net/runtime/send_loans.h"

using namespace distlab;
using namespace distlab::net;
using namespace std::chrono_literals;

TEST_CASE("Borrowed sends are waited for until every loan is back, or the run failed",
          "[net][loans]") {
  auto loans = std::make_shared<SendLoans>();
  CHECK(loans->wait_until_returned(0ms) == SendLoans::Wait::kReturned);
  {
    SendLoan first(loans);
    SendLoan second(loans);
    CHECK(loans->wait_until_returned(10ms) == SendLoans::Wait::kTimedOut);
    SendLoan moved = std::move(first);  // a moved loan is still one loan
    second = SendLoan();                // giving one back by assignment
    CHECK(loans->wait_until_returned(10ms) == SendLoans::Wait::kTimedOut);
    std::thread writer([held = std::move(moved)]() mutable {
      std::this_thread::sleep_for(20ms);
      held = SendLoan();  // written: the io thread lets it go
    });
    CHECK(loans->wait_until_returned(10s) == SendLoans::Wait::kReturned);
    writer.join();
  }
  SendLoan out(loans);
  loans->mark_broken();  // a connection failed: its queue's loans come back unwritten
  CHECK(loans->wait_until_returned(10s) == SendLoans::Wait::kBroken);
}

TEST_CASE("A posted receive is claimed by the message it waits for, once", "[net][postings]") {
  std::vector<float> floats(4);
  strategy::Posting posting{.peer = 1,
                            .tag = strategy::Tag::kRing,
                            .sequence = 7,
                            .from_incarnation = 2,
                            .to_incarnation = 0,
                            .into = strategy::FloatRange(floats.data(), floats.size())};
  PostedReceives posted;
  posted.add(posting);
  const uint64_t bytes = floats.size() * sizeof(float);
  // Another sequence, another life of the sender, or another size: not it.
  CHECK_FALSE(posted.claim(1, strategy::Tag::kRing, 8, 2, 0, bytes));
  CHECK_FALSE(posted.claim(1, strategy::Tag::kRing, 7, 3, 0, bytes));
  CHECK_FALSE(posted.claim(1, strategy::Tag::kRing, 7, 2, 0, bytes + 4));
  const auto into = posted.claim(1, strategy::Tag::kRing, 7, 2, 0, bytes);
  REQUIRE(into);
  CHECK(into->data() == floats.data());
  CHECK_FALSE(posted.claim(1, strategy::Tag::kRing, 7, 2, 0, bytes));  // already being read

  // Withdrawn during the read: the read is ended, and withdraw returns
  // only once it is over.
  std::atomic<bool> ended = false, read_over = false;
  std::thread io([&] {
    std::this_thread::sleep_for(20ms);
    read_over = true;
    posted.release({1, strategy::Tag::kRing, 7});
  });
  posted.withdraw(posting, [&] { ended = true; });
  CHECK(ended);
  CHECK(read_over);
  io.join();

  // A withdrawn posting is never claimed; one not being read is withdrawn
  // without ending anything.
  CHECK_FALSE(posted.claim(1, strategy::Tag::kRing, 7, 2, 0, bytes));
  posted.add(posting);
  posted.withdraw(posting, [] { FAIL("no read to end"); });
  CHECK_FALSE(posted.claim(1, strategy::Tag::kRing, 7, 2, 0, bytes));
}
