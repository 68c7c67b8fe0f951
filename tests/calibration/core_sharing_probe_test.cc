// The probe of how unevenly the cores are shared, and its fit of how long
// an uneven share lasts.
#include "calibration/core_sharing_probe.h"

#include <catch2/catch.hpp>
#include <cmath>

using distlab::calibration::fit_correlation_seconds;
using distlab::calibration::measure_core_sharing;
using distlab::calibration::relative_windowed_spread;

TEST_CASE("the windowed spread of a share that lasts c: 1 at the first window, falling") {
  CHECK(relative_windowed_spread(1e-3, 1e-3, 2e-3) == Approx(1));
  // Windows far shorter than c see the share whole; far longer ones
  // average 2 c / W independent shares in the variance.
  CHECK(relative_windowed_spread(1e-6, 1e-7, 1) == Approx(1).epsilon(1e-4));
  CHECK(relative_windowed_spread(1, 1e-9, 1e-3) == Approx(std::sqrt(2e-3)).epsilon(0.01));
  CHECK(relative_windowed_spread(8e-3, 1e-3, 2e-3) < relative_windowed_spread(4e-3, 1e-3, 2e-3));
}

TEST_CASE("the fit finds the correlation time of spreads made with it") {
  for (const double c : {0.3e-3, 2e-3, 10e-3}) {
    std::vector<std::pair<double, double>> by_window;
    for (const double w : {1e-3, 2e-3, 4e-3, 8e-3, 16e-3}) {
      by_window.emplace_back(w, 0.25 * relative_windowed_spread(w, 1e-3, c));
    }
    CHECK(fit_correlation_seconds(by_window) == Approx(c).epsilon(0.05));
  }
  CHECK(fit_correlation_seconds({}) == 0);
}

TEST_CASE("the probe measures 2, 3, 4 and 6 threads per core") {
  // Two cores, tasks of one thread: 4, 6, 8 and 12 tasks, a tenth of a
  // second each.
  const auto m = measure_core_sharing(2, 1, 0.4);
  REQUIRE(m.sharing.spread_by_load.size() == 4);
  const double loads[] = {2, 3, 4, 6};
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(m.sharing.spread_by_load[i].first == loads[i]);
    CHECK(m.sharing.spread_by_load[i].second >= 0);
    CHECK(m.sharing.spread_by_load[i].second < 5);
    REQUIRE(m.spread_by_window[i].size() == 5);
  }
  CHECK(m.sharing.correlation_seconds > 0);
  CHECK_THROWS(measure_core_sharing(0, 1, 0.4));
}
