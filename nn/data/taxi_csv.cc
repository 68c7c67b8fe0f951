#include "nn/data/taxi_csv.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <optional>

#include "common/error.h"
#include "nn/data/civil_time.h"
#include "nn/data/csv.h"

namespace distlab::nn {
namespace {

// The columns read; the first kRequired are needed in every file.
enum Column : int {
  kSeconds,
  kMiles,
  kPickupArea,
  kDropoffArea,
  kFare,
  kTips,
  kPayment,
  kCompany,
  kPickupLat,
  kPickupLon,
  kDropoffLat,
  kDropoffLon,
  kTimestamp,
  kHour,
  kDay,
  kMonth,
  kColumnCount
};
constexpr int kRequired = kTimestamp;
// In the order of Column.
// clang-format off
constexpr std::string_view kColumnNames[kColumnCount] = {
    "trip_seconds", "trip_miles", "pickup_community_area", "dropoff_community_area", "fare",
    "tips", "payment_type", "company", "pickup_latitude", "pickup_longitude", "dropoff_latitude",
    "dropoff_longitude", "trip_start_timestamp", "trip_start_hour", "trip_start_day",
    "trip_start_month"};
// clang-format on

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Where each column is, and the header as written (for messages).
struct Header {
  std::array<int, kColumnCount> index;
  std::vector<std::string> names;
  bool ready_made_time = false;  // trip_start_hour/day/month all present
};

Header read_header(CsvReader& csv) {
  Header h;
  h.index.fill(-1);
  if (!csv.next(h.names)) throw DataError(csv.path(), "empty file: no header row");
  for (int i = 0; i < static_cast<int>(h.names.size()); ++i) {
    const std::string name = normalize_taxi_header(h.names[i]);
    for (int c = 0; c < kColumnCount; ++c) {
      if (name != kColumnNames[c]) continue;
      if (h.index[c] >= 0) {
        throw DataError(csv.path(), fmt::format("column '{}' appears twice: '{}' and '{}'", name,
                                                h.names[h.index[c]], h.names[i]));
      }
      h.index[c] = i;
    }
  }
  std::vector<std::string_view> missing;
  for (int c = 0; c < kRequired; ++c) {
    if (h.index[c] < 0) missing.push_back(kColumnNames[c]);
  }
  h.ready_made_time = h.index[kHour] >= 0 && h.index[kDay] >= 0 && h.index[kMonth] >= 0;
  if (!h.ready_made_time && h.index[kTimestamp] < 0) {
    missing.push_back(
        "trip_start_timestamp (or trip_start_hour, trip_start_day and "
        "trip_start_month)");
  }
  if (!missing.empty()) {
    throw DataError(csv.path(), fmt::format("missing required columns: {} (the header has: {})",
                                            fmt::join(missing, ", "), fmt::join(h.names, ", ")));
  }
  return h;
}

// "$1,234.50" -> 1234.5: the portal writes money with a dollar sign and
// thousands separators. Commas are accepted only between groups of three.
std::optional<double> parse_number(std::string_view s) {
  std::string clean;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '$' && (clean.empty() || clean == "-")) continue;
    if (c == ',') {
      const bool grouped = !clean.empty() &&
                           std::isdigit(static_cast<unsigned char>(clean.back())) &&
                           i + 3 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])) &&
                           std::isdigit(static_cast<unsigned char>(s[i + 2])) &&
                           std::isdigit(static_cast<unsigned char>(s[i + 3])) &&
                           (i + 4 == s.size() || s[i + 4] == ',' || s[i + 4] == '.');
      if (!grouped) return std::nullopt;
      continue;
    }
    clean.push_back(c);
  }
  double value = 0.0;
  const char* end = clean.data() + clean.size();
  const auto [stop, ec] = std::from_chars(clean.data(), end, value);
  if (ec != std::errc() || stop != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

// The fields of one data row, read against the header.
class Row {
 public:
  Row(const CsvReader& csv, const Header& header, const std::vector<std::string>& fields)
      : csv_(csv), header_(header), fields_(fields) {}

  bool present(Column c) const { return header_.index[c] >= 0 && !text(c).empty(); }
  std::string_view text(Column c) const { return trim(fields_[header_.index[c]]); }

  double number(Column c) const {
    if (!present(c)) return kTaxiMissing;
    const auto value = parse_number(text(c));
    if (!value) fail(c, "not a number");
    return *value;
  }

  int integer(Column c, int if_missing) const {
    if (!present(c)) return if_missing;
    const auto value = parse_number(text(c));
    if (!value) fail(c, "not a number");
    if (*value != std::floor(*value) || std::abs(*value) > 1e9) fail(c, "not an integer");
    return static_cast<int>(*value);
  }

  int integer_in(Column c, int low, int high) const {
    const int value = integer(c, low);
    if (value < low || value > high) fail(c, fmt::format("not in {}-{}", low, high));
    return value;
  }

  [[noreturn]] void fail(Column c, const std::string& problem) const {
    throw DataError(csv_.where(), fmt::format("column '{}': {}: '{}'",
                                              header_.names[header_.index[c]], problem, text(c)));
  }

 private:
  const CsvReader& csv_;
  const Header& header_;
  const std::vector<std::string>& fields_;
};

// Hour, day of week (0 = Sunday) and month: ready-made when the row has
// them, else from the timestamp. False when the row has neither.
bool read_start_time(const Row& row, const Header& header, TaxiTrip& trip) {
  if (header.ready_made_time && row.present(kHour) && row.present(kDay) && row.present(kMonth)) {
    trip.trip_start_hour = row.integer_in(kHour, 0, 23);
    trip.trip_start_day = row.integer_in(kDay, 1, 7) - 1;  // TFX: 1 = Sunday
    trip.trip_start_month = row.integer_in(kMonth, 1, 12);
    return true;
  }
  if (!row.present(kTimestamp)) return false;
  const auto time = parse_timestamp(row.text(kTimestamp));
  if (!time) row.fail(kTimestamp, "not a timestamp");
  trip.trip_start_hour = time->hour;
  trip.trip_start_day = weekday_from_days(days_from_civil(time->year, time->month, time->day));
  trip.trip_start_month = time->month;
  return true;
}

void read_fields(const Row& row, TaxiTrip& trip) {
  trip.trip_seconds = row.number(kSeconds);
  trip.trip_miles = row.number(kMiles);
  trip.fare = row.number(kFare);
  trip.tips = row.number(kTips);
  trip.pickup_latitude = row.number(kPickupLat);
  trip.pickup_longitude = row.number(kPickupLon);
  trip.dropoff_latitude = row.number(kDropoffLat);
  trip.dropoff_longitude = row.number(kDropoffLon);
  trip.pickup_community_area = row.integer(kPickupArea, -1);
  trip.dropoff_community_area = row.integer(kDropoffArea, -1);
  trip.payment_type = row.text(kPayment);
  trip.company = row.text(kCompany);
}

}  // namespace

