#include "nn/data/taxi.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "common/error.h"

namespace distlab::nn {
namespace {

int bucket(double value, double low, double high) {
  if (std::isnan(value)) return kTaxiMissingBucket;
  const double scaled = std::floor((value - low) / (high - low) * kTaxiLocationBuckets);
  return static_cast<int>(std::clamp(scaled, 0.0, double{kTaxiLocationBuckets - 1}));
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

// log1p of a non-negative amount; missing and negative (data-entry errors)
// count as 0, so that no NaN reaches a model.
float log_amount(double value) {
  if (!(value > 0.0)) return 0.0f;
  return static_cast<float>(std::log1p(value));
}

std::string range_problem(int value, int low, int high, const char* field) {
  if (value >= low && value <= high) return "";
  return fmt::format("{} {} is not in {}-{}", field, value, low, high);
}

}  // namespace

int taxi_latitude_bucket(double latitude) {
  return bucket(latitude, kChicagoLatitudeMin, kChicagoLatitudeMax);
}

int taxi_longitude_bucket(double longitude) {
  return bucket(longitude, kChicagoLongitudeMin, kChicagoLongitudeMax);
}

int taxi_community_area_id(int area) {
  return area >= 1 && area <= kTaxiCommunityAreas ? area : 0;
}

int taxi_payment_id(std::string_view payment_type) {
  for (std::size_t i = 0; i < kTaxiPaymentTypes.size(); ++i) {
    if (equal_ignoring_case(payment_type, kTaxiPaymentTypes[i])) return static_cast<int>(i);
  }
  return kTaxiOtherPayment;
}

uint64_t fnv1a_64(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ULL;  // FNV offset basis
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;  // FNV prime
  }
  return hash;
}

int taxi_company_id(std::string_view company) {
  return static_cast<int>(fnv1a_64(company) % kTaxiCompanyBuckets);
}

bool taxi_big_tipper(const TaxiTrip& trip) {
  return trip.tips > kTaxiBigTipFraction * trip.fare;
}

std::string taxi_trip_problem(const TaxiTrip& trip) {
  if (std::isnan(trip.fare) || std::isnan(trip.tips))
    return "fare or tips missing: the label needs both";
  std::string problem = range_problem(trip.trip_start_hour, 0, 23, "trip_start_hour");
  if (problem.empty()) problem = range_problem(trip.trip_start_day, 0, 6, "trip_start_day");
  if (problem.empty()) problem = range_problem(trip.trip_start_month, 1, 12, "trip_start_month");
  return problem;
}

namespace {

// The row of a trip that taxi_trip_problem found usable.
void fill_row(const TaxiTrip& trip, std::span<float, kTaxiFeatureCount> row) {
  row[kTaxiLogTripMiles] = log_amount(trip.trip_miles);
  row[kTaxiLogFare] = log_amount(trip.fare);
  row[kTaxiLogTripMinutes] = log_amount(trip.trip_seconds / 60.0);
  const int pickup_lat = taxi_latitude_bucket(trip.pickup_latitude);
  const int pickup_lon = taxi_longitude_bucket(trip.pickup_longitude);
  const int dropoff_lat = taxi_latitude_bucket(trip.dropoff_latitude);
  const int dropoff_lon = taxi_longitude_bucket(trip.dropoff_longitude);
  const int side = kTaxiLocationBuckets + 1;
  const auto id = [&](TaxiFeature column, int value) { row[column] = static_cast<float>(value); };
  id(kTaxiPickupLatBucket, pickup_lat);
  id(kTaxiPickupLonBucket, pickup_lon);
  id(kTaxiDropoffLatBucket, dropoff_lat);
  id(kTaxiDropoffLonBucket, dropoff_lon);
  id(kTaxiStartHour, trip.trip_start_hour);
  id(kTaxiStartDay, trip.trip_start_day);
  id(kTaxiStartMonth, trip.trip_start_month - 1);
  id(kTaxiPickupArea, taxi_community_area_id(trip.pickup_community_area));
  id(kTaxiDropoffArea, taxi_community_area_id(trip.dropoff_community_area));
  id(kTaxiPaymentType, taxi_payment_id(trip.payment_type));
  id(kTaxiCompany, taxi_company_id(trip.company));
  id(kTaxiPickupLatLonCross, pickup_lat * side + pickup_lon);
  id(kTaxiDropoffLatLonCross, dropoff_lat * side + dropoff_lon);
  id(kTaxiHourDayCross, trip.trip_start_hour * 7 + trip.trip_start_day);
}

}  // namespace

void taxi_features(const TaxiTrip& trip, std::span<float, kTaxiFeatureCount> row) {
  if (const std::string problem = taxi_trip_problem(trip); !problem.empty()) {
    throw Error("taxi trip: " + problem);
  }
  fill_row(trip, row);
}

Dataset make_taxi_dataset(std::span<const TaxiTrip> trips, const std::string& name) {
  Dataset data;
  data.name = name;
  data.example_shape = Shape::flat(kTaxiFeatureCount);
  data.num_classes = 2;
  data.features.resize(static_cast<Eigen::Index>(trips.size()), kTaxiFeatureCount);
  data.labels.resize(trips.size());
  for (std::size_t i = 0; i < trips.size(); ++i) {
    auto row = std::span<float, kTaxiFeatureCount>(data.features.row(i).data(), kTaxiFeatureCount);
    if (const std::string problem = taxi_trip_problem(trips[i]); !problem.empty()) {
      throw DataError(name, fmt::format("trip {}: {}", i, problem));
    }
    fill_row(trips[i], row);
    data.labels[i] = taxi_big_tipper(trips[i]) ? 1 : 0;
  }
  return data;
}

}  // namespace distlab::nn
