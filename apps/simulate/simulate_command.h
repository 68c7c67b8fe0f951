// ./simulate's run: the scenario with the command line's changes, on the
// machine catalog, simulated to a run directory, with notes and a progress
// display on the way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace distlab::simulate {

struct Options {
  std::string scenario;
  std::vector<std::string> sets;
  std::vector<std::string> unsets;
  std::string fidelity;
  std::optional<uint64_t> seed;
  std::string out;
  std::string resume;
  std::optional<int64_t> checkpoint_every;
  std::vector<std::string> machines;        // empty: the shipped catalog and ./calibrate's overlay
  std::vector<std::string> calibrate_from;  // real run directories whose costs to use
  bool no_profile = false;  // not the model's profile (./calibrate --scenario) even if there is one
  int threads = 2;
  bool quiet = false;
  std::string command;  // the command line, for summary.json
};

// Returns the exit status. Throws InputError for bad input, Error for a
// failed run.
int simulate_command(const Options& o);

}  // namespace distlab::simulate
