#include "run/provenance.h"

#include <catch2/catch.hpp>
#include <string>

#include "common/version.h"

using distlab::run::shell_command;
using distlab::run::shell_quote;

TEST_CASE("a command line is quoted so that a shell takes it back as it was") {
  CHECK(shell_quote("scenarios/ps_4workers.yaml") == "scenarios/ps_4workers.yaml");
  CHECK(shell_quote("cluster.workers=4") == "cluster.workers=4");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("faults=[{task: worker:1}]") == "'faults=[{task: worker:1}]'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  const char* argv[] = {"./simulate", "a b.yaml", "--set", "x=$HOME"};
  CHECK(shell_command(4, argv) == "./simulate 'a b.yaml' --set 'x=$HOME'");
}

TEST_CASE("this machine is described by its CPU, vCPUs and memory") {
  const distlab::run::MachineFacts m = distlab::run::this_machine();
  CHECK(m.name.rfind("this machine: ", 0) == 0);
  REQUIRE(m.figures.size() >= 2);
  CHECK(m.figures[0].first == "vcpus");
  CHECK(m.figures[0].second >= 1);
  CHECK(m.figures[1].first == "memory_gib");
  CHECK(m.figures[1].second > 0);
}

TEST_CASE("the build knows its version") {
  const std::string version = distlab::version();
  CHECK_FALSE(version.empty());
}
