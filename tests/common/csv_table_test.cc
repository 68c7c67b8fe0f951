// The one reader of the CSV files distlab writes.
#include "common/csv_table.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "common/error.h"

using distlab::CsvTable;
using distlab::DataError;
using distlab::split_csv_line;

TEST_CASE("a CSV line's cells, empty ones too") {
  CHECK(split_csv_line("a,,b,") == std::vector<std::string>{"a", "", "b", ""});
  CHECK(split_csv_line("") == std::vector<std::string>{""});
  CHECK(distlab::whole_number("-12") == -12);
  CHECK_FALSE(distlab::whole_number("12.5"));
  CHECK_FALSE(distlab::whole_number("99999999999999999999"));
  CHECK(distlab::real_number("1e-3") == 1e-3);
  CHECK_FALSE(distlab::real_number("1e999"));
  CHECK_FALSE(distlab::real_number("x"));
}

TEST_CASE("a CSV table: columns by name, numbers checked, an unfinished last line apart") {
  const CsvTable t("task,step,loss\nchief:0,3,0.5\n\nworker:0,4,\nworker:1,5", "f.csv");
  REQUIRE(t.has_header());
  CHECK(t.rows() == 2);
  CHECK(t.cell(1, t.column("task")) == "worker:0");
  CHECK(t.whole(0, "step") == 3);
  CHECK(t.real(0, "loss") == 0.5);
  CHECK(std::isnan(t.real(1, "loss")));
  CHECK(t.whole(1, "loss", -1) == -1);
  CHECK(t.unfinished() == "worker:1,5");
  CHECK_THROWS_WITH(t.column("examples"), "f.csv: no column 'examples'");

  const CsvTable bad("task,step\nchief:0,x\n", "f.csv");
  CHECK_THROWS_WITH(bad.whole(0, "step"), "f.csv: line 2: step: not a number: 'x'");
  CHECK_THROWS_AS(CsvTable("task,step\nchief:0\n", "f.csv"), DataError);
  CHECK_THROWS_WITH(CsvTable("task,step\nchief:0,1\nchief:0\n", "f.csv"),
                    "f.csv: line 3: 1 cells, the header has 2");
  // A header cut short: no columns, nothing to read.
  const CsvTable cut("task,st", "f.csv");
  CHECK_FALSE(cut.has_header());
  CHECK(cut.rows() == 0);
}
