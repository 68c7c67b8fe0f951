// A run resumed in place is one run in several segments (out_directory.h).
// Its records join here: the later segment's after the earlier's, on the
// whole run's clock, which runs on from where the earlier segments ended.
#pragma once

#include "run/run_result.h"

namespace distlab::run {

// The whole run: `earlier` (the segments so far, as read_run_directory
// reads them back) and then `later`. Times of `later` move on by
// earlier.run_seconds; each task's steps, curve and spans follow its
// earlier ones and its totals add to theirs, matched by task name; counts
// (examples, restarts, seconds) add up; the outcome (final loss, weights,
// steps) and the settings are the later segment's; where the run began
// (start_step, resumed_from) the earlier's.
RunResult join_segments(RunResult earlier, const RunResult& later);

// A run's segments: those it records, or, for a run of one segment, the
// run itself as one.
std::vector<Segment> segments_of(const RunResult& r);

}  // namespace distlab::run
