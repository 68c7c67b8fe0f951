// The TCP runtime's messages without copies (strategy/runtime.h): receives
// posted before their message comes take its payload in place, receives
// posted later get it copied in, borrowed sends are written from the
// caller's floats; and the ring all-reduce built on them sums exactly.
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <exception>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "net/cluster/cluster_config.h"
#include "net/runtime/tcp_runtime.h"
#include "strategy/ring_allreduce.h"
#include "tests/net/loopback_tasks.h"

namespace {

using namespace distlab;
using namespace distlab::strategy;
using net::TcpRuntime;
using net::testing::counting;
using net::testing::worker;

Message floats(Tag tag, const std::vector<float>& values) {
  return make_message(tag, 0, static_cast<int64_t>(values.size()), values.data());
}

}  // namespace

TEST_CASE("A receive posted before its message comes takes the payload in place") {
  std::promise<void> posted;
  net::testing::run_tasks(2, [&](TcpRuntime& runtime, int rank) {
    if (rank == 0) {
      posted.get_future().wait();
      runtime.send(worker(1), floats(Tag::kRing, counting(300'000, 1)));
      return;
    }
    std::vector<float> into(300'000, -1);
    PostedReceive receive = runtime.post_recv(worker(0), Tag::kRing, FloatRange(into));
    posted.set_value();
    const Message m = runtime.wait(receive);
    CHECK(m.delivered);
    CHECK(m.values.empty());
    CHECK(m.bytes == 300'000 * sizeof(float));
    CHECK(into == counting(300'000, 1));
  });
}

TEST_CASE("A receive posted after its message came gets the payload copied in") {
  net::testing::run_tasks(2, [&](TcpRuntime& runtime, int rank) {
    if (rank == 0) {
      runtime.send(worker(1), floats(Tag::kRing, counting(1000, 5)));
      runtime.send(worker(1), floats(Tag::kParameters, {1}));
      return;
    }
    // Sent after it on the same connection: the ring message is in.
    runtime.recv(worker(0), Tag::kParameters);
    std::vector<float> into(1000, -1);
    PostedReceive receive = runtime.post_recv(worker(0), Tag::kRing, FloatRange(into));
    const Message m = runtime.wait(receive);
    CHECK_FALSE(m.delivered);
    CHECK(m.values.empty());
    CHECK(into == counting(1000, 5));
  });
}

TEST_CASE("Posted receives take their messages in the order sent") {
  std::promise<void> posted;
  net::testing::run_tasks(2, [&](TcpRuntime& runtime, int rank) {
    if (rank == 0) {
      runtime.send(worker(1), floats(Tag::kRing, counting(10, 0)));  // before any posting
      posted.get_future().wait();
      runtime.send(worker(1), floats(Tag::kRing, counting(200'000, 100)));
      runtime.send(worker(1), floats(Tag::kRing, counting(3, 7)));
      return;
    }
    std::vector<float> a(10), b(200'000), c(3);
    std::vector<PostedReceive> receives;
    receives.push_back(runtime.post_recv(worker(0), Tag::kRing, FloatRange(a)));
    receives.push_back(runtime.post_recv(worker(0), Tag::kRing, FloatRange(b)));
    // Without floats: the message keeps its own.
    receives.push_back(runtime.post_recv(worker(0), Tag::kRing, FloatRange::sized(3)));
    posted.set_value();
    runtime.wait(receives[0]);
    CHECK(runtime.wait(receives[1]).delivered);
    const Message last = runtime.wait(receives[2]);
    CHECK(a == counting(10, 0));
    CHECK(b == counting(200'000, 100));
    CHECK(last.values == counting(3, 7));
  });
}

TEST_CASE("A posted receive refuses a message of another size") {
  std::promise<void> posted;
  CHECK_THROWS_WITH(
      net::testing::run_tasks(2,
                              [&](TcpRuntime& runtime, int rank) {
                                if (rank == 0) {
                                  posted.get_future().wait();
                                  runtime.send(worker(1), floats(Tag::kRing, counting(12, 0)));
                                  return;
                                }
                                std::vector<float> into(10);
                                PostedReceive receive =
                                    runtime.post_recv(worker(0), Tag::kRing, FloatRange(into));
                                posted.set_value();
                                runtime.wait(receive);
                              }),
      Catch::Contains("sent 48 bytes where 40 were expected"));
}

TEST_CASE("A withdrawn receive leaves its message to a later recv") {
  std::promise<void> withdrawn;
  net::testing::run_tasks(2, [&](TcpRuntime& runtime, int rank) {
    if (rank == 0) {
      withdrawn.get_future().wait();
      runtime.send(worker(1), floats(Tag::kRing, counting(50'000, 2)));
      return;
    }
    std::vector<float> into(50'000, -1);
    { PostedReceive receive = runtime.post_recv(worker(0), Tag::kRing, FloatRange(into)); }
    withdrawn.set_value();
    const Message m = runtime.recv(worker(0), Tag::kRing);
    CHECK(m.values == counting(50'000, 2));
    CHECK(into == std::vector<float>(50'000, -1));  // nothing written after the withdrawal
  });
}

TEST_CASE("A borrowed send is written from the caller's floats until wait_sends") {
  net::testing::run_tasks(2, [&](TcpRuntime& runtime, int rank) {
    const int64_t n = 4 << 20;  // 16 MB: more than the socket takes at once
    if (rank == 0) {
      std::vector<float> values = counting(n, 3);
      runtime.send_borrowed(worker(1), make_message(Tag::kRing, 0, 0, nullptr), FloatRange(values));
      runtime.wait_sends();
      std::fill(values.begin(), values.end(), -7.0f);  // the caller's again
      CHECK(runtime.log().bytes_sent == static_cast<uint64_t>(n) * sizeof(float));
      return;
    }
    const Message m = runtime.recv(worker(0), Tag::kRing);
    CHECK(m.values == counting(n, 3));
  });
}

TEST_CASE("Borrowed sends to a peer that is gone end in an error, not a wait") {
  std::promise<void> connected, gone;
  const std::string outcome = [&] {
    try {
      net::testing::run_tasks(2, [&](TcpRuntime& runtime, int rank) {
        if (rank == 1) {
          // Leaves without reading or saying goodbye, once worker:0 is
          // connected too (else its connect() is what fails): its runtime
          // closes.
          connected.get_future().wait();
          gone.set_value();
          throw Error("worker:1 leaves");
        }
        connected.set_value();
        gone.get_future().wait();
        std::vector<float> values(16 << 20, 1.0f);  // 64 MB: more than the sockets hold
        runtime.send_borrowed(worker(1), make_message(Tag::kRing, 0, 0, nullptr),
                              FloatRange(values));
        try {
          runtime.wait_sends();
        } catch (const Error& e) {
          throw Error(std::string("wait_sends: ") + e.what());
        }
      });
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  }();
  CHECK_THAT(outcome, Catch::Contains("rank 0: wait_sends: worker:0: connection with worker:1") &&
                          Catch::Contains("worker:1 leaves"));
}

TEST_CASE("The ring all-reduce over TCP sums exactly, whatever the segments") {
  for (const int tasks : {2, 3}) {
    for (const int64_t segment : {int64_t{0}, int64_t{1000}, int64_t{4096}}) {
      CAPTURE(tasks, segment);
      const int64_t n = 100'003;  // chunks and segments of unequal sizes
      std::vector<std::vector<float>> results(tasks);
      net::testing::run_tasks(tasks, [&](TcpRuntime& runtime, int rank) {
        std::vector<TaskId> ring;
        for (int i = 0; i < tasks; ++i) ring.push_back(worker(i));
        // Small integers: every order of summing gives the same floats.
        std::vector<float> data(n);
        for (int64_t i = 0; i < n; ++i) data[i] = static_cast<float>((i * (rank + 1)) % 97);
        for (int step = 0; step < 3; ++step) {
          std::vector<float> copy = data;
          ring_allreduce(runtime, ring, rank, FloatRange(copy), step, segment);
          if (step == 2) results[rank] = copy;
        }
      });
      for (int64_t i = 0; i < n; i += 997) {
        float expected = 0;
        for (int r = 0; r < tasks; ++r) expected += static_cast<float>((i * (r + 1)) % 97);
        CHECK(results[0][i] == expected);
      }
      for (int r = 1; r < tasks; ++r) CHECK(results[r] == results[0]);
    }
  }
}
