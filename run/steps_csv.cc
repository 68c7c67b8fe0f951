#include "run/steps_csv.h"

#include <fmt/format.h>

#include <cmath>
#include <iterator>

#include "strategy/phase.h"

namespace distlab::run {

namespace {

std::string phase_column(int p, const char* suffix) {
  return fmt::format("phase_{}_{}", strategy::phase_name(static_cast<strategy::Phase>(p)), suffix);
}

}  // namespace

std::string number_cell(double x) {
  return std::isfinite(x) ? fmt::format("{}", x) : std::string();
}

std::string steps_csv_header() {
  std::string header =
      "task,step,start,end,compute_seconds,communication_seconds,waiting_seconds,"
      "checkpoint_seconds,bytes_sent,bytes_received,staleness,loss,input_seconds";
  for (int p = 0; p < strategy::kPhases; ++p) header += "," + phase_column(p, "seconds");
  for (int p = 0; p < strategy::kPhases; ++p) header += "," + phase_column(p, "cpu_seconds");
  return header;
}

std::string step_cells(const strategy::StepRecord& s) {
  std::string out =
      fmt::format("{},{},{},{},{},{},{},{},{},{},{}", number_cell(s.start), number_cell(s.end),
                  number_cell(s.compute_seconds), number_cell(s.communication_seconds),
                  number_cell(s.waiting_seconds), number_cell(s.checkpoint_seconds), s.bytes_sent,
                  s.bytes_received, s.staleness < 0 ? std::string() : std::to_string(s.staleness),
                  number_cell(s.loss), number_cell(s.input_seconds));
  for (const double seconds : s.phases) {
    fmt::format_to(std::back_inserter(out), ",{}", number_cell(seconds));
  }
  for (const double seconds : s.phase_cpu) {
    fmt::format_to(std::back_inserter(out), ",{}", number_cell(seconds));
  }
  return out;
}

strategy::StepRecord read_step(const CsvTable& t, std::size_t row) {
  strategy::StepRecord s{.step = t.whole(row, "step"),
                         .start = t.real(row, "start"),
                         .end = t.real(row, "end"),
                         .compute_seconds = t.real(row, "compute_seconds"),
                         .communication_seconds = t.real(row, "communication_seconds"),
                         .waiting_seconds = t.real(row, "waiting_seconds"),
                         .checkpoint_seconds = t.real(row, "checkpoint_seconds"),
                         .input_seconds = t.real(row, "input_seconds"),
                         .bytes_sent = static_cast<uint64_t>(t.whole(row, "bytes_sent")),
                         .bytes_received = static_cast<uint64_t>(t.whole(row, "bytes_received")),
                         .staleness = t.whole(row, "staleness", -1),
                         .loss = t.real(row, "loss")};
  for (int p = 0; p < strategy::kPhases; ++p) {
    s.phases[p] = t.real(row, phase_column(p, "seconds"));
    s.phase_cpu[p] = t.real(row, phase_column(p, "cpu_seconds"));
  }
  return s;
}

}  // namespace distlab::run
