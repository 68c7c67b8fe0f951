// What a task learns when a peer fails: the peer's own error, carried by
// its goodbye (TcpRuntime::abandon), rather than a closed connection.
#include <catch2/catch.hpp>
#include <string>

#include "common/error.h"
#include "net/runtime/tcp_runtime.h"
#include "tests/net/loopback_tasks.h"

namespace {

using namespace distlab;
using namespace distlab::strategy;

// Runs two tasks: worker:1 fails once both are connected (saying why to its
// peer if `tells_why`), and worker:0 waits for a message from it. Returns
// worker:0's error.
std::string error_of_waiting_peer(bool tells_why) {
  try {
    net::testing::run_tasks(2, [&](net::TcpRuntime& runtime, int rank) {
      if (rank == 0) {
        runtime.recv({Role::kWorker, 1}, Tag::kRing);
        return;
      }
      const std::string error = "worker:1: the training loss became nan at step 2";
      if (tells_why) runtime.abandon(error);
      throw Error(error);
    });
  } catch (const Error& e) {
    const std::string errors = e.what();  // a line per task, "rank R: ..."
    const auto begin = errors.find("rank 0: ");
    if (begin == std::string::npos) return "no error at rank 0";
    return errors.substr(begin, errors.find('\n', begin) - begin);
  }
  return "no error";
}

}  // namespace

// The goodbye may come before worker:0 begins to wait (its error then names
// no receive) or while it waits ("while waiting for a ring message: ..."):
// either way it names the peer's error.
TEST_CASE("A peer waiting on a task that fails learns the task's error") {
  CHECK_THAT(error_of_waiting_peer(true),
             Catch::StartsWith("rank 0: worker:0: ") &&
                 Catch::Contains("worker:1 stopped: the training loss became nan at step 2"));
}

TEST_CASE("Without a goodbye, the peer sees only the closed connection") {
  CHECK_THAT(error_of_waiting_peer(false), Catch::StartsWith("rank 0: worker:0: ") &&
                                               Catch::Contains("connection with worker:1") &&
                                               !Catch::Contains("training loss"));
}
