// timeline.json: Chrome trace events, one track per task (Perfetto,
// chrome://tracing), written as a stream of events.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "run/run_result.h"

namespace distlab::run {

// Where a timeline's text goes, a piece at a time: a large run's timeline
// is tens of megabytes, which the writer passes on rather than holds.
using TextSink = std::function<void(std::string_view)>;

void write_timeline(const RunResult& result, const TextSink& write);
// The timeline of a run continued in place: the earlier file's events,
// then `segment`'s, `offset` seconds later on the whole run's clock, under
// a marker of segment `number`.
void write_continued_timeline(std::string_view earlier, const RunResult& segment, double offset,
                              int number, const TextSink& write);

}  // namespace distlab::run
