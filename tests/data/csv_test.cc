#include "nn/data/csv.h"

#include <catch2/catch.hpp>

#include "common/error.h"
#include "tests/data/test_files.h"

using namespace distlab::nn;
using Catch::Matchers::Contains;
using distlab::test::TempDir;
using Fields = std::vector<std::string>;

namespace {

std::vector<Fields> read_all(const std::string& path, std::vector<int64_t>* lines = nullptr) {
  CsvReader csv(path);
  std::vector<Fields> records;
  Fields fields;
  while (csv.next(fields)) {
    records.push_back(fields);
    if (lines) lines->push_back(csv.line());
  }
  return records;
}

}  // namespace

TEST_CASE("CSV fields may be quoted and hold commas quotes and line breaks") {
  TempDir dir;
  distlab::test::write_text(dir.file("a.csv"),
                            "a,b,c\r\n"
                            "1,\"x, y\",\"say \"\"hi\"\"\"\r\n"
                            "\"two\r\nlines\",,\"\"\r\n"
                            "last,row,no newline");
  std::vector<int64_t> lines;
  const auto records = read_all(dir.file("a.csv"), &lines);
  REQUIRE(records.size() == 4);
  CHECK(records[0] == Fields{"a", "b", "c"});
  CHECK(records[1] == Fields{"1", "x, y", "say \"hi\""});
  CHECK(records[2] == Fields{"two\r\nlines", "", ""});
  CHECK(records[3] == Fields{"last", "row", "no newline"});
  CHECK(lines == std::vector<int64_t>{1, 2, 3, 5});
}

TEST_CASE("CSV blank lines are skipped and a byte-order mark is dropped") {
  TempDir dir;
  distlab::test::write_text(dir.file("b.csv"), "\xEF\xBB\xBFh1,h2\n\n1,2\n\n");
  const auto records = read_all(dir.file("b.csv"));
  REQUIRE(records.size() == 2);
  CHECK(records[0] == Fields{"h1", "h2"});
  CHECK(records[1] == Fields{"1", "2"});
}

TEST_CASE("A gzipped CSV reads like the plain one") {
  TempDir dir;
  const std::string text = "x,y\n1,\"a,b\"\n";
  distlab::test::write_gzip(dir.file("c.csv.gz"), {text.begin(), text.end()});
  const auto records = read_all(dir.file("c.csv.gz"));
  REQUIRE(records.size() == 2);
  CHECK(records[1] == Fields{"1", "a,b"});
}

TEST_CASE("A CSV record longer than the read buffer is read whole") {
  TempDir dir;
  const std::string big(3 << 20, 'z');
  distlab::test::write_text(dir.file("d.csv"), "k,\"" + big + "\"\nend,1\n");
  const auto records = read_all(dir.file("d.csv"));
  REQUIRE(records.size() == 2);
  CHECK(records[0][1] == big);
  CHECK(records[1] == Fields{"end", "1"});
}

TEST_CASE("An unterminated CSV quote is refused at the line it opened") {
  TempDir dir;
  distlab::test::write_text(dir.file("e.csv"), "a,b\n1,2\n3,\"open\n4,5\n");
  CHECK_THROWS_WITH(read_all(dir.file("e.csv")), Contains("e.csv:3") && Contains("never closes"));
}

TEST_CASE("Text after a closing CSV quote is refused") {
  TempDir dir;
  distlab::test::write_text(dir.file("f.csv"), "a,b\n\"x\"y,2\n");
  CHECK_THROWS_WITH(read_all(dir.file("f.csv")), Contains("f.csv:2") && Contains("closing quote"));
}

TEST_CASE("A missing CSV file is a data error naming it") {
  CHECK_THROWS_WITH(CsvReader("/nonexistent-distlab/x.csv"),
                    Contains("x.csv") && Contains("no such file"));
}

TEST_CASE("A truncated gzipped CSV is refused") {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 20000; ++i) text += std::to_string(i * 7919) + "," + std::to_string(i) + "\n";
  distlab::test::write_gzip(dir.file("t.csv.gz"), {text.begin(), text.end()});
  auto gz = distlab::test::read_bytes(dir.file("t.csv.gz"));
  gz.erase(gz.begin() + gz.size() / 2, gz.end());
  distlab::test::write_bytes(dir.file("t.csv.gz"), gz);
  CHECK_THROWS_WITH(read_all(dir.file("t.csv.gz")), Contains("t.csv.gz"));
}

TEST_CASE("Fields that need quotes get them when written") {
  CHECK(csv_quote("plain") == "plain");
  CHECK(csv_quote("a,b") == "\"a,b\"");
  CHECK(csv_quote("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_quote(" padded") == "\" padded\"");
  CHECK(csv_quote("") == "");
}
