// steps.csv's row of a step, written and read back: the one format that
// steps.csv and ./realnet's life files (task_lives.h) share.
#pragma once

#include <cstddef>
#include <string>

#include "common/csv_table.h"
#include "strategy/task_log.h"

namespace distlab::run {

// A number's cell: the shortest text that reads back as the same double,
// empty for NaN or an infinity.
std::string number_cell(double x);

// steps.csv's first line: its columns.
std::string steps_csv_header();
// A step's cells in steps.csv after its task and step (no newline): what
// ./realnet's tasks also record as they go (task_lives.h).
std::string step_cells(const strategy::StepRecord& step);

// Row `row` of a table with steps.csv's columns (by name: a file with more
// columns reads too), as the step it records; DataError naming the file,
// the line and the column of a missing column or a cell that is no number.
strategy::StepRecord read_step(const CsvTable& table, std::size_t row);

}  // namespace distlab::run
