// What every simulated step must satisfy, for the tests that simulate.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "strategy/phase.h"

namespace distlab::testing {

// Every step of every task of a simulate_yaml() result: the phases add up
// to the step, none is negative, and nothing of the simulated time is left
// unnamed.
inline void check_phases_add_up(const nlohmann::json& run) {
  const auto other = static_cast<std::size_t>(strategy::index_of(strategy::Phase::kOther));
  for (const nlohmann::json& task : run["tasks"]) {
    INFO(task["name"].get<std::string>());
    for (std::size_t i = 0; i < task["step_phases"].size(); ++i) {
      INFO("step " << i);
      const nlohmann::json& phases = task["step_phases"][i];
      const double length =
          task["step_ends"][i].get<double>() - task["step_starts"][i].get<double>();
      double sum = 0;
      for (const nlohmann::json& seconds : phases) {
        CHECK(seconds.get<double>() >= -1e-12);
        sum += seconds.get<double>();
      }
      CHECK(sum == Approx(length).margin(1e-12));
      CHECK(std::abs(phases[other].get<double>()) <= 1e-9);
    }
  }
}

}  // namespace distlab::testing
