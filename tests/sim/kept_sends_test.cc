// Sends kept until delivered (sim/sim_runtime.h, a run without faults)
// against detached ones (a run with faults): a cheaper way for SimGrid to
// end a send, and nothing else. Each case runs both ways and must give the
// same messages, in the same order, at the same simulated times, whether a
// task keeps every send, keeps more than SimRuntime::kKeptSends at once,
// sends messages of no bytes (always detached), or ends while its last
// messages are still on their way.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <simgrid/s4u/Actor.hpp>

#include "child_process.h"
#include "collective_harness.h"
#include "sim/sim_runtime.h"
#include "strategy/ring_allreduce.h"
#include "support/temp_files.h"

namespace {

using namespace distlab;
using namespace distlab::strategy;

using Body = std::function<void(Runtime&, int rank, nlohmann::json& seen)>;

// Every task's finishing time and bytes, and what `body` saw, as JSON.
std::string run(int tasks, bool keep_sends, const Body& body, bool messages_in_turn = false) {
  return testing::in_child_process([&] {
    nlohmann::json seen = nlohmann::json::array();
    const testing::CollectiveRun run =
        testing::run_collective(tasks, 50e-6, 1e9, Fidelity::kFull,
                                [&](Runtime& runtime, int rank) { body(runtime, rank, seen); },
                                {.messages_in_turn = messages_in_turn, .keep_sends = keep_sends});
    return nlohmann::json{{"finished_at", run.finished_at},
                          {"bytes_sent", run.bytes_sent},
                          {"bytes_received", run.bytes_received},
                          {"seen", seen}}
        .dump();
  });
}

// What a receiver notes of a message: whose, which, and when it had it.
nlohmann::json note(const Runtime& runtime, const Message& m) {
  return {m.from.index, m.step, m.values.size(), m.values.empty() ? 0.0f : m.values[0],
          runtime.now()};
}

Message floats(int64_t step, int64_t count, float value) {
  std::vector<float> values(static_cast<std::size_t>(count), value);
  return make_message(Tag::kToParameterServer, step, count, values.data());
}

void check_same_both_ways(int tasks, const Body& body, bool messages_in_turn = false) {
  const std::string kept = run(tasks, true, body, messages_in_turn);
  const std::string detached = run(tasks, false, body, messages_in_turn);
  CAPTURE(kept, detached);
  CHECK(nlohmann::json::parse(kept)["seen"].size() > 0);
  CHECK(kept == detached);
}

}  // namespace

TEST_CASE("a ring all-reduce is timed the same with its sends kept or detached") {
  const int p = GENERATE(2, 5, 8);
  const int64_t segment_floats = GENERATE(0, 7);
  CAPTURE(p, segment_floats);
  check_same_both_ways(p, [&](Runtime& runtime, int rank, nlohmann::json& seen) {
    std::vector<TaskId> ring;
    for (int r = 0; r < p; ++r) ring.push_back({Role::kWorker, r});
    std::vector<float> data(100);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(rank * 100 + i);
    for (int64_t step = 0; step < 3; ++step) {
      ring_allreduce(runtime, ring, rank, FloatRange(data.data(), 100), step, segment_floats);
    }
    if (rank == 0) seen.push_back({data[0], data[99], runtime.now()});
  });
}

TEST_CASE("a burst of more sends than a task keeps arrives as detached sends do") {
  // Three senders each hand over 40 messages at once, some of no bytes, to
  // a server that takes them as they come and answers each sender.
  constexpr int kBurst = 40;
  static_assert(kBurst > static_cast<int>(sim::SimRuntime::kKeptSends));
  const bool in_turn = GENERATE(false, true);
  CAPTURE(in_turn);
  check_same_both_ways(
      4,
      [&](Runtime& runtime, int rank, nlohmann::json& seen) {
        if (rank == 0) {
          for (int i = 0; i < 3 * kBurst; ++i) {
            seen.push_back(note(runtime, runtime.recv_any(Tag::kToParameterServer)));
          }
          for (int peer = 1; peer < 4; ++peer) runtime.send({Role::kWorker, peer}, floats(0, 1, 1));
          return;
        }
        for (int i = 0; i < kBurst; ++i) {
          const int64_t count = i % 5 == 0 ? 0 : 1000 * rank + i;
          runtime.send({Role::kWorker, 0}, floats(i, count, static_cast<float>(rank)));
        }
        seen.push_back(note(runtime, runtime.recv({Role::kWorker, 0}, Tag::kToParameterServer)));
      },
      in_turn);
}

TEST_CASE("a task's last messages arrive after it has ended, kept or detached") {
  check_same_both_ways(2, [](Runtime& runtime, int rank, nlohmann::json& seen) {
    if (rank == 0) {
      // Sends and ends at once: its messages are still on their way.
      for (int i = 0; i < 3; ++i) runtime.send({Role::kWorker, 1}, floats(i, 100000, 1));
      return;
    }
    simgrid::s4u::this_actor::sleep_for(1e-3);
    for (int i = 0; i < 3; ++i) {
      seen.push_back(note(runtime, runtime.recv({Role::kWorker, 0}, Tag::kToParameterServer)));
    }
  });
}

TEST_CASE("a run that fails while sends are kept ends with its error alone") {
  // worker:1 fails with its messages on their way; SimGrid cancels them as
  // its actor ends, and the run reports the error without SimGrid's
  // complaint about comms never waited for (a backtrace on stderr).
  const std::string text = testing::in_child_process([] {
    test::TempDir temp;
    const std::string log = (temp.path / "stderr").string();
    std::fflush(stderr);
    const int saved = dup(2);
    const int file = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(file, 2);
    std::string error = "no error";
    try {
      testing::run_collective(2, 50e-6, 1e9, Fidelity::kFull, [](Runtime& runtime, int rank) {
        if (rank == 1) {
          for (int i = 0; i < 3; ++i) runtime.send({Role::kWorker, 0}, floats(i, 100000, 1));
          throw Error("worker:1 broke");
        }
        runtime.recv({Role::kWorker, 1}, Tag::kToParameterServer);
      });
    } catch (const Error& e) {
      error = e.what();
    }
    std::fflush(stderr);
    dup2(saved, 2);
    close(file);
    return error + "|" + test::read(log);
  });
  CHECK(text == "worker:1 broke|");
}
