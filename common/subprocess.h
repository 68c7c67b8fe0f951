// Running another program of distlab's to its end, its output to a log:
// ./simulate simulating a real run's scenario in a child (SimGrid runs one
// simulation a process), ./calibrate launching real runs.
#pragma once

#include <string>
#include <vector>

namespace distlab {

// The path of this process's executable (/proc/self/exe).
std::string this_executable();

// The distlab program `name` ("distlab-realnet") in the folder of this
// process's executable, where the build puts them all.
std::string sibling_executable(const std::string& name);

// Runs `program` with `args`, stdout and stderr to the file `log`, and
// returns its exit status (128 + the signal if one ended it). Throws
// Error when it cannot start.
int run_to_log(const std::string& program, const std::vector<std::string>& args,
               const std::string& log);

// The last `lines` lines of a file, each on a line of its own indented by
// two spaces, for an error message ("" when it cannot be read).
std::string tail_of_file(const std::string& path, int lines);

}  // namespace distlab
