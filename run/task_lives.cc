#include "run/task_lives.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/atomic_file.h"
#include "common/csv_table.h"
#include "common/error.h"
#include "run/steps_csv.h"

namespace distlab::run {

namespace fs = std::filesystem;
using strategy::StepRecord;

namespace {

// The life a file's name gives: steps-<life>.csv; none for another name.
std::optional<uint32_t> life_of(const std::string& name) {
  constexpr std::string_view kPrefix = "steps-", kSuffix = ".csv";
  if (name.size() <= kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) ||
      !name.ends_with(kSuffix)) {
    return std::nullopt;
  }
  const std::string digits =
      name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      digits.size() > 9) {
    return std::nullopt;
  }
  return static_cast<uint32_t>(std::stoul(digits));
}

const LifeRecords* find_life(const std::map<uint32_t, LifeRecords>& lives, uint32_t life) {
  const auto it = lives.find(life);
  return it == lives.end() ? nullptr : &it->second;
}

}  // namespace

std::string task_folder(const std::string& run_directory, strategy::TaskId task) {
  return (fs::path(run_directory) / "tasks" /
          fmt::format("{}-{}", strategy::role_name(task.role), task.index))
      .string();
}

std::string life_file(const std::string& task_folder, uint32_t life) {
  return (fs::path(task_folder) / fmt::format("steps-{}.csv", life)).string();
}

uint32_t unused_life(const std::string& task_folder, uint32_t incarnation) {
  uint32_t life = incarnation;
  while (fs::exists(life_file(task_folder, life))) ++life;
  return life;
}

std::string life_file_header() {
  return steps_csv_header() + ",examples";
}

std::string life_row_begun(strategy::TaskId task, int64_t step) {
  return fmt::format("{},{},", strategy::task_name(task), step);
}

// The cells after the step, as steps.csv writes them, then the examples.
std::string life_row_ended(const StepRecord& s, int64_t examples) {
  return fmt::format("{},{}\n", step_cells(s), examples);
}

LifeRecords parse_life_records(const std::string& text, const std::string& source) {
  LifeRecords records;
  const CsvTable table(text, source);
  // A header cut short: the life was killed as it began.
  if (!table.has_header()) return records;
  if (table.header() != split_csv_line(life_file_header())) {
    throw DataError(source,
                    "not a task's life file as this version writes them (its "
                    "first line is not steps.csv's columns and examples)");
  }
  const std::size_t examples = table.column("examples");
  for (std::size_t row = 0; row < table.rows(); ++row) {
    records.steps.push_back(read_step(table, row));
    records.examples += table.whole(row, examples);
  }
  // The step the life was in: its task and step were written as it began
  // (the step's cell ends with its comma).
  const std::vector<std::string> begun = split_csv_line(table.unfinished());
  if (begun.size() >= 3) {
    records.unfinished = whole_number(begun[1]);
    if (!records.unfinished) {
      throw DataError(source, "its last line's step is not a number: '" + begun[1] + "'");
    }
  }
  return records;
}

std::map<uint32_t, LifeRecords> read_lives(const std::string& task_folder) {
  std::map<uint32_t, LifeRecords> lives;
  std::error_code error;
  if (!fs::is_directory(task_folder, error)) return lives;
  for (const fs::directory_entry& entry : fs::directory_iterator(task_folder)) {
    const std::optional<uint32_t> life = life_of(entry.path().filename().string());
    if (!life || !entry.is_regular_file()) continue;
    const std::string path = entry.path().string();
    lives.emplace(*life, parse_life_records(read_file_text(path), path));
  }
  return lives;
}

void add_earlier_lives(strategy::TaskLog& last, const std::vector<LifeRecords>& earlier) {
  std::vector<StepRecord> steps;
  for (const LifeRecords& life : earlier) {
    steps.insert(steps.end(), life.steps.begin(), life.steps.end());
    last.examples += life.examples;
    for (const StepRecord& s : life.steps) {
      last.compute_seconds += s.compute_seconds;
      last.communication_seconds += s.communication_seconds;
      last.waiting_seconds += s.waiting_seconds;
      last.checkpoint_seconds += s.checkpoint_seconds;
      last.input_seconds += s.input_seconds;
      last.bytes_sent += s.bytes_sent;
      last.bytes_received += s.bytes_received;
      for (int p = 0; p < strategy::kPhases; ++p) {
        last.phases[p] += s.phases[p];
        last.phase_cpu[p] += s.phase_cpu[p];
      }
    }
  }
  steps.insert(steps.end(), std::make_move_iterator(last.steps.begin()),
               std::make_move_iterator(last.steps.end()));
  last.steps = std::move(steps);
}

