// A CSV file as distlab writes them (steps.csv, curve.csv, a task's life
// file): a header line of column names, then rows of plain cells. No cell
// distlab writes holds a comma, a quote or a newline, so none is quoted.
// One reader for all of them, so that every one names the file and line
// of a bad cell the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace distlab {

// The cells of one line: "a,,b," is "a", "", "b", "".
std::vector<std::string> split_csv_line(const std::string& line);

// The number a cell holds, whole; none when it holds anything else.
std::optional<int64_t> whole_number(const std::string& text);
std::optional<double> real_number(const std::string& text);

class CsvTable {
 public:
  // `text` as read whole; `source` names it in errors (DataError). Every
  // row must have as many cells as the header; empty lines are skipped. A
  // last line without its newline is no row: it is unfinished() (the file
  // of a writer killed in the middle of a line). A text without a whole
  // header line has no columns and no rows.
  CsvTable(const std::string& text, std::string source);

  const std::vector<std::string>& header() const { return header_; }
  bool has_header() const { return !header_.empty(); }
  std::size_t rows() const { return rows_.size(); }
  const std::string& unfinished() const { return unfinished_; }

  bool has_column(const std::string& name) const { return columns_.contains(name); }
  // A column's position; DataError naming it when there is none.
  std::size_t column(const std::string& name) const;

  const std::string& cell(std::size_t row, std::size_t column) const;
  // A number, or NaN for an empty cell.
  double real(std::size_t row, std::size_t column) const;
  // A whole number, or `if_empty` for an empty cell.
  int64_t whole(std::size_t row, std::size_t column, int64_t if_empty = 0) const;

  double real(std::size_t row, const std::string& name) const { return real(row, column(name)); }
  int64_t whole(std::size_t row, const std::string& name, int64_t if_empty = 0) const {
    return whole(row, column(name), if_empty);
  }

 private:
  [[noreturn]] void not_a_number(std::size_t row, std::size_t column) const;

  std::string source_;
  std::vector<std::string> header_;
  std::unordered_map<std::string, std::size_t> columns_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::size_t> lines_;  // each row's line in the file, from 1
  std::string unfinished_;
};

}  // namespace distlab