std::string normalize_taxi_header(std::string_view name) {
  std::string out;
  bool pending_space = false;
  for (char c : trim(name)) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == '_') {
      pending_space = true;  // runs of spaces become one underscore
      continue;
    }
    if (pending_space && !out.empty()) out.push_back('_');
    pending_space = false;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  for (std::size_t at; (at = out.find("centroid_")) != std::string::npos;) out.erase(at, 9);
  return out;
}

TaxiCsv read_taxi_csv(const std::string& path, int64_t max_trips) {
  if (max_trips < 0 && max_trips != kNoRowLimit) {
    throw Error(fmt::format("read_taxi_csv: row limit {} is negative", max_trips));
  }
  CsvReader csv(path);
  const Header header = read_header(csv);
  TaxiCsv out;
  TaxiReadReport& report = out.report;
  std::vector<std::string> fields;
  while ((max_trips == kNoRowLimit || report.trips < max_trips) && csv.next(fields)) {
    ++report.rows;
    if (fields.size() != header.names.size()) {
      throw DataError(csv.where(), fmt::format("{} fields, the header has {}", fields.size(),
                                               header.names.size()));
    }
    const Row row(csv, header, fields);
    TaxiTrip trip;
    if (!row.present(kFare)) {
      ++report.skipped_no_fare;
    } else if (!row.present(kTips)) {
      ++report.skipped_no_tips;
    } else if (!read_start_time(row, header, trip)) {
      ++report.skipped_no_start_time;
    } else {
      read_fields(row, trip);
      out.trips.push_back(std::move(trip));
      ++report.trips;
    }
  }
  return out;
}

namespace {

std::string number_text(double value) {
  return std::isnan(value) ? "" : fmt::format("{}", value);
}

std::string area_text(int area) {
  return area < 0 ? "" : std::to_string(area);
}

// A 2019 timestamp with the trip's month, weekday and hour.
std::string timestamp_text(const TaxiTrip& trip) {
  constexpr int kYear = 2019;
  const int64_t first = days_from_civil(kYear, trip.trip_start_month, 1);
  const int day = 1 + (trip.trip_start_day - weekday_from_days(first) + 7) % 7;
  return fmt::format("{}-{:02}-{:02} {:02}:00:00 UTC", kYear, trip.trip_start_month, day,
                     trip.trip_start_hour);
}

}  // namespace

void write_taxi_csv(const std::string& path, std::span<const TaxiTrip> trips) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw DataError(path, "cannot open for writing");
  out << "trip_start_timestamp,trip_start_hour,trip_start_day,trip_start_month,trip_seconds,"
         "trip_miles,pickup_community_area,dropoff_community_area,fare,tips,payment_type,company,"
         "pickup_latitude,pickup_longitude,dropoff_latitude,dropoff_longitude\n";
  for (std::size_t i = 0; i < trips.size(); ++i) {
    const TaxiTrip& t = trips[i];
    if (t.trip_start_hour < 0 || t.trip_start_hour > 23 || t.trip_start_day < 0 ||
        t.trip_start_day > 6 || t.trip_start_month < 1 || t.trip_start_month > 12) {
      throw DataError(path,
                      fmt::format("trip {}: start hour {}, day {} or month {} out of range", i,
                                  t.trip_start_hour, t.trip_start_day, t.trip_start_month));
    }
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", timestamp_text(t),
                       t.trip_start_hour, t.trip_start_day + 1, t.trip_start_month,
                       number_text(t.trip_seconds), number_text(t.trip_miles),
                       area_text(t.pickup_community_area), area_text(t.dropoff_community_area),
                       number_text(t.fare), number_text(t.tips), csv_quote(t.payment_type),
                       csv_quote(t.company), number_text(t.pickup_latitude),
                       number_text(t.pickup_longitude), number_text(t.dropoff_latitude),
                       number_text(t.dropoff_longitude));
  }
  out.flush();
  if (!out) throw DataError(path, "write failed");
}

}  // namespace distlab::nn
