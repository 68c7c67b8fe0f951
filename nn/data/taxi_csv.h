// Reading and writing the Chicago Taxi Trips as CSV. Two header styles are
// read: BigQuery's snake_case (bigquery-public-data.chicago_taxi_trips, and
// TFX's taxi data.csv, which adds ready-made trip_start_hour/day/month) and
// the City of Chicago data portal's Title Case export ("Pickup Centroid
// Latitude"). Header names are normalized (lowercase, spaces to underscores,
// "centroid_" dropped) so both map to the same columns; columns may come in
// any order and extra ones are ignored.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nn/data/taxi.h"

namespace distlab::nn {

// What a read kept and why it dropped the rest.
struct TaxiReadReport {
  int64_t rows = 0;                   // data rows read (header not counted)
  int64_t trips = 0;                  // rows kept
  int64_t skipped_no_fare = 0;        // fare empty
  int64_t skipped_no_tips = 0;        // tips empty (fare present)
  int64_t skipped_no_start_time = 0;  // timestamp (and ready-made hour/day/month) empty

  int64_t skipped() const { return skipped_no_fare + skipped_no_tips + skipped_no_start_time; }
};

struct TaxiCsv {
  std::vector<TaxiTrip> trips;
  TaxiReadReport report;
};

inline constexpr int64_t kNoRowLimit = -1;

// Reads the trips of a CSV file (gzipped or not), stopping after
// `max_trips` kept trips unless it is kNoRowLimit.
//
// Required columns: trip_seconds, trip_miles, pickup_community_area,
// dropoff_community_area, fare, tips, payment_type, company,
// pickup_latitude, pickup_longitude, dropoff_latitude, dropoff_longitude,
// and the start time: trip_start_timestamp, or all of trip_start_hour,
// trip_start_day (1 = Sunday .. 7, as TFX writes it) and trip_start_month.
// When both are there the ready-made fields win (they are what TFX trained
// on); a row where they are empty falls back to the timestamp.
//
// Empty values are missing (NaN, -1 or ""); rows with an empty fare, tips or
// start time are skipped and counted. Numbers may carry a leading '$' and
// thousands separators, as the portal's exports write money and seconds.
// Throws DataError "path:line: column 'fare': not a number: 'abc'" for a
// malformed value, "path: missing required columns: ..." for the header,
// and "path:line: ..." for a row with the wrong number of fields.
TaxiCsv read_taxi_csv(const std::string& path, int64_t max_trips = kNoRowLimit);

// "Pickup Centroid Latitude" -> "pickup_latitude".
std::string normalize_taxi_header(std::string_view name);

// Writes trips in BigQuery's snake_case columns plus TFX's ready-made
// trip_start_hour/day/month, so read_taxi_csv gives them back exactly. A
// trip keeps no date, so trip_start_timestamp is written as the first day of
// its month in 2019 that falls on its weekday, at its hour.
void write_taxi_csv(const std::string& path, std::span<const TaxiTrip> trips);

}  // namespace distlab::nn