int64_t rollback_lost_steps(const LifeRecords& chief_life, int64_t restored_step) {
  return std::count_if(chief_life.steps.begin(), chief_life.steps.end(),
                       [&](const StepRecord& s) { return s.step >= restored_step; });
}

int64_t rejoin_lost_steps(const LifeRecords& dead, const LifeRecords* next) {
  if (next == nullptr || next->steps.empty()) return dead.unfinished ? 1 : 0;
  const int64_t went_on_from = next->steps.front().step;
  int64_t lost = std::count_if(dead.steps.begin(), dead.steps.end(),
                               [&](const StepRecord& s) { return s.step >= went_on_from; });
  if (dead.unfinished && *dead.unfinished >= went_on_from) ++lost;
  return lost;
}

std::optional<double> first_step_start(const std::vector<const LifeRecords*>& lives) {
  std::optional<double> first;
  for (const LifeRecords* life : lives) {
    if (life == nullptr || life->steps.empty()) continue;
    const double start = life->steps.front().start;
    if (!first || start < *first) first = start;
  }
  return first;
}

void measure_failures(std::vector<Failure>& failures,
                      const std::vector<std::vector<uint32_t>>& lives_at_failure,
                      const std::vector<std::map<uint32_t, LifeRecords>>& lives,
                      const strategy::ClusterSpec& cluster) {
  if (lives_at_failure.size() != failures.size()) {
    throw Error(
        fmt::format("{} failures, but the lives of {}", failures.size(), lives_at_failure.size()));
  }
  const auto task_count = static_cast<std::size_t>(cluster.task_count());
  if (lives.size() != task_count) {
    throw Error(fmt::format("a run of {} tasks given the lives of {}", task_count, lives.size()));
  }
  for (std::size_t k = 0; k < failures.size(); ++k) {
    Failure& failure = failures[k];
    const std::vector<uint32_t>& at = lives_at_failure[k];
    if (at.size() != task_count) throw Error("a failure's lives are not one per task");
    std::vector<const LifeRecords*> next_lives;
    if (failure.recovery == "rejoin") {
      std::size_t t = 0;
      while (t < task_count &&
             strategy::task_name(cluster.task_at(static_cast<int>(t))) != failure.task) {
        ++t;
      }
      if (t == task_count) throw Error("a failure of " + failure.task + ", not a task of the run");
      const LifeRecords* dead = find_life(lives[t], at[t]);
      const LifeRecords* next = find_life(lives[t], at[t] + 1);
      failure.lost_steps = rejoin_lost_steps(dead != nullptr ? *dead : LifeRecords{}, next);
      next_lives.push_back(next);
    } else {
      if (cluster.replicas() > 0) {
        const auto chief = static_cast<std::size_t>(cluster.ordinal(cluster.replica(0)));
        const LifeRecords* ended = find_life(lives[chief], at[chief]);
        failure.lost_steps =
            rollback_lost_steps(ended != nullptr ? *ended : LifeRecords{}, failure.restored_step);
      }
      for (std::size_t t = 0; t < task_count; ++t)
        next_lives.push_back(find_life(lives[t], at[t] + 1));
    }
    if (const std::optional<double> start = first_step_start(next_lives)) {
      failure.recovery_seconds = std::max(0.0, *start - failure.at);
    }
  }
}

LifeRecorder::LifeRecorder(const std::string& path, strategy::TaskId task)
    : path_(path), task_(task) {
  std::error_code error;
  fs::create_directories(fs::path(path).parent_path(), error);
  file_ = std::fopen(path.c_str(), "w");
  if (file_ == nullptr) {
    throw Error(path + ": cannot record the task's steps: " + std::strerror(errno));
  }
  write(life_file_header() + "\n");
}

LifeRecorder::~LifeRecorder() {
  if (file_ != nullptr) std::fclose(file_);
}

void LifeRecorder::began(int64_t step) {
  write(life_row_begun(task_, step));
}

void LifeRecorder::ended(const StepRecord& record, int64_t examples) {
  write(life_row_ended(record, examples));
}

void LifeRecorder::write(const std::string& text) {
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0) {
    throw Error(path_ + ": cannot record the task's steps: " + std::strerror(errno));
  }
}

}  // namespace distlab::run
