#include "nn/data/taxi.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "common/error.h"

using namespace distlab::nn;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;

namespace {

TaxiTrip loop_trip() {
  TaxiTrip t;
  t.trip_seconds = 600;
  t.trip_miles = 2.5;
  t.fare = 10.0;
  t.tips = 2.5;
  t.pickup_latitude = 41.8837;
  t.pickup_longitude = -87.6289;
  t.dropoff_latitude = 41.98;
  t.dropoff_longitude = -87.90;
  t.pickup_community_area = 32;
  t.dropoff_community_area = 76;
  t.trip_start_hour = 19;
  t.trip_start_day = 5;
  t.trip_start_month = 6;
  t.payment_type = "Credit Card";
  t.company = "Flash Cab";
  return t;
}

}  // namespace

TEST_CASE("The taxi column table matches the row layout") {
  CHECK(kTaxiColumns.size() == 17);
  CHECK(kTaxiColumns[kTaxiLogTripMiles].vocab == 0);
  CHECK(kTaxiColumns[kTaxiLogTripMinutes].vocab == 0);
  CHECK(kTaxiColumns[kTaxiPickupLatBucket].vocab == 11);
  CHECK(kTaxiColumns[kTaxiStartHour].vocab == 24);
  CHECK(kTaxiColumns[kTaxiStartDay].vocab == 7);
  CHECK(kTaxiColumns[kTaxiStartMonth].vocab == 12);
  CHECK(kTaxiColumns[kTaxiPickupArea].vocab == 78);
  CHECK(kTaxiColumns[kTaxiPaymentType].vocab == 8);
  CHECK(kTaxiColumns[kTaxiCompany].vocab == 100);
  CHECK(kTaxiColumns[kTaxiPickupLatLonCross].vocab == 121);
  CHECK(kTaxiColumns[kTaxiHourDayCross].vocab == 168);
  CHECK(kTaxiColumns[kTaxiHourDayCross].name == "trip_start_hour_x_day");
  for (int i = 0; i < kTaxiFeatureCount; ++i)
    CHECK((kTaxiColumns[i].vocab == 0) == (i < kTaxiNumericFeatures));
}

TEST_CASE("A taxi trip becomes its numeric features and categorical ids") {
  std::array<float, kTaxiFeatureCount> row{};
  const TaxiTrip t = loop_trip();
  taxi_features(t, row);
  CHECK_THAT(row[kTaxiLogTripMiles], WithinRel(std::log1p(2.5f), 1e-6f));
  CHECK_THAT(row[kTaxiLogFare], WithinRel(std::log1p(10.0f), 1e-6f));
  CHECK_THAT(row[kTaxiLogTripMinutes], WithinRel(std::log1p(10.0f), 1e-6f));
  // 41.8837 is 62.4% up the box: bucket 6; -87.6289 is 74.7% across: bucket 7.
  CHECK(row[kTaxiPickupLatBucket] == 6);
  CHECK(row[kTaxiPickupLonBucket] == 7);
  CHECK(row[kTaxiDropoffLatBucket] == 8);
  CHECK(row[kTaxiDropoffLonBucket] == 1);
  CHECK(row[kTaxiStartHour] == 19);
  CHECK(row[kTaxiStartDay] == 5);
  CHECK(row[kTaxiStartMonth] == 5);
  CHECK(row[kTaxiPickupArea] == 32);
  CHECK(row[kTaxiDropoffArea] == 76);
  CHECK(row[kTaxiPaymentType] == 1);
  CHECK(row[kTaxiCompany] == static_cast<float>(fnv1a_64("Flash Cab") % 100));
  CHECK(row[kTaxiPickupLatLonCross] == 6 * 11 + 7);
  CHECK(row[kTaxiDropoffLatLonCross] == 8 * 11 + 1);
  CHECK(row[kTaxiHourDayCross] == 19 * 7 + 5);
}

