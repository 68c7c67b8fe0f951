#include "nn/data/taxi_synthetic.h"

#include <catch2/catch.hpp>
#include <cmath>

using namespace distlab::nn;
using Catch::Matchers::WithinAbs;

TEST_CASE("The same seed gives bit-identical synthetic taxi features") {
  const Dataset a = make_taxi_dataset(generate_taxi_trips(3000, 7), "a");
  const Dataset b = make_taxi_dataset(generate_taxi_trips(3000, 7), "b");
  CHECK(a.features == b.features);
  CHECK(a.labels == b.labels);
  const Dataset c = make_taxi_dataset(generate_taxi_trips(3000, 8), "c");
  CHECK(a.features != c.features);
}

TEST_CASE("More synthetic taxi trips extend fewer") {
  const auto few = generate_taxi_trips(50, 3);
  const auto many = generate_taxi_trips(500, 3);
  CHECK(make_taxi_dataset(few, "x").features == make_taxi_dataset(many, "x").features.topRows(50));
}

TEST_CASE("Every synthetic taxi feature stays within its column's vocabulary") {
  const Dataset d = make_taxi_dataset(generate_taxi_trips(20000, 1), "taxi");
  CHECK(d.example_shape == Shape::flat(kTaxiFeatureCount));
  for (int c = 0; c < kTaxiFeatureCount; ++c) {
    const auto column = d.features.col(c);
    CAPTURE(c, kTaxiColumns[c].name);
    CHECK(column.allFinite());
    CHECK(column.minCoeff() >= 0.0f);
    if (kTaxiColumns[c].vocab == 0) {
      CHECK(column.maxCoeff() < 6.0f);  // log1p of at most a few hundred
      continue;
    }
    CHECK(column.maxCoeff() <= static_cast<float>(kTaxiColumns[c].vocab - 1));
    // Ids are exact integers.
    CHECK((column.array() == column.array().round()).all());
    // And the ids are spread: more than one distinct value per column.
    CHECK(column.maxCoeff() > column.minCoeff());
  }
}

TEST_CASE("Synthetic taxi trips have plausible ranges") {
  const auto trips = generate_taxi_trips(20000, 2);
  int64_t cash = 0, card = 0, missing_pickup = 0;
  double miles = 0.0;
  for (const TaxiTrip& t : trips) {
    REQUIRE(t.fare >= 3.25);
    REQUIRE(t.trip_miles > 0.0);
    REQUIRE(t.trip_seconds >= 60.0);
    REQUIRE(t.tips >= 0.0);
    REQUIRE(t.fare == std::round(t.fare * 4.0) / 4.0);  // quarters, as the meter counts
    if (!std::isnan(t.pickup_latitude)) {
      REQUIRE(t.pickup_latitude >= kChicagoLatitudeMin);
      REQUIRE(t.pickup_latitude <= kChicagoLatitudeMax);
      REQUIRE(t.pickup_community_area >= 1);
      REQUIRE(t.pickup_community_area <= 77);
    } else {
      ++missing_pickup;
    }
    cash += t.payment_type == "Cash";
    card += t.payment_type == "Credit Card";
    miles += t.trip_miles;
  }
  const double n = static_cast<double>(trips.size());
  CHECK_THAT(cash / n, WithinAbs(0.50, 0.03));
  CHECK_THAT(card / n, WithinAbs(0.42, 0.03));
  CHECK_THAT(missing_pickup / n, WithinAbs(0.02, 0.01));
  CHECK(miles / n > 2.0);
  CHECK(miles / n < 6.0);
}

TEST_CASE("Synthetic taxi labels are learnable from the payment type") {
  const Dataset d = make_taxi_dataset(generate_taxi_trips(20000, 4), "taxi");
  const double n = static_cast<double>(d.size());
  int64_t big = 0, rule_right = 0;
  for (int64_t i = 0; i < d.size(); ++i) {
    const bool card = d.features(i, kTaxiPaymentType) == 1.0f;  // Credit Card
    big += d.labels[i];
    rule_right += (card ? 1 : 0) == d.labels[i];
  }
  const double rate = big / n;
  const double base_accuracy = std::max(rate, 1.0 - rate);
  const double rule_accuracy = rule_right / n;
  CAPTURE(rate, base_accuracy, rule_accuracy);
  CHECK(rate > 0.2);
  CHECK(rate < 0.7);
  CHECK(rule_accuracy > base_accuracy + 0.1);
}

TEST_CASE("Synthetic taxi tips depend on the evening and weekend as documented") {
  const auto trips = generate_taxi_trips(40000, 5);
  int64_t night_big = 0, night = 0, morning_big = 0, morning = 0;
  for (const TaxiTrip& t : trips) {
    if (t.payment_type != "Credit Card") continue;
    const bool friday_saturday_evening =
        t.trip_start_hour >= 18 && (t.trip_start_day == 5 || t.trip_start_day == 6);
    const bool weekday_morning = t.trip_start_hour >= 6 && t.trip_start_hour <= 9 &&
                                 t.trip_start_day >= 1 && t.trip_start_day <= 5;
    night += friday_saturday_evening;
    night_big += friday_saturday_evening && taxi_big_tipper(t);
    morning += weekday_morning;
    morning_big += weekday_morning && taxi_big_tipper(t);
  }
  REQUIRE(night > 100);
  REQUIRE(morning > 100);
  const double night_rate = static_cast<double>(night_big) / static_cast<double>(night);
  const double morning_rate = static_cast<double>(morning_big) / static_cast<double>(morning);
  CAPTURE(night_rate, morning_rate);
  CHECK(night_rate > morning_rate + 0.15);
}
