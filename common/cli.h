// The project's exit statuses for its commands. CLI11 exits with codes of
// its own (105 for a value out of range, 109 for an unknown option...);
// every distlab command exits 0 for --help, kExitBadInput for a mistake on
// its command line or in its input files, kExitFailure when the run fails.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>

#include "common/error.h"

namespace distlab {

// Parses; returns the exit status when the program should stop now.
inline std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and the usage hint
    return kExitBadInput;
  }
}

// Runs a command's body and turns what it throws into the command's exit
// status, with the message on stderr: kExitBadInput for the user's input,
// kExitFailure for anything else.
template <typename Body>
int run_reporting_errors(Body&& body) {
  try {
    return body();
  } catch (const InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitFailure;
  }
}

}  // namespace distlab
