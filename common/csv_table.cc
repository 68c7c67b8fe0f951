#include "common/csv_table.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "common/error.h"

namespace distlab {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells;
  std::size_t from = 0;
  while (true) {
    const std::size_t comma = line.find(',', from);
    cells.push_back(line.substr(from, comma == std::string::npos ? comma : comma - from));
    if (comma == std::string::npos) return cells;
    from = comma + 1;
  }
}

std::optional<int64_t> whole_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE || end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> real_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  // Underflow reads as the nearest double; overflow is no number.
  const bool overflow = errno == ERANGE && std::abs(value) == HUGE_VAL;
  if (overflow || end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

CsvTable::CsvTable(const std::string& text, std::string source) : source_(std::move(source)) {
  std::size_t from = 0;
  std::size_t line = 0;
  while (from < text.size()) {
    const std::size_t newline = text.find('\n', from);
    if (newline == std::string::npos) {
      unfinished_ = text.substr(from);
      return;
    }
    const std::string content = text.substr(from, newline - from);
    from = newline + 1;
    ++line;
    if (line == 1) {
      header_ = split_csv_line(content);
      for (std::size_t c = 0; c < header_.size(); ++c) columns_.emplace(header_[c], c);
      continue;
    }
    if (content.empty()) continue;
    std::vector<std::string> cells = split_csv_line(content);
    if (cells.size() != header_.size()) {
      throw DataError(source_, fmt::format("line {}: {} cells, the header has {}", line,
                                           cells.size(), header_.size()));
    }
    rows_.push_back(std::move(cells));
    lines_.push_back(line);
  }
}

std::size_t CsvTable::column(const std::string& name) const {
  const auto it = columns_.find(name);
  if (it == columns_.end()) throw DataError(source_, "no column '" + name + "'");
  return it->second;
}

const std::string& CsvTable::cell(std::size_t row, std::size_t column) const {
  return rows_.at(row).at(column);
}

double CsvTable::real(std::size_t row, std::size_t column) const {
  const std::string& text = cell(row, column);
  if (text.empty()) return std::numeric_limits<double>::quiet_NaN();
  const std::optional<double> value = real_number(text);
  if (!value) not_a_number(row, column);
  return *value;
}

int64_t CsvTable::whole(std::size_t row, std::size_t column, int64_t if_empty) const {
  const std::string& text = cell(row, column);
  if (text.empty()) return if_empty;
  const std::optional<int64_t> value = whole_number(text);
  if (!value) not_a_number(row, column);
  return *value;
}

void CsvTable::not_a_number(std::size_t row, std::size_t column) const {
  throw DataError(source_, fmt::format("line {}: {}: not a number: '{}'", lines_.at(row),
                                       header_.at(column), cell(row, column)));
}

}  // namespace distlab
