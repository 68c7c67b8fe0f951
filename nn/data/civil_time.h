// Dates and times of day as written in data files, turned into calendar
// fields without the C library's locale and time-zone machinery, which
// differs between machines. Days are counted from 1970-01-01 in the
// proleptic Gregorian calendar (Howard Hinnant's civil-from-days algorithms).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace distlab::nn {

struct CivilTime {
  int year = 1970;
  int month = 1;  // 1-12
  int day = 1;    // 1-31
  int hour = 0;   // 0-23
  int minute = 0;
  int second = 0;
};

int64_t days_from_civil(int year, int month, int day);
CivilTime civil_from_days(int64_t days);  // the time of day is midnight
int weekday_from_days(int64_t days);      // 0 = Sunday .. 6 = Saturday
int days_in_month(int year, int month);

// Seconds since 1970-01-01 00:00:00 read as a wall-clock time, no zone.
CivilTime civil_from_epoch_seconds(int64_t seconds);

// Reads, with surrounding spaces allowed:
//   "2013-06-09 17:00:00 UTC", "2013-06-09 17:00:00", "2013-06-09T17:00:00Z",
//   "2013-06-09 17:00" (seconds and a fraction optional; " UTC", "Z" or
//   "+00:00" after it), "06/09/2013 05:00:00 PM" (US month/day/year, 12-hour
//   clock), or integer epoch seconds ("1370797200").
// Zones are not converted: the Chicago taxi data write local time and
// label it UTC. Returns nothing for anything else or an impossible date.
std::optional<CivilTime> parse_timestamp(std::string_view text);

}  // namespace distlab::nn
