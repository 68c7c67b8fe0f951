// libFuzzer target: the reader of a task's report (run::parse_task_report),
// fed arbitrary text, as a chief reads a worker's report off the network
// (run/report_exchange.h) and the launcher reads each task's file. It must
// return or refuse the text with a distlab::Error. A report that is read
// must write back (task_report_json) to text that reads as the same
// report, written alike. Anything else (another exception, a sanitizer
// report, a trap) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error.h"
#include "run/task_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  distlab::run::TaskReport report;
  try {
    report = distlab::run::parse_task_report(text, "the report");
  } catch (const distlab::Error&) {
    return 0;
  }
  const std::string written = distlab::run::task_report_json(report);
  if (distlab::run::task_report_json(distlab::run::parse_task_report(written, "written")) !=
      written)
    __builtin_trap();
  return 0;
}
