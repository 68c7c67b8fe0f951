#include "nn/data/csv.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/error.h"

namespace distlab::nn {
namespace {

constexpr std::size_t kBufferBytes = 1 << 20;
constexpr int kEnd = -1;

gzFile as_gz(void* f) {
  return static_cast<gzFile>(f);
}

}  // namespace

CsvReader::CsvReader(const std::string& path) : path_(path), buffer_(kBufferBytes) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw DataError(path, "no such file");
  if (std::filesystem::is_directory(path, ec)) throw DataError(path, "is a directory, not a file");
  // gzopen reads plain files unchanged and gunzips gzip files.
  file_ = gzopen(path.c_str(), "rb");
  if (!file_) throw DataError(path, std::string("cannot open: ") + std::strerror(errno));
  refill();
  if (len_ >= 3 && std::memcmp(buffer_.data(), "\xEF\xBB\xBF", 3) == 0) pos_ = 3;
}

CsvReader::~CsvReader() {
  if (file_) gzclose(as_gz(file_));
}

std::string CsvReader::where() const {
  return path_ + ":" + std::to_string(record_line_);
}

void CsvReader::refill() {
  pos_ = 0;
  len_ = 0;
  if (eof_) return;
  const int got = gzread(as_gz(file_), buffer_.data(), static_cast<unsigned>(buffer_.size()));
  if (got < 0) {
    int code = 0;
    const char* msg = gzerror(as_gz(file_), &code);
    throw DataError(path_ + ":" + std::to_string(line_),
                    std::string("read failed: ") + (code == Z_ERRNO ? std::strerror(errno) : msg));
  }
  if (got == 0) {
    // gzread reports a gzip stream cut short as an error only through gzerror.
    int code = 0;
    const char* msg = gzerror(as_gz(file_), &code);
    if (code != Z_OK) throw DataError(path_, std::string("corrupt or truncated gzip: ") + msg);
    eof_ = true;
  }
  len_ = static_cast<std::size_t>(got);
}

int CsvReader::peek() {
  if (pos_ == len_) refill();
  return pos_ == len_ ? kEnd : static_cast<unsigned char>(buffer_[pos_]);
}

int CsvReader::get() {
  const int c = peek();
  if (c != kEnd) ++pos_;
  return c;
}

void CsvReader::end_of_line(int c) {
  if (c == '\r' && peek() == '\n') get();
  ++line_;
}

bool CsvReader::read_quoted(std::string& field) {
  for (;;) {
    const int c = get();
    if (c == kEnd) throw DataError(where(), "quoted field never closes before the end of the file");
    if (c == '"') {
      if (peek() != '"') break;
      get();  // "" inside quotes is one quote
    } else if (c == '\n' || (c == '\r' && peek() != '\n')) {
      ++line_;  // a line break inside the field; CRLF counts at its LF
    }
    field.push_back(static_cast<char>(c));
  }
  const int after = get();
  if (after == ',') return true;
  if (after == kEnd) return false;
  if (after == '\r' || after == '\n') {
    end_of_line(after);
    return false;
  }
  throw DataError(where(), "text after the closing quote of field " + csv_quote(field));
}

bool CsvReader::read_field(std::string& field) {
  if (peek() == '"') {
    get();
    return read_quoted(field);
  }
  for (;;) {
    const int c = get();
    if (c == ',') return true;
    if (c == kEnd) return false;
    if (c == '\r' || c == '\n') {
      end_of_line(c);
      return false;
    }
    field.push_back(static_cast<char>(c));
  }
}

bool CsvReader::next(std::vector<std::string>& fields) {
  for (;;) {
    fields.clear();
    if (peek() == kEnd) return false;
    record_line_ = line_;
    bool more = true;
    while (more) {
      fields.emplace_back();
      more = read_field(fields.back());
    }
    const bool blank = fields.size() == 1 && fields[0].empty();
    if (!blank) return true;
  }
}

std::string csv_quote(std::string_view field) {
  const bool needs_quotes = field.find_first_of(",\"\r\n") != std::string_view::npos ||
                            (!field.empty() && (field.front() == ' ' || field.back() == ' '));
  if (!needs_quotes) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

}  // namespace distlab::nn
