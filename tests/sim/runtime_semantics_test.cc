// The send semantics every backend must share (strategy/runtime.h): sends
// are buffered, and messages from one task with one tag arrive in the order
// sent, whatever their sizes and whoever else is sending.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <simgrid/s4u/Actor.hpp>

#include "child_process.h"
#include "collective_harness.h"

namespace {

using namespace distlab;
using namespace distlab::strategy;

std::string run(int tasks, const std::function<void(Runtime&, int)>& body) {
  return testing::in_child_process([&] {
    testing::run_collective(tasks, 50e-6, 1e9, Fidelity::kFull, body);
    return std::string("ok");
  });
}

Message floats(int64_t count, float value) {
  std::vector<float> values(count, value);
  return make_message(Tag::kRing, 0, count, values.data());
}

}  // namespace

TEST_CASE("everybody may send before anybody receives") {
  CHECK(run(4, [](Runtime& runtime, int rank) {
          for (int peer = 0; peer < 4; ++peer) {
            if (peer != rank) runtime.send({Role::kWorker, peer}, floats(1000, rank));
          }
          for (int peer = 0; peer < 4; ++peer) {
            if (peer == rank) continue;
            const Message m = runtime.recv({Role::kWorker, peer}, Tag::kRing);
            if (m.values.size() != 1000 || m.values[0] != static_cast<float>(peer)) {
              throw std::runtime_error("wrong message from worker:" + std::to_string(peer));
            }
          }
        }) == "ok");
}

TEST_CASE("a small message sent after a large one is received after it") {
  // On a shared link the small transfer finishes first; the runtime must
  // still hand the messages over in the order they were sent.
  CHECK(run(2, [](Runtime& runtime, int rank) {
          if (rank == 0) {
            runtime.send({Role::kWorker, 1}, floats(1 << 20, 1));
            runtime.send({Role::kWorker, 1}, floats(1, 2));
            return;
          }
          const Message first = runtime.recv({Role::kWorker, 0}, Tag::kRing);
          const Message second = runtime.recv({Role::kWorker, 0}, Tag::kRing);
          if (first.values.size() != (1u << 20) || second.values.size() != 1 ||
              second.values[0] != 2) {
            throw std::runtime_error("messages out of order");
          }
        }) == "ok");
}

TEST_CASE("receiving from one sender keeps another sender's messages for later") {
  CHECK(run(3, [](Runtime& runtime, int rank) {
          if (rank < 2) {
            for (int i = 0; i < 3; ++i) runtime.send({Role::kWorker, 2}, floats(10, rank * 10 + i));
            return;
          }
          // Everything from worker:1 first, then worker:0's, each in order.
          for (int from : {1, 0}) {
            for (int i = 0; i < 3; ++i) {
              const Message m = runtime.recv({Role::kWorker, from}, Tag::kRing);
              if (m.from != TaskId{Role::kWorker, from} || m.values[0] != from * 10 + i) {
                throw std::runtime_error("wrong message");
              }
            }
          }
        }) == "ok");
}

TEST_CASE("receive-any hands each sender's messages over in order") {
  CHECK(run(3, [](Runtime& runtime, int rank) {
          if (rank < 2) {
            runtime.send({Role::kWorker, 2}, floats(rank == 0 ? 100000 : 1, 0));
            runtime.send({Role::kWorker, 2}, floats(1, 1));
            return;
          }
          int next[2] = {0, 0};
          for (int i = 0; i < 4; ++i) {
            const Message m = runtime.recv_any(Tag::kRing);
            if (m.values.back() != static_cast<float>(next[m.from.index]++)) {
              throw std::runtime_error("out of order from " + task_name(m.from));
            }
          }
        }) == "ok");
}

