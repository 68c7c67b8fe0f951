// Where a run came from, for whoever reads its run directory later (a
// report): the command line that made it, distlab's version, and the
// machines it ran on with their figures.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace distlab::run {

// A machine type and its figures, as summary.json lists them: the catalog's
// published figures for a simulated type, what the kernel says of a real one.
struct MachineFacts {
  std::string name;         // "n1-standard-4", or "this machine: <CPU model>"
  std::string description;  // where the figures come from
  std::vector<std::pair<std::string, double>> figures;  // ("vcpus", 4), ("memory_gib", 15)...
};

struct Provenance {
  std::string command;  // as a shell would take it again
  std::string version;  // distlab's commit (common/version.h)
  std::vector<MachineFacts> machines;
  // The scenario as it ran (run::Scenario::text: overrides applied), kept
  // as scenario.yaml beside the results; "" keeps none.
  std::string scenario_text;
};

// The command line, each argument quoted for a POSIX shell where it needs
// it, so that it can be pasted and run again.
std::string shell_command(int argc, const char* const* argv);
std::string shell_quote(const std::string& word);

// The machine this process runs on: its CPU model, logical CPUs, memory
// and the kernels' ISA level (Linux: /proc/cpuinfo and /proc/meminfo).
MachineFacts this_machine();

// The command, distlab's version and this machine.
Provenance provenance_here(int argc, const char* const* argv);

}  // namespace distlab::run
