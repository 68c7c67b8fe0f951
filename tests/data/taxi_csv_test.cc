#include "nn/data/taxi_csv.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "common/error.h"
#include "nn/data/taxi_synthetic.h"
#include "tests/data/test_files.h"

using namespace distlab::nn;
using Catch::Matchers::Contains;
using distlab::DataError;
using distlab::test::TempDir;

namespace {

const char* kBigQueryHeader =
    "trip_start_timestamp,trip_seconds,trip_miles,pickup_community_area,dropoff_community_area,"
    "fare,tips,payment_type,company,pickup_latitude,pickup_longitude,dropoff_latitude,"
    "dropoff_longitude\n";

// The data portal's export: Title Case, extra columns, another order.
const char* kPortalHeader =
    "Trip ID,Taxi ID,Trip Start Timestamp,Trip End Timestamp,Trip Seconds,Trip Miles,"
    "Pickup Census Tract,Dropoff Census Tract,Pickup Community Area,Dropoff Community Area,Fare,"
    "Tips,Tolls,Extras,Trip Total,Payment Type,Company,Pickup Centroid Latitude,"
    "Pickup Centroid Longitude,Pickup Centroid Location,Dropoff Centroid Latitude,"
    "Dropoff Centroid Longitude,Dropoff Centroid  Location\n";

TaxiCsv read_text(const TempDir& dir, const std::string& text) {
  distlab::test::write_text(dir.file("trips.csv"), text);
  return read_taxi_csv(dir.file("trips.csv"));
}

bool same_number(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

}  // namespace

TEST_CASE("Taxi header names from both exports normalize to the same columns") {
  CHECK(normalize_taxi_header("Pickup Centroid Latitude") == "pickup_latitude");
  CHECK(normalize_taxi_header(" Trip Start Timestamp ") == "trip_start_timestamp");
  CHECK(normalize_taxi_header("dropoff_centroid_longitude") == "dropoff_longitude");
  CHECK(normalize_taxi_header("Dropoff Centroid  Location") == "dropoff_location");
  CHECK(normalize_taxi_header("fare") == "fare");
}

TEST_CASE("A BigQuery-style taxi CSV is read into trips") {
  TempDir dir;
  const TaxiCsv csv = read_text(
      dir, std::string(kBigQueryHeader) +
               "2013-06-09 17:00:00 UTC,660,2.1,32,8,8.45,2.00,Credit Card,\"Yellow Cab, Inc.\","
               "41.880994471,-87.632746489,41.892042136,-87.63186395\n"
               "2013-06-10 08:15:00 UTC,,,,,5.25,0,Cash,,,,,\n");
  REQUIRE(csv.trips.size() == 2);
  CHECK(csv.report.rows == 2);
  CHECK(csv.report.trips == 2);
  const TaxiTrip& t = csv.trips[0];
  CHECK(t.trip_seconds == 660);
  CHECK(t.trip_miles == 2.1);
  CHECK(t.pickup_community_area == 32);
  CHECK(t.dropoff_community_area == 8);
  CHECK(t.fare == 8.45);
  CHECK(t.tips == 2.0);
  CHECK(t.payment_type == "Credit Card");
  CHECK(t.company == "Yellow Cab, Inc.");
  CHECK(t.pickup_latitude == 41.880994471);
  CHECK(t.dropoff_longitude == -87.63186395);
  CHECK(t.trip_start_hour == 17);
  CHECK(t.trip_start_day == 0);  // 2013-06-09 was a Sunday
  CHECK(t.trip_start_month == 6);
  const TaxiTrip& m = csv.trips[1];
  CHECK(std::isnan(m.trip_seconds));
  CHECK(std::isnan(m.pickup_latitude));
  CHECK(m.pickup_community_area == -1);
  CHECK(m.company.empty());
  CHECK(m.trip_start_day == 1);
  CHECK(m.trip_start_hour == 8);
}

TEST_CASE("A data-portal taxi CSV with money signs and CRLF reads the same trip") {
  TempDir dir;
  std::string text = kPortalHeader;
  text.back() = '\r';  // the portal ends its lines with CRLF
  text += '\n';
  text +=
      "abc123,def456,06/09/2013 05:00:00 PM,06/09/2013 05:15:00 "
      "PM,\"1,020\",2.1,,,32,8,$8.45,$2.00,"
      "$0.00,$1.00,$11.45,Credit Card,\"Yellow Cab, Inc.\",41.880994471,-87.632746489,"
      "POINT (-87.632746489 41.880994471),41.892042136,-87.63186395,POINT (-87.63 41.89)\r\n";
  const TaxiCsv csv = read_text(dir, text);
  REQUIRE(csv.trips.size() == 1);
  const TaxiTrip& t = csv.trips[0];
  CHECK(t.trip_seconds == 1020);
  CHECK(t.fare == 8.45);
  CHECK(t.tips == 2.0);
  CHECK(t.company == "Yellow Cab, Inc.");
  CHECK(t.pickup_longitude == -87.632746489);
  CHECK(t.dropoff_latitude == 41.892042136);
  CHECK(t.trip_start_hour == 17);
  CHECK(t.trip_start_day == 0);
  CHECK(t.trip_start_month == 6);
}

TEST_CASE("TFX's ready-made hour day and month are used and its day counts from 1") {
  TempDir dir;
  const TaxiCsv csv = read_text(
      dir,
      "pickup_community_area,fare,trip_start_month,trip_start_hour,trip_start_day,"
      "trip_start_timestamp,pickup_latitude,pickup_longitude,dropoff_latitude,dropoff_longitude,"
      "trip_miles,pickup_census_tract,dropoff_census_tract,payment_type,company,trip_seconds,"
      "dropoff_community_area,tips\n"
      "60,27.05,10,2,3,1380593700,41.836150155,-87.648787952,,,12.6,,,Cash,Taxi Affiliation "
      "Services,1380,,0.0\n"
      "10,5.85,10,1,2,1382319000,,,,,0.0,,,Cash,,180,,0\n");
  REQUIRE(csv.trips.size() == 2);
  CHECK(csv.trips[0].trip_start_month == 10);
  CHECK(csv.trips[0].trip_start_hour == 2);
  CHECK(csv.trips[0].trip_start_day == 2);  // TFX 3 = Tuesday
  CHECK(csv.trips[0].pickup_community_area == 60);
  CHECK(csv.trips[0].trip_miles == 12.6);
  CHECK(csv.trips[1].trip_start_day == 1);
}

TEST_CASE("Epoch-second timestamps give TFX's own hour and weekday") {
  // TFX's data.csv: 1400269500 has trip_start_hour 19 and trip_start_day 6.
  TempDir dir;
  const TaxiCsv csv =
      read_text(dir, std::string(kBigQueryHeader) + "1400269500,600,2,8,8,7.25,2,Cash,,,,,\n");
  REQUIRE(csv.trips.size() == 1);
  CHECK(csv.trips[0].trip_start_hour == 19);
  CHECK(csv.trips[0].trip_start_day == 5);  // Friday; TFX writes 6
  CHECK(csv.trips[0].trip_start_month == 5);
}

TEST_CASE("Taxi rows without fare tips or start time are skipped and counted") {
  TempDir dir;
  const TaxiCsv csv = read_text(dir, std::string(kBigQueryHeader) +
                                         "2013-06-09 17:00:00,60,1,8,8,,1,Cash,,,,,\n"
                                         "2013-06-09 17:00:00,60,1,8,8,,,Cash,,,,,\n"
                                         "2013-06-09 17:00:00,60,1,8,8,5,,Cash,,,,,\n"
                                         ",60,1,8,8,5,1,Cash,,,,,\n"
                                         "2013-06-09 17:00:00,60,1,8,8,5,1,Cash,,,,,\n");
  CHECK(csv.report.rows == 5);
  CHECK(csv.report.trips == 1);
  CHECK(csv.trips.size() == 1);
  CHECK(csv.report.skipped_no_fare == 2);
  CHECK(csv.report.skipped_no_tips == 1);
  CHECK(csv.report.skipped_no_start_time == 1);
  CHECK(csv.report.skipped() == 4);
}

TEST_CASE("A row limit stops the taxi read after that many trips") {
  TempDir dir;
  std::string text = kBigQueryHeader;
  for (int i = 0; i < 10; ++i) text += "2013-06-09 17:00:00,60,1,8,8,5,1,Cash,,,,,\n";
  distlab::test::write_text(dir.file("many.csv"), text);
  const TaxiCsv csv = read_taxi_csv(dir.file("many.csv"), 3);
  CHECK(csv.trips.size() == 3);
  CHECK(csv.report.rows == 3);
  CHECK(read_taxi_csv(dir.file("many.csv")).trips.size() == 10);
  CHECK(read_taxi_csv(dir.file("many.csv"), 0).trips.empty());
  CHECK_THROWS_AS(read_taxi_csv(dir.file("many.csv"), -5), distlab::Error);
}

TEST_CASE("Missing taxi columns are listed by name") {
  TempDir dir;
  distlab::test::write_text(dir.file("cols.csv"),
                            "trip_seconds,trip_miles,fare,company\n1,2,3,x\n");
  try {
    read_taxi_csv(dir.file("cols.csv"));
    FAIL("no error");
  } catch (const DataError& e) {
    const std::string m = e.what();
    CHECK_THAT(m, Contains("cols.csv: missing required columns:"));
    CHECK_THAT(m, Contains("(the header has: trip_seconds, trip_miles, fare, company)"));
    const std::string missing = m.substr(0, m.find("(the header has"));
    CHECK_THAT(missing,
               Contains("tips") && Contains("payment_type") && Contains("pickup_latitude"));
    CHECK_THAT(missing, Contains("trip_start_timestamp (or trip_start_hour"));
    CHECK_THAT(missing, !Contains("fare") && !Contains("trip_miles") && !Contains("company"));
  }
}

TEST_CASE("A malformed taxi number names the file line and column") {
  TempDir dir;
  const auto bad = GENERATE(table<std::string, std::string>({
      {"2013-06-09 17:00:00,60,1,8,8,abc,1,Cash,,,,,",
       "trips.csv:3: column 'fare': not a number: 'abc'"},
      {"2013-06-09 17:00:00,60,1,8,8,5,1$,Cash,,,,,", "column 'tips': not a number: '1$'"},
      {"2013-06-09 17:00:00,60,1,8.5,8,5,1,Cash,,,,,",
       "column 'pickup_community_area': not an integer"},
      {"2013-06-09 17:00:00,60,1,8,8,5,1,Cash,,41.9,x,,", "column 'pickup_longitude'"},
      {"2013-06-09 17:00:00,\"1,0\",1,8,8,5,1,Cash,,,,,",
       "column 'trip_seconds': not a number: '1,0'"},
      {"2013-06-09 25:00:00,60,1,8,8,5,1,Cash,,,,,",
       "column 'trip_start_timestamp': not a timestamp"},
      {"2013-06-09 17:00:00,60,1,8,8,5,1,Cash,,,,", "trips.csv:3: 12 fields, the header has 13"},
  }));
  const auto [row, message] = bad;
  CAPTURE(row);
  CHECK_THROWS_WITH(read_text(dir, std::string(kBigQueryHeader) +
                                       "2013-06-09 17:00:00,60,1,8,8,5,1,Cash,,,,,\n" + row + "\n"),
                    Contains(message));
}

TEST_CASE("Ready-made start fields out of range are refused") {
  TempDir dir;
  CHECK_THROWS_WITH(read_text(dir,
                              "trip_start_hour,trip_start_day,trip_start_month,trip_seconds,"
                              "trip_miles,pickup_community_area,dropoff_community_area,fare,tips,"
                              "payment_type,company,pickup_latitude,pickup_longitude,"
                              "dropoff_latitude,dropoff_longitude\n"
                              "5,8,1,60,1,,,5,1,Cash,,,,,\n"),
                    Contains("trips.csv:2: column 'trip_start_day': not in 1-7: '8'"));
}

TEST_CASE("A header naming one column twice is refused") {
  TempDir dir;
  CHECK_THROWS_WITH(read_text(dir, std::string("Fare,") + kBigQueryHeader),
                    Contains("column 'fare' appears twice"));
}

TEST_CASE("An empty taxi CSV is refused") {
  TempDir dir;
  CHECK_THROWS_WITH(read_text(dir, ""), Contains("empty file"));
}

TEST_CASE("Synthetic taxi trips written as CSV read back unchanged") {
  TempDir dir;
  const auto trips = generate_taxi_trips(2000, 11);
  write_taxi_csv(dir.file("synthetic.csv"), trips);
  const TaxiCsv csv = read_taxi_csv(dir.file("synthetic.csv"));
  REQUIRE(csv.trips.size() == trips.size());
  CHECK(csv.report.skipped() == 0);
  for (std::size_t i = 0; i < trips.size(); ++i) {
    const TaxiTrip& a = trips[i];
    const TaxiTrip& b = csv.trips[i];
    CAPTURE(i);
    REQUIRE(same_number(a.trip_seconds, b.trip_seconds));
    REQUIRE(same_number(a.trip_miles, b.trip_miles));
    REQUIRE(same_number(a.fare, b.fare));
    REQUIRE(same_number(a.tips, b.tips));
    REQUIRE(same_number(a.pickup_latitude, b.pickup_latitude));
    REQUIRE(same_number(a.pickup_longitude, b.pickup_longitude));
    REQUIRE(same_number(a.dropoff_latitude, b.dropoff_latitude));
    REQUIRE(same_number(a.dropoff_longitude, b.dropoff_longitude));
    REQUIRE(a.pickup_community_area == b.pickup_community_area);
    REQUIRE(a.dropoff_community_area == b.dropoff_community_area);
    REQUIRE(a.trip_start_hour == b.trip_start_hour);
    REQUIRE(a.trip_start_day == b.trip_start_day);
    REQUIRE(a.trip_start_month == b.trip_start_month);
    REQUIRE(a.payment_type == b.payment_type);
    REQUIRE(a.company == b.company);
  }
  const Dataset from_memory = make_taxi_dataset(trips, "a");
  const Dataset from_file = make_taxi_dataset(csv.trips, "b");
  CHECK(from_memory.features == from_file.features);
  CHECK(from_memory.labels == from_file.labels);
}

TEST_CASE("A written taxi timestamp alone gives back the trip's hour weekday and month") {
  // Drop the ready-made columns: the timestamp must carry the same fields.
  TempDir dir;
  const auto trips = generate_taxi_trips(300, 12);
  write_taxi_csv(dir.file("full.csv"), trips);
  const auto full = distlab::test::read_bytes(dir.file("full.csv"));
  std::string text(full.begin(), full.end());
  const std::string ready = "trip_start_hour,trip_start_day,trip_start_month,";
  text.replace(text.find(ready), ready.size(), "hour,day,month,");
  const TaxiCsv csv = read_text(dir, text);
  REQUIRE(csv.trips.size() == trips.size());
  for (std::size_t i = 0; i < trips.size(); ++i) {
    CAPTURE(i);
    REQUIRE(csv.trips[i].trip_start_hour == trips[i].trip_start_hour);
    REQUIRE(csv.trips[i].trip_start_day == trips[i].trip_start_day);
    REQUIRE(csv.trips[i].trip_start_month == trips[i].trip_start_month);
  }
}
