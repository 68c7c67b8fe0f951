#include "run/step_time_spread.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "common/atomic_file.h"
#include "common/csv_table.h"
#include "common/error.h"

namespace distlab::run {

std::vector<double> step_time_factors(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string file =
      fs::is_directory(path, ec) ? (fs::path(path) / "steps.csv").string() : path;
  // Not a device or a pipe, which might never end.
  if (fs::exists(file, ec) && !fs::is_regular_file(file, ec)) {
    throw InputError(file + ": not a run's steps.csv (not a regular file)");
  }
  const CsvTable table(read_file_text(file), file);
  const std::size_t task = table.column("task");
  const std::size_t compute = table.column("compute_seconds");
  std::map<std::string, std::vector<double>> by_task;  // in the order of their steps
  for (std::size_t row = 0; row < table.rows(); ++row) {
    const std::string& name = table.cell(row, task);
    if (name.rfind("chief:", 0) != 0 && name.rfind("worker:", 0) != 0) continue;
    const double seconds = table.real(row, compute);
    if (std::isfinite(seconds) && seconds > 0) by_task[name].push_back(seconds);
  }
  std::vector<double> factors;
  for (auto& [name, steps] : by_task) {
    if (steps.size() < 2) continue;
    steps.erase(steps.begin());  // its start-up
    std::vector<double> sorted = steps;
    std::sort(sorted.begin(), sorted.end());
    const double fast = sorted[sorted.size() / 20];
    for (const double s : steps) factors.push_back(std::max(1.0, s / fast));
  }
  if (factors.size() < 10) {
    throw InputError(file + ": " + std::to_string(factors.size()) +
                     " replica steps after each task's first; a step-time spread needs 10 or more");
  }
  return factors;
}

}  // namespace distlab::run