TEST_CASE("Missing taxi values map to their own ids and zero numerics") {
  TaxiTrip t = loop_trip();
  t.trip_miles = kTaxiMissing;
  t.trip_seconds = kTaxiMissing;
  t.pickup_latitude = kTaxiMissing;
  t.dropoff_longitude = kTaxiMissing;
  t.pickup_community_area = -1;
  t.dropoff_community_area = 78;
  t.payment_type = "Mobile";
  std::array<float, kTaxiFeatureCount> row{};
  taxi_features(t, row);
  CHECK(row[kTaxiLogTripMiles] == 0.0f);
  CHECK(row[kTaxiLogTripMinutes] == 0.0f);
  CHECK(row[kTaxiPickupLatBucket] == kTaxiMissingBucket);
  CHECK(row[kTaxiDropoffLonBucket] == kTaxiMissingBucket);
  CHECK(row[kTaxiPickupLatLonCross] == 10 * 11 + 7);
  CHECK(row[kTaxiPickupArea] == 0);
  CHECK(row[kTaxiDropoffArea] == 0);
  CHECK(row[kTaxiPaymentType] == kTaxiOtherPayment);
}

TEST_CASE("Taxi locations outside the box clamp to the edge buckets") {
  CHECK(taxi_latitude_bucket(40.0) == 0);
  CHECK(taxi_latitude_bucket(kChicagoLatitudeMin) == 0);
  CHECK(taxi_latitude_bucket(kChicagoLatitudeMax) == 9);
  CHECK(taxi_latitude_bucket(45.0) == 9);
  CHECK(taxi_longitude_bucket(-90.0) == 0);
  CHECK(taxi_longitude_bucket(-80.0) == 9);
  CHECK(taxi_longitude_bucket(std::nan("")) == 10);
}

TEST_CASE("Taxi payment types are matched from the fixed vocabulary ignoring case") {
  CHECK(taxi_payment_id("Cash") == 0);
  CHECK(taxi_payment_id("credit card") == 1);
  CHECK(taxi_payment_id("No Charge") == 2);
  CHECK(taxi_payment_id("Dispute") == 3);
  CHECK(taxi_payment_id("Unknown") == 4);
  CHECK(taxi_payment_id("Pcard") == 5);
  CHECK(taxi_payment_id("Prcard") == 6);
  CHECK(taxi_payment_id("Mobile") == 7);
  CHECK(taxi_payment_id("") == 7);
}

TEST_CASE("FNV-1a gives its published test vectors") {
  CHECK(fnv1a_64("") == 0xcbf29ce484222325ULL);
  CHECK(fnv1a_64("a") == 0xaf63dc4c8601ec8cULL);
  CHECK(fnv1a_64("foobar") == 0x85944171f73967e8ULL);
  CHECK(taxi_company_id("foobar") == static_cast<int>(0x85944171f73967e8ULL % 100));
}

TEST_CASE("A big tipper tips more than a fifth of the fare") {
  TaxiTrip t = loop_trip();
  t.fare = 10.0;
  t.tips = 2.0;
  CHECK_FALSE(taxi_big_tipper(t));
  t.tips = 2.01;
  CHECK(taxi_big_tipper(t));
}

TEST_CASE("A taxi data set has 17 features two classes and the tip labels") {
  std::vector<TaxiTrip> trips{loop_trip(), loop_trip()};
  trips[1].tips = 0.0;
  const Dataset d = make_taxi_dataset(trips, "taxi/test");
  CHECK(d.name == "taxi/test");
  CHECK(d.example_shape == Shape::flat(17));
  CHECK(d.num_classes == 2);
  CHECK(d.features.rows() == 2);
  CHECK(d.labels == std::vector<int32_t>{1, 0});
}

TEST_CASE("Taxi trips that cannot be featurized are refused naming the trip") {
  std::vector<TaxiTrip> trips{loop_trip(), loop_trip()};
  trips[1].trip_start_hour = 24;
  CHECK_THROWS_WITH(make_taxi_dataset(trips, "t"), Contains("t: trip 1: trip_start_hour 24"));
  trips[1] = loop_trip();
  trips[1].fare = kTaxiMissing;
  CHECK_THROWS_WITH(make_taxi_dataset(trips, "t"), Contains("trip 1: fare or tips missing"));
  std::array<float, kTaxiFeatureCount> row{};
  CHECK_THROWS_AS(taxi_features(trips[1], row), distlab::Error);
}
