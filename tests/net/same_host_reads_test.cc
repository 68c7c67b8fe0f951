// Payloads read in place between tasks of one host (TcpOptions::
// same_host_reads, net/runtime/peer_memory.h): large payloads are copied
// straight from the sender's memory, small ones still come over TCP, and
// what arrives is what was sent, bit for bit, as over TCP.
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <future>
#include <vector>

#include "common/error.h"
#include "net/runtime/peer_memory.h"
#include "net/runtime/tcp_runtime.h"
#include "strategy/ring_allreduce.h"
#include "tests/net/loopback_tasks.h"

namespace {

using namespace distlab;
using namespace distlab::strategy;
using net::TcpRuntime;
using net::testing::counting;
using net::testing::worker;

void read_in_place(net::TcpOptions& options, int) {
  options.same_host_reads = true;
}

}  // namespace

TEST_CASE("A peer's memory is read where it holds what it was said to, and nowhere else") {
  const std::array<std::byte, 4> here = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  const net::PeerMemory self(::getpid());
  const auto address = reinterpret_cast<uintptr_t>(here.data());
  CHECK(self.holds(address, here));
  const std::array<std::byte, 4> other = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{5}};
  CHECK_FALSE(self.holds(address, other));
  CHECK_FALSE(self.holds(0, here));  // not mapped
  std::array<std::byte, 4> into{};
  self.read(address, into);
  CHECK(into == here);
  CHECK_THROWS_WITH(self.read(0, into), Catch::Contains("cannot read 4 bytes of process"));
}

TEST_CASE(
    "Between tasks of one host, large payloads are read in place and small ones come "
    "over TCP") {
  constexpr int64_t kLarge = 300'000;  // 1.2 MB
  std::promise<void> posted_first;
  net::testing::run_tasks(
      2,
      [&](TcpRuntime& runtime, int rank) {
        if (rank == 0) {
          posted_first.get_future().wait();
          std::vector<float> borrowed = counting(kLarge, 1);
          runtime.send_borrowed(worker(1), make_message(Tag::kRing, 0, 0, nullptr),
                                FloatRange(borrowed));
          runtime.send(worker(1),
                       make_message(Tag::kParameters, 0, 100'000, counting(100'000, 7).data()));
          runtime.send(worker(1),
                       make_message(Tag::kParameters, 0, 1000, counting(1000, 3).data()));
          // Returns once the peer has released the borrowed floats.
          runtime.wait_sends();
          CHECK(runtime.recv(worker(1), Tag::kToParameterServer).values == counting(2, 0));
          return;
        }
        std::vector<float> into(kLarge, -1);
        PostedReceive receive = runtime.post_recv(worker(0), Tag::kRing, FloatRange(into));
        posted_first.set_value();
        const Message posted = runtime.wait(receive);
        CHECK(posted.delivered);
        CHECK(into == counting(kLarge, 1));
        CHECK(runtime.recv(worker(0), Tag::kParameters).values == counting(100'000, 7));
        CHECK(runtime.recv(worker(0), Tag::kParameters).values == counting(1000, 3));
        CHECK(runtime.payloads_read_in_place() == 2);  // not the 4 KB one
        runtime.send(worker(0), make_message(Tag::kToParameterServer, 0, 2, counting(2, 0).data()));
      },
      read_in_place);
}

TEST_CASE("Payloads come over TCP unless the receiver reads in place") {
  for (const int reader : {-1, 0}) {  // neither task, or only the sender, would read
    CAPTURE(reader);
    net::testing::run_tasks(
        2,
        [&](TcpRuntime& runtime, int rank) {
          if (rank == 0) {
            runtime.send(worker(1),
                         make_message(Tag::kRing, 0, 200'000, counting(200'000, 2).data()));
            return;
          }
          CHECK(runtime.recv(worker(0), Tag::kRing).values == counting(200'000, 2));
          CHECK(runtime.payloads_read_in_place() == 0);
        },
        [&](net::TcpOptions& options, int rank) { options.same_host_reads = rank == reader; });
  }
}

TEST_CASE("The ring all-reduce read in place ends with the bits it ends with over TCP") {
  const int tasks = 3;
  const int64_t n = 300'007;  // chunks and segments of unequal sizes, most above 64 KiB
  std::vector<std::vector<std::vector<float>>> results(2, std::vector<std::vector<float>>(tasks));
  std::vector<uint64_t> in_place(tasks);
  for (const bool same_host : {false, true}) {
    net::testing::run_tasks(
        tasks,
        [&](TcpRuntime& runtime, int rank) {
          std::vector<TaskId> ring;
          for (int i = 0; i < tasks; ++i) ring.push_back(worker(i));
          // Fractions: sums whose bits depend on their order.
          std::vector<float> data(n);
          for (int64_t i = 0; i < n; ++i) data[i] = 1.0f / static_cast<float>(i + rank + 3);
          for (int step = 0; step < 3; ++step) {
            std::vector<float> copy = data;
            ring_allreduce(runtime, ring, rank, FloatRange(copy), step, 100'000);
            if (step == 2) results[same_host][rank] = copy;
          }
          if (same_host) in_place[rank] = runtime.payloads_read_in_place();
        },
        [&](net::TcpOptions& options, int) { options.same_host_reads = same_host; });
  }
  for (int r = 0; r < tasks; ++r) {
    CHECK(results[true][r] == results[false][r]);
    // 3 steps, 2 (P-1) rounds, a chunk of 100,003 floats in 2 segments.
    CHECK(in_place[r] >= 3 * 2 * 2 * (tasks - 1) / 2);
  }
  CHECK(results[false][1] == results[false][0]);
}
