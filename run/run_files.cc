// The run directory: summary.json (summary_json.h), steps.csv, curve.csv,
// timeline.json (timeline_json.h) and scenario.yaml, each written whole or
// not at all. CSV cells with a NaN, an infinity or a staleness of -1 are
// left empty.
#include "run/run_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iterator>
#include <string_view>
#include <system_error>

#include "common/atomic_file.h"
#include "common/error.h"
#include "run/run_reader.h"
#include "run/run_segments.h"
#include "run/steps_csv.h"
#include "run/summary_json.h"
#include "run/timeline_json.h"

namespace distlab::run {
namespace {

using strategy::TaskLog;

[[noreturn]] void fail(const std::filesystem::path& path, const char* what, int error) {
  throw Error(fmt::format("{}: {}: {}", path.string(), what, std::strerror(error)));
}

// Writes what `produce` passes to its sink to `dir/name` through a temporary
// file in `dir`, so that a reader never sees half a file.
void write_file(const std::filesystem::path& dir, const std::string& name,
                const std::function<void(const TextSink&)>& produce) {
  const std::filesystem::path path = dir / name;
  const std::filesystem::path temporary = dir / ("." + name + ".tmp");
  std::FILE* file = std::fopen(temporary.c_str(), "wb");
  if (file == nullptr) fail(path, "cannot write", errno);
  int error = 0;
  try {
    produce([&](std::string_view piece) {
      if (error == 0 && std::fwrite(piece.data(), 1, piece.size(), file) != piece.size()) {
        error = errno != 0 ? errno : EIO;
      }
    });
  } catch (...) {
    std::fclose(file);
    std::remove(temporary.c_str());
    throw;
  }
  if (std::fclose(file) != 0 && error == 0) error = errno;
  if (error != 0) {
    std::remove(temporary.c_str());
    fail(path, "cannot write", error);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    error = errno;
    std::remove(temporary.c_str());
    fail(path, "cannot write", error);
  }
}

void write_file(const std::filesystem::path& dir, const std::string& name,
                const std::string& content) {
  write_file(dir, name, [&](const TextSink& write) { write(content); });
}

// ---- CSV --------------------------------------------------------------------

// The shortest text that reads back as the same double; empty if not finite.

// The columns phase_input_seconds ... phase_other_seconds split each step
// by phase (strategy/phase.h); they add up to end - start. The columns
// phase_input_cpu_seconds ... phase_other_cpu_seconds are the CPU time of
// each phase.
std::string steps_csv(const RunResult& r) {
  std::string out = steps_csv_header() + "\n";
  for (const TaskLog& t : r.tasks) {
    const std::string name = strategy::task_name(t.task);
    for (const strategy::StepRecord& s : t.steps) {
      fmt::format_to(std::back_inserter(out), "{},{},{}\n", name, s.step, step_cells(s));
    }
  }
  return out;
}

std::string curve_csv(const RunResult& r) {
  std::string out = "seconds,step,train_loss,test_loss,test_accuracy\n";
  // The chief evaluates; should another task ever log a curve, the first
  // task (in cluster order) that has one is taken.
  const auto with_curve = std::find_if(r.tasks.begin(), r.tasks.end(),
                                       [](const TaskLog& t) { return !t.curve.empty(); });
  if (with_curve == r.tasks.end()) return out;
  for (const strategy::CurvePoint& p : with_curve->curve) {
    fmt::format_to(std::back_inserter(out), "{},{},{},{},{}\n", number_cell(p.seconds), p.step,
                   number_cell(p.train_loss), number_cell(p.test_loss),
                   number_cell(p.test_accuracy));
  }
  return out;
}

}  // namespace

std::string default_run_directory(const std::string& root, const std::string& scenario,
                                  std::time_t when) {
  std::tm utc{};
  gmtime_r(&when, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
  std::string dir = root;
  if (!dir.empty() && dir.back() != '/') dir += '/';
  return dir + scenario + "-" + stamp;
}

void write_run_directory(const std::string& dir, const RunResult& result) {
  const std::filesystem::path path(dir);
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (!error && !std::filesystem::is_directory(path, error) && !error) {
    error = std::make_error_code(std::errc::not_a_directory);
  }
  if (error) {
    throw Error(fmt::format("{}: cannot create directory: {}", dir, error.message()));
  }
  write_file(path, "summary.json", summary_json(result));
  write_file(path, "steps.csv", steps_csv(result));
  write_file(path, "curve.csv", curve_csv(result));
  write_file(path, "timeline.json", [&](const TextSink& write) { write_timeline(result, write); });
  if (!result.provenance.scenario_text.empty()) {
    write_file(path, "scenario.yaml", result.provenance.scenario_text);
  }
}

void write_run_directory(const OutDirectory& out, const RunResult& result) {
  if (out.continued) {
    continue_run_directory(out.path, result, out.earlier_segments);
  } else {
    write_run_directory(out.path, result);
  }
}

void continue_run_directory(const std::string& dir, const RunResult& segment,
                            int earlier_segments) {
  if (earlier_segments == 0) {
    write_run_directory(dir, segment);
    return;
  }
  const std::filesystem::path path(dir);
  const int number = earlier_segments + 1;
  const std::filesystem::path own = path / "segments" / std::to_string(number);
  RunResult earlier;
  try {
    earlier = read_run_directory(dir);
  } catch (const Error& e) {
    // The earlier records changed since the run began (claim_out_directory
    // read them then): the segment's own files go apart, whole.
    write_run_directory(own.string(), segment);
    throw Error(fmt::format("{}; this segment's records are whole in {}", e.what(), own.string()));
  }
  // Each segment's own summary and scenario; the first segment's were the
  // run's own until now.
  const std::filesystem::path first = path / "segments" / "1";
  std::filesystem::create_directories(first);
  for (const char* name : {"summary.json", "scenario.yaml"}) {
    if (std::filesystem::exists(path / name) && !std::filesystem::exists(first / name)) {
      write_file(first, name, read_file_text((path / name).string()));
    }
  }
  std::filesystem::create_directories(own);
  write_file(own, "summary.json", summary_json(segment));
  if (!segment.provenance.scenario_text.empty()) {
    write_file(own, "scenario.yaml", segment.provenance.scenario_text);
  }

  const double offset = earlier.run_seconds;
  std::string timeline;
  if (std::filesystem::exists(path / "timeline.json")) {
    timeline = read_file_text((path / "timeline.json").string());
  }
  const RunResult whole = join_segments(std::move(earlier), segment);
  write_file(path, "steps.csv", steps_csv(whole));
  write_file(path, "curve.csv", curve_csv(whole));
  write_file(path, "timeline.json", [&](const TextSink& write) {
    write_continued_timeline(timeline, segment, offset, number, write);
  });
  if (!segment.provenance.scenario_text.empty()) {
    write_file(path, "scenario.yaml", segment.provenance.scenario_text);
  }
  // Last: the summary says the run holds this segment once its records do.
  write_file(path, "summary.json", summary_json(whole));
}

std::string format_run_written(const std::string& dir, const RunResult& r) {
  // The chief writes the model file in full fidelity, where it has weights.
  const bool model = !r.weights_sha256.empty();
  return format_summary_table(r) +
         fmt::format("wrote {}/{{summary.json,steps.csv,curve.csv,timeline.json{}}}{}\n", dir,
                     model ? ",model.safetensors" : "",
                     r.checkpoint.enabled() ? " and checkpoints/" : "");
}

std::string format_run_written(const OutDirectory& out, const RunResult& r) {
  std::string text = format_run_written(out.path, r);
  if (out.continued && out.earlier_segments > 0) {
    text += fmt::format(
        "continued the run in {} in place: segment {}; its files hold the whole run, each "
        "segment's summary is in segments/\n",
        out.path, out.earlier_segments + 1);
  }
  return text;
}

}  // namespace distlab::run
