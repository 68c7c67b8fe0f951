#include "run/out_directory.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>

#include "common/error.h"
#include "run/run_files.h"
#include "run/run_reader.h"
#include "run/steps_csv.h"

namespace distlab::run {
namespace fs = std::filesystem;
namespace {

bool holds_anything(const fs::path& dir) {
  std::error_code error;
  return !fs::is_empty(dir, error) || error;
}

// The same folder, under whatever names the two paths give it.
bool same_folder(const fs::path& a, const fs::path& b) {
  std::error_code error;
  return fs::equivalent(a, b, error) && !error;
}

// What a command's run directory holds, for the message that refuses it.
std::string what_it_holds(const fs::path& dir) {
  if (fs::exists(dir / "summary.json")) return "an earlier run (summary.json)";
  if (fs::exists(dir / "checkpoints")) return "checkpoints of an earlier run";
  if (fs::exists(dir / "sweep.json")) return "a sweep";
  return "files";
}

// The first line of a file, "" when it has none.
std::string first_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The earlier run's summary.json, or null when it has none (a run that
// never finished left checkpoints alone).
nlohmann::json earlier_summary(const fs::path& dir) {
  const fs::path path = dir / "summary.json";
  if (!fs::exists(path)) return nullptr;
  std::ifstream in(path);
  nlohmann::json summary = nlohmann::json::parse(in, nullptr, false);
  if (summary.is_discarded() || !summary.is_object()) {
    throw InputError(path.string() +
                     ": not a summary that distlab wrote: cannot continue the run "
                     "in place; give another --out");
  }
  return summary;
}

// Refuses to continue a run that another command, or another layout of the
// records, wrote: its rows could not be joined to this run's.
void check_continuable(const fs::path& dir, const nlohmann::json& summary,
                       std::string_view backend) {
  const std::string earlier = summary.value("backend", "train");
  if (earlier != backend) {
    throw InputError(fmt::format(
        "--out {}: the run there ran on {}, this one on {}: give another --out, or continue it "
        "with the command that began it",
        dir.string(), earlier, backend));
  }
  if (backend == "train") return;
  if (first_line(dir / "steps.csv") != steps_csv_header()) {
    throw InputError(fmt::format(
        "--out {}: its steps.csv has other columns than this version of distlab writes: the "
        "records cannot be continued in place; give another --out",
        dir.string()));
  }
  // Read now what the run's end will join to, so that a damaged record
  // is found before the run rather than after it.
  try {
    read_run_directory(dir.string());
  } catch (const Error& e) {
    throw InputError(fmt::format("--out {}: cannot continue the run there: {}; give another --out",
                                 dir.string(), e.what()));
  }
}

// The files a segment writes afresh (the task folder), set aside for a
// continued run: under the segment they belong to, or, for a segment that
// never finished and so has no number, under segments/unfinished-<k>/.
void set_aside_earlier_segment(const fs::path& dir, int earlier_segments) {
  const fs::path tasks = dir / "tasks";
  if (!fs::exists(tasks)) return;
  fs::path target = dir / "segments" / std::to_string(earlier_segments) / "tasks";
  if (earlier_segments == 0 || fs::exists(target)) {
    int k = 1;
    do {
      target = dir / "segments" / fmt::format("unfinished-{}", k++) / "tasks";
    } while (fs::exists(target));
  }
  fs::create_directories(target.parent_path());
  fs::rename(tasks, target);
}

}  // namespace

std::string resumed_run_directory(const std::string& resume) {
  fs::path path = fs::path(resume).lexically_normal();
  if (!path.has_filename()) path = path.parent_path();  // "runs/a/"
  std::error_code error;
  if (fs::is_regular_file(path, error)) path = path.parent_path();
  if (path.filename() == "checkpoints") path = path.parent_path();
  return path.empty() ? "." : path.string();
}

std::string unused_directory(const std::string& dir) {
  std::string candidate = dir;
  for (int n = 2; fs::exists(candidate); ++n) candidate = fmt::format("{}-{}", dir, n);
  return candidate;
}

// A run that began in `dir` and has not finished: it left only its task
// folder and checkpoints.
bool unfinished_run(const fs::path& dir) {
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || (name != "tasks" && name != "checkpoints")) return false;
  }
  return true;
}

OutDirectory claim_out_directory(const std::string& out, const std::string& resume,
                                 std::string_view backend, Restarts restarted) {
  const fs::path dir(out);
  OutDirectory claimed{.path = out};
  std::error_code error;
  if (fs::exists(dir, error)) {
    if (!fs::is_directory(dir, error)) {
      throw InputError(fmt::format("--out {}: a file, not a folder", out));
    }
    if (holds_anything(dir)) {
      const bool resumed = !resume.empty() && same_folder(dir, resumed_run_directory(resume));
      if (!resumed && restarted == Restarts::kPlatform && unfinished_run(dir)) return claimed;
      if (!resumed) {
        throw InputError(fmt::format(
            "--out {}: holds {}; a run directory is never overwritten: give another --out{}", out,
            what_it_holds(dir),
            resume.empty() ? fmt::format(", or --resume {} to continue that run in place", out)
                           : ""));
      }
      const nlohmann::json summary = earlier_summary(dir);
      if (!summary.is_null()) {
        check_continuable(dir, summary, backend);
        const auto segments = summary.find("segments");
        claimed.earlier_segments =
            segments != summary.end() && segments->is_array() && !segments->empty()
                ? static_cast<int>(segments->size())
                : 1;
      }
      claimed.continued = true;
      set_aside_earlier_segment(dir, claimed.earlier_segments);
      return claimed;
    }
  }
  fs::create_directories(dir, error);
  if (error) throw InputError(fmt::format("--out {}: cannot make it: {}", out, error.message()));
  return claimed;
}

}  // namespace distlab::run
