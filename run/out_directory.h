// Where a run writes: a run directory is never overwritten. A command's
// --out may name a folder that does not exist yet, or an empty one; a
// folder that holds anything else is refused, unless it is the run
// directory the run resumes from. That run then goes on in place, as a
// TensorFlow model directory does: its records are continued (run_files.h,
// continue_run_directory), its checkpoints join the old ones, and each
// earlier part ("segment") of the run keeps its own summary under
// segments/<n>/.
#pragma once

#include <string>
#include <string_view>

namespace distlab::run {

struct OutDirectory {
  std::string path;
  // The folder holds the run being resumed, which this run continues.
  bool continued = false;
  // The segments it holds already (summary.json's "segments"): this run
  // is segment `earlier_segments + 1`. 0 for a new run, and for a resumed
  // run whose earlier part never finished (checkpoints, no summary).
  int earlier_segments = 0;
};

// The run directory a --resume path names: the path itself, or, for a
// checkpoints/ folder or a checkpoint file in one, the folder above it.
std::string resumed_run_directory(const std::string& resume);

// Claims `out` for a run of `backend` ("simulate", "realnet", "train")
// resuming from `resume` ("" for none), and makes it. Throws InputError
// (exit 2) for a folder that holds anything but the run being resumed, or
// a resumed one that another command or another version of the files
// wrote. Before a continued run starts, the files its new segment writes
// afresh (the task folder, tasks/) go to segments/<n>/, so that nothing of
// the earlier segment is written over.
//
// `restarted`: whether the command may be a restart, by the platform, of a
// run's task that writes the run directory (a ./realnet --role chief). A
// platform starts it again with the same command line, so its --out then
// holds the same run unfinished (its task folder and checkpoints, no
// summary.json), which its new life goes on writing.
enum class Restarts { kNo, kPlatform };
OutDirectory claim_out_directory(const std::string& out, const std::string& resume,
                                 std::string_view backend, Restarts restarted = Restarts::kNo);

// `dir` if nothing is there yet, else the first of dir-2, dir-3, ... that
// is free: a default run directory (named by the second it began) of a
// run that starts in the same second as another.
std::string unused_directory(const std::string& dir);

}  // namespace distlab::run