TEST_CASE("time blocked in a receive splits into waiting and transfer") {
  const std::string text = testing::in_child_process([] {
    std::vector<TaskLog> logs(2);
    auto result =
        testing::run_collective(2, 0, 1e9, Fidelity::kTiming, [&](Runtime& runtime, int rank) {
          if (rank == 0) {
            // Busy for a second, then 1 GB: the receiver waits 1 s, then 1 s of transfer.
            runtime.compute({.label = "busy", .items = {{.flops = 1e30}}}, {});
            runtime.send({Role::kWorker, 1}, make_message(Tag::kRing, 0, 250'000'000, nullptr));
            return;
          }
          runtime.recv({Role::kWorker, 0}, Tag::kRing);
          logs[1] = runtime.log();
        });
    return nlohmann::json{{"waiting", logs[1].waiting_seconds},
                          {"communication", logs[1].communication_seconds},
                          {"received", logs[1].bytes_received}}
        .dump();
  });
  const auto json = nlohmann::json::parse(text);
  CHECK(json["received"] == 1'000'000'000);
  CHECK(json["waiting"].get<double>() == Approx(1.0));
  CHECK(json["communication"].get<double>() == Approx(1.0));
}

TEST_CASE("posted receives and borrowed sends copy in the simulator and keep their order") {
  CHECK(run(2, [](Runtime& runtime, int rank) {
          if (rank == 0) {
            std::vector<float> values(1000, 3);
            runtime.send_borrowed({Role::kWorker, 1}, make_message(Tag::kRing, 0, 0, nullptr),
                                  FloatRange(values));
            runtime.wait_sends();
            std::fill(values.begin(), values.end(), -1.0f);
            runtime.send({Role::kWorker, 1}, floats(2, 4));
            return;
          }
          std::vector<float> into(1000, 0);
          PostedReceive first = runtime.post_recv({Role::kWorker, 0}, Tag::kRing, FloatRange(into));
          PostedReceive second =
              runtime.post_recv({Role::kWorker, 0}, Tag::kRing, FloatRange::sized(2));
          const Message a = runtime.wait(first);
          const Message b = runtime.wait(second);
          if (a.delivered || !a.values.empty() || into != std::vector<float>(1000, 3) ||
              b.values != std::vector<float>(2, 4)) {
            throw std::runtime_error("posted receives took the wrong payloads");
          }
        }) == "ok");
}

namespace {

// Workers 3, 1 and 2 send to worker 0 (3 twice, first) while it is busy,
// then worker 1 once more while it waits: the order it takes them in.
std::string order_taken(bool messages_in_turn) {
  return testing::in_child_process([&] {
    std::string order;
    const auto body = [&order](Runtime& runtime, int rank) {
      const auto message = [](int64_t step) {
        return make_message(Tag::kToParameterServer, step, 0, nullptr);
      };
      if (rank == 0) {
        simgrid::s4u::this_actor::sleep_for(1e-3);  // busy while they arrive
        for (int i = 0; i < 5; ++i) {
          const Message m = runtime.recv_any(Tag::kToParameterServer);
          order += std::to_string(m.from.index) + "." + std::to_string(m.step) + " ";
        }
        return;
      }
      simgrid::s4u::this_actor::sleep_for(1e-5 * (rank == 3 ? 0 : rank));
      runtime.send({Role::kWorker, 0}, message(0));
      if (rank == 3) runtime.send({Role::kWorker, 0}, message(1));
      if (rank == 1) {
        simgrid::s4u::this_actor::sleep_for(2e-3);  // worker 0 waits for it
        runtime.send({Role::kWorker, 0}, message(1));
      }
    };
    testing::run_collective(4, 50e-6, 1e9, Fidelity::kFull, body,
                            {.messages_in_turn = messages_in_turn});
    return order;
  });
}

}  // namespace

TEST_CASE("a crowded task takes the messages that arrived while it was busy in turn by sender") {
  // In arrival order by default; in turn by sender, each sender's in order,
  // and then the one waited for as it comes.
  CHECK(order_taken(false) == "3.0 3.1 1.0 2.0 1.1 ");
  CHECK(order_taken(true) == "1.0 2.0 3.0 3.1 1.1 ");
}
