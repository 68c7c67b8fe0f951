// A real run's step-time noise as slowdown factors: each replica step's
// compute over its task's fast steps, the first step of each task and the
// servers' updates left out; too few steps, or a file that is not a run's,
// refused by name. And a scenario names such a run relative to itself.
#include "run/step_time_spread.h"

#include <catch2/catch.hpp>
#include <string>

#include "common/error.h"
#include "run/scenario.h"
#include "support/temp_files.h"

using distlab::InputError;
using distlab::run::step_time_factors;
using distlab::test::TempDir;

namespace {

// steps.csv's two columns that matter, and another.
std::string steps_csv(const std::vector<std::pair<std::string, double>>& rows) {
  std::string text = "task,step,compute_seconds\n";
  int step = 0;
  for (const auto& [task, seconds] : rows) {
    text += task + "," + std::to_string(step++) + "," + std::to_string(seconds) + "\n";
  }
  return text;
}

}  // namespace

TEST_CASE("step-time spread: factors over each task's fast steps, first steps and servers out") {
  const TempDir dir;
  std::vector<std::pair<std::string, double>> rows = {{"chief:0", 9.0}, {"worker:0", 7.0}};
  for (int i = 0; i < 10; ++i) {
    rows.push_back({"chief:0", i == 4 ? 0.3 : 0.1});  // one step three times the others
    rows.push_back({"worker:0", 0.2});
    rows.push_back({"ps:0", 5.0});
  }
  distlab::test::write(dir.path / "run" / "steps.csv", steps_csv(rows));
  std::vector<double> factors = step_time_factors((dir.path / "run").string());
  REQUIRE(factors.size() == 20);
  std::sort(factors.begin(), factors.end());
  CHECK(factors.front() == 1);
  CHECK(factors[18] == 1);
  CHECK(factors.back() == Approx(3).epsilon(1e-4));
  // The file itself will do.
  CHECK(step_time_factors((dir.path / "run" / "steps.csv").string()).size() == 20);
}

TEST_CASE("step-time spread: too few steps, or no run, are refused by name") {
  const TempDir dir;
  distlab::test::write(dir.path / "few.csv", steps_csv({{"chief:0", 1}, {"chief:0", 1}}));
  CHECK_THROWS_WITH(
      step_time_factors((dir.path / "few.csv").string()),
      Catch::Contains("few.csv: 1 replica steps") && Catch::Contains("needs 10 or more"));
  CHECK_THROWS_AS(step_time_factors((dir.path / "none").string()), InputError);
  CHECK_THROWS_WITH(step_time_factors("/dev/zero"), Catch::Contains("not a regular file"));
}

TEST_CASE("step-time spread: a scenario's empirical_steps is found beside it, or refused") {
  const TempDir dir;
  std::vector<std::pair<std::string, double>> rows;
  for (int i = 0; i < 12; ++i) rows.push_back({"worker:0", 0.1 + 0.01 * i});
  distlab::test::write(dir.path / "measured" / "steps.csv", steps_csv(rows));
  const std::string base = "model: " DISTLAB_SOURCE_DIR
                           "/scenarios/models/mnist_cnn.yaml\n"
                           "cluster: {machine: n1-standard-4, chief: 1, workers: 1}\n"
                           "strategy: {name: allreduce}\n";
  distlab::test::write(dir.path / "ok.yaml",
                       base + "slowdowns:\n  - {empirical_steps: measured}\n");
  const auto s = distlab::run::load_scenario((dir.path / "ok.yaml").string());
  REQUIRE(s.slowdowns.size() == 1);
  REQUIRE(s.slowdowns[0].part.step_factors);
  CHECK(s.slowdowns[0].part.step_factors->size() == 11);
  distlab::test::write(dir.path / "bad.yaml",
                       base + "slowdowns:\n  - {empirical_steps: nowhere}\n");
  CHECK_THROWS_WITH(distlab::run::load_scenario((dir.path / "bad.yaml").string()),
                    Catch::Contains("bad.yaml:5: slowdowns[0].empirical_steps:") &&
                        Catch::Contains("nowhere: cannot open the file"));
}
