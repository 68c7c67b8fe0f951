// A streaming reader of RFC 4180 CSV: fields separated by commas, optionally
// in double quotes (which may hold commas, line breaks and doubled quotes),
// records ending in LF or CRLF. It reads through zlib's gzread, so a .csv.gz
// is read as it is, and a row limit on a huge export stops reading early.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace distlab::nn {

class CsvReader {
 public:
  // Opens the file; throws DataError if it cannot. A UTF-8 byte-order mark
  // at the start (spreadsheet exports write one) is skipped.
  explicit CsvReader(const std::string& path);
  ~CsvReader();
  CsvReader(const CsvReader&) = delete;
  CsvReader& operator=(const CsvReader&) = delete;

  // Reads the next record into `fields`; false at the end of the file. Empty
  // lines are skipped. Throws DataError "path:line: ..." for a quoted field
  // that never closes or text after a closing quote, and for a read error
  // or corrupt gzip data.
  bool next(std::vector<std::string>& fields);

  // The 1-based line on which the last record began (for error messages).
  int64_t line() const { return record_line_; }
  const std::string& path() const { return path_; }
  // "path:line", the place of the last record.
  std::string where() const;

 private:
  int get();  // the next byte, or -1 at the end
  int peek();
  void refill();
  void end_of_line(int c);              // counts a line break c (consuming LF after CR)
  bool read_field(std::string& field);  // true if the record goes on
  bool read_quoted(std::string& field);

  std::string path_;
  void* file_ = nullptr;  // gzFile, kept out of this header
  std::vector<char> buffer_;
  std::size_t pos_ = 0;
  std::size_t len_ = 0;
  bool eof_ = false;
  int64_t line_ = 1;
  int64_t record_line_ = 0;
};

// The field as CSV writes it: in quotes, with quotes doubled, when it holds
// a comma, quote, line break or leading or trailing space.
std::string csv_quote(std::string_view field);

}  // namespace distlab::nn
