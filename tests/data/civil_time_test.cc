#include "nn/data/civil_time.h"

#include <catch2/catch.hpp>
#include <string>

using namespace distlab::nn;

TEST_CASE("Days from the civil date match known dates") {
  CHECK(days_from_civil(1970, 1, 1) == 0);
  CHECK(days_from_civil(2000, 3, 1) == 11017);
  CHECK(days_from_civil(1969, 12, 31) == -1);
  CHECK(weekday_from_days(0) == 4);                              // a Thursday
  CHECK(weekday_from_days(days_from_civil(2013, 6, 9)) == 0);    // a Sunday
  CHECK(weekday_from_days(days_from_civil(2014, 5, 16)) == 5);   // a Friday
  CHECK(weekday_from_days(days_from_civil(1969, 12, 28)) == 0);  // before the epoch
}

TEST_CASE("Civil dates survive a round trip through day numbers") {
  for (int64_t days = -800000; days <= 800000; days += 997) {
    const CivilTime t = civil_from_days(days);
    CAPTURE(days, t.year, t.month, t.day);
    REQUIRE(days_from_civil(t.year, t.month, t.day) == days);
    REQUIRE(t.day <= days_in_month(t.year, t.month));
  }
  CHECK(days_in_month(2000, 2) == 29);
  CHECK(days_in_month(1900, 2) == 28);
  CHECK(days_in_month(2024, 2) == 29);
}

TEST_CASE("Every timestamp style of the taxi data parses to the same fields") {
  const auto text =
      GENERATE(as<std::string>{}, "2013-06-09 17:00:00 UTC", "2013-06-09 17:00:00",
               "2013-06-09T17:00:00Z", "2013-06-09 17:00", " 2013-06-09 17:00:00.000 ",
               "06/09/2013 05:00:00 PM", "6/9/2013 5:00 PM", "1370797200");
  CAPTURE(text);
  const auto t = parse_timestamp(text);
  REQUIRE(t.has_value());
  CHECK(t->year == 2013);
  CHECK(t->month == 6);
  CHECK(t->day == 9);
  CHECK(t->hour == 17);
  CHECK(t->minute == 0);
}

TEST_CASE("Twelve o'clock on the US 12-hour clock is midnight or noon") {
  CHECK(parse_timestamp("01/01/2019 12:15:00 AM")->hour == 0);
  CHECK(parse_timestamp("01/01/2019 12:15:00 PM")->hour == 12);
  CHECK(parse_timestamp("01/01/2019 11:59:59 PM")->hour == 23);
}

TEST_CASE("Epoch seconds before 1970 land on the right day and hour") {
  const auto t = parse_timestamp("-1");
  REQUIRE(t.has_value());
  CHECK(t->year == 1969);
  CHECK(t->month == 12);
  CHECK(t->day == 31);
  CHECK(t->hour == 23);
  CHECK(t->second == 59);
}

TEST_CASE("Malformed and impossible timestamps are refused") {
  const auto text =
      GENERATE(as<std::string>{}, "", "abc", "2013-02-30 10:00:00", "2013-13-01 10:00:00",
               "2013-06-09 24:00:00", "13/01/2013 01:00:00 PM", "06/09/2013 13:00:00 PM",
               "06/09/2013 05:00:00", "2013-06-09 17:00:00 PST", "1e9", "99999999999999999999",
               "2013-06-09");
  CAPTURE(text);
  CHECK_FALSE(parse_timestamp(text).has_value());
}
