// timeline.json: Chrome trace events, one track per task (Perfetto,
// chrome://tracing), written as a stream of events.
#pragma once

#include <string>

#include "run/run_result.h"

namespace distlab::run {

std::string timeline_json(const RunResult& result);
// The timeline of a run continued in place: the earlier file's events,
// then `segment`'s, `offset` seconds later on the whole run's clock, under
// a marker of segment `number`.
std::string continued_timeline(std::string earlier, const RunResult& segment, double offset,
                               int number);

}  // namespace distlab::run
