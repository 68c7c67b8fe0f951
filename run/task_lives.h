// Every life of a real task, kept as it goes. A task process killed with
// SIGKILL takes its memory with it, so each life of a task (its first
// start, and each restart: its incarnation, strategy/runtime.h) appends its
// steps to a file of its own in the task folder, one row per finished step,
// flushed at once:
//
//   <run directory>/tasks/<role>-<index>/steps-<life>.csv
//
// Its columns are steps.csv's, then `examples` (those the step trained
// on). A row is written in two parts: the task and the step as the step
// begins, the rest as it ends. So a file whose life was killed ends with the
// step it was in, begun and not finished, as a last line without its
// newline; a row is never half a step.
//
// The records serve twice: a task's last life adds the earlier lives' to
// its report, so that the run directory holds every life, as the
// simulator's does (sim/task_supervisor.h); and the launcher measures from
// them what each failure cost (the steps done again, the time until the
// new life's first step) where otherwise it only knows bounds.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "run/run_result.h"
#include "strategy/runtime.h"
#include "strategy/task.h"
#include "strategy/task_log.h"

namespace distlab::run {

// tasks/<role>-<index>/ under the run directory.
std::string task_folder(const std::string& run_directory, strategy::TaskId task);
// steps-<life>.csv in a task folder.
std::string life_file(const std::string& task_folder, uint32_t life);
// The life a task starting as `incarnation` records as: that number, or,
// when its file exists already, the next one free. A task a platform
// restarts with the same command line (./realnet --role) knows no
// incarnation of its own, and its earlier lives' files must stay.
uint32_t unused_life(const std::string& task_folder, uint32_t incarnation);

// A life file's first line: steps.csv's columns, then "examples".
std::string life_file_header();
// The two parts of a step's row: "worker:0,17," as it begins, and the
// rest, its newline included, as it ends.
std::string life_row_begun(strategy::TaskId task, int64_t step);
std::string life_row_ended(const strategy::StepRecord& record, int64_t examples);

// What one life's file says.
struct LifeRecords {
  std::vector<strategy::StepRecord> steps;  // its finished steps, in order
  int64_t examples = 0;                     // trained on in them
  // The step it was in when it ended (killed): begun, not finished.
  std::optional<int64_t> unfinished;
};

// Throws DataError naming `source` (and the line) for text that is not a
// life file as this version writes them. An empty text (a life killed
// before it wrote anything) holds no records.
LifeRecords parse_life_records(const std::string& text, const std::string& source);

// Every life file of a task folder, by life (none when there is no folder).
std::map<uint32_t, LifeRecords> read_lives(const std::string& task_folder);

// Adds the lives before a task's last one to the last one's log, as the
// simulator keeps them: their steps before its own, and to its totals what
// their steps recorded (examples, seconds by kind and phase, bytes). What a
// killed life did outside its steps (starting up, evaluating) is not
// known, and not added.
void add_earlier_lives(strategy::TaskLog& last, const std::vector<LifeRecords>& earlier);

// The steps a rollback made the run do again: those the chief's life that
// it ended recorded at or past the step the run went back to.
int64_t rollback_lost_steps(const LifeRecords& chief_life, int64_t restored_step);
// The steps a rejoin made a task do again: those its dead life had begun
// (finished, or the one it was in) from the step its next life went on
// from. Without a step of the next life recorded, the one it was in.
int64_t rejoin_lost_steps(const LifeRecords& dead, const LifeRecords* next);
// When the first of these lives began its first step (none: none did).
std::optional<double> first_step_start(const std::vector<const LifeRecords*>& lives);

// Measures the failures of a run from every task's records. `lives[t]` are
// task t's (cluster ordinal), by life; `lives_at_failure[k]` every task's
// life as failure k struck, before its recovery started new ones (a rejoin
// the failed task's next life, a rollback every task's). lost_steps and
// recovery_seconds become what the records show. A life without a file
// began no step (a task makes its file once connected); where no new life
// took a step (the run ended first), recovery_seconds stays as it was.
void measure_failures(std::vector<Failure>& failures,
                      const std::vector<std::vector<uint32_t>>& lives_at_failure,
                      const std::vector<std::map<uint32_t, LifeRecords>>& lives,
                      const strategy::ClusterSpec& cluster);

// Appends a life's rows to its file as the task goes: the runtime's step
// observer. The file is made (and its folder) on construction, replacing
// any file of that life, and flushed after each part of a row (fflush,
// not fsync: the rows must survive the process, not the machine). Throws
// Error when the file cannot be written.
class LifeRecorder : public strategy::Runtime::StepObserver {
 public:
  LifeRecorder(const std::string& path, strategy::TaskId task);
  ~LifeRecorder() override;
  LifeRecorder(const LifeRecorder&) = delete;
  LifeRecorder& operator=(const LifeRecorder&) = delete;

  void began(int64_t step) override;
  void ended(const strategy::StepRecord& record, int64_t examples) override;

 private:
  void write(const std::string& text);

  std::string path_;
  strategy::TaskId task_;
  std::FILE* file_ = nullptr;
};

}  // namespace distlab::run
