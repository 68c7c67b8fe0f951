// The uneven sharing of a machine's cores that ./calibrate measures, and
// the weights a simulated task draws from it.
#include "sim/core_sharing.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

using distlab::sim::CoreSharing;
using distlab::sim::ShareUnevenness;
using distlab::sim::ShareWeights;
using distlab::sim::spread_at;

TEST_CASE("the spread at a load: none up to a thread a core, linear between the measured") {
  const CoreSharing sharing{.spread_by_load = {{2, 0.1}, {4, 0.3}, {6, 0.2}},
                            .correlation_seconds = 1e-3};
  CHECK(spread_at(sharing, 0.5) == 0);
  CHECK(spread_at(sharing, 1) == 0);
  CHECK(spread_at(sharing, 1.5) == Approx(0.05));  // from (1, 0) to the first
  CHECK(spread_at(sharing, 2) == Approx(0.1));
  CHECK(spread_at(sharing, 3) == Approx(0.2));
  CHECK(spread_at(sharing, 5) == Approx(0.25));
  CHECK(spread_at(sharing, 6) == Approx(0.2));
  CHECK(spread_at(sharing, 12) == Approx(0.2));  // the last beyond it
  CHECK(spread_at(CoreSharing{}, 6) == 0);       // not measured: even
}

TEST_CASE("a task's share weights: 1 when even, lognormal of the spread, lasting a while") {
  ShareWeights even({}, 7);
  CHECK(even.at(0) == 1);
  CHECK(even.at(5) == 1);

  // Drawn anew at every execution (no correlation): the logarithms have
  // the spread as their standard deviation.
  ShareWeights fresh({.spread = 0.5, .correlation_seconds = 0}, 7);
  std::vector<double> logs;
  for (int i = 0; i < 20000; ++i) logs.push_back(std::log(fresh.at(i * 1e-3)));
  double mean = 0, square = 0;
  for (const double l : logs) mean += l / static_cast<double>(logs.size());
  for (const double l : logs) square += (l - mean) * (l - mean) / static_cast<double>(logs.size());
  CHECK(std::abs(mean) < 0.02);
  CHECK(std::sqrt(square) == Approx(0.5).epsilon(0.03));

  // Lasting 1 s on average: executions a microsecond apart mostly share it.
  ShareWeights lasting({.spread = 0.5, .correlation_seconds = 1}, 7);
  int same = 0;
  double before = lasting.at(0);
  for (int i = 1; i <= 1000; ++i) {
    const double now = lasting.at(i * 1e-6);
    same += now == before;
    before = now;
  }
  CHECK(same >= 995);

  // The same seed, the same weights; another seed, others.
  ShareWeights a({.spread = 0.5, .correlation_seconds = 0}, 11);
  ShareWeights b({.spread = 0.5, .correlation_seconds = 0}, 11);
  ShareWeights c({.spread = 0.5, .correlation_seconds = 0}, 12);
  bool differs = false;
  for (int i = 0; i < 10; ++i) {
    const double wa = a.at(i), wb = b.at(i), wc = c.at(i);
    CHECK(wa == wb);
    differs = differs || wa != wc;
  }
  CHECK(differs);
}
