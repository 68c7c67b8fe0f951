// A cluster's reports reach replica 0 over the runtime (run/report_exchange.h),
// whole and in cluster order, whatever order they were sent in; a report
// that names another task is refused. Over the simulated runtime here; the
// TCP one is tested end to end in tests/net/role_run_directory_test.sh.
#include "run/report_exchange.h"

#include <catch2/catch.hpp>
#include <simgrid/s4u.hpp>
#include <string>

#include "child_process.h"
#include "collective_harness.h"
#include "common/error.h"

namespace {

using namespace distlab;
using namespace distlab::strategy;

run::TaskReport report_of(int rank, int steps) {
  run::TaskReport r;
  r.log.task = {Role::kWorker, rank};
  r.log.host = "host-" + std::to_string(rank);
  for (int s = 0; s < steps; ++s) r.log.steps.push_back({.step = s, .loss = 0.5 + rank});
  r.outcome.weights_sha256 = std::string(64, static_cast<char>('a' + rank));
  return r;
}

}  // namespace

TEST_CASE("every task's report reaches replica 0, in cluster order") {
  const std::string got = testing::in_child_process([] {
    std::string seen;
    testing::run_collective(4, 50e-6, 1e9, Fidelity::kFull, [&](Runtime& runtime, int rank) {
      if (!run::gathers_reports(runtime)) {
        // The last task sends first; a large report crosses the wire too.
        simgrid::s4u::this_actor::sleep_for(1.0 / (rank + 1));
        run::send_task_report(runtime, report_of(rank, rank == 2 ? 5000 : 3));
        return;
      }
      const auto gathered = run::gather_task_reports(runtime, report_of(0, 1));
      if (!gathered.missing.empty()) seen += "missing! ";
      for (const run::TaskReport& r : gathered.reports) {
        seen += task_name(r.log.task) + " " + r.log.host + " " +
                std::to_string(r.log.steps.size()) + " " + r.outcome.weights_sha256.substr(0, 2) +
                "; ";
      }
    });
    return seen;
  });
  CHECK(got ==
        "worker:0 host-0 1 aa; worker:1 host-1 3 bb; worker:2 host-2 5000 cc; "
        "worker:3 host-3 3 dd; ");
}

TEST_CASE("a report that names another task is refused, naming both") {
  const std::string got = testing::in_child_process([] {
    std::string error;
    testing::run_collective(2, 50e-6, 1e9, Fidelity::kFull, [&](Runtime& runtime, int rank) {
      if (rank == 1) {
        run::send_task_report(runtime, report_of(0, 1));  // says it is worker:0
        return;
      }
      try {
        run::gather_task_reports(runtime, report_of(0, 1));
      } catch (const Error& e) {
        error = e.what();
      }
    });
    return error;
  });
  CHECK(got == "the report of worker:1 names worker:0");
}
