// Command-line parsing with the project's exit statuses: CLI11 exits with
// codes of its own (105 for a value out of range, 109 for an unknown
// option...); every distlab command exits 0 for --help and kExitBadInput
// for any mistake on its command line.
#pragma once

#include <CLI/CLI.hpp>
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

}  // namespace distlab
