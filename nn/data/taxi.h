// The Chicago taxi trips of the wide & deep "taxi tips" lab: one raw trip
// record, and its featurization into a 17-column row (3 numeric features and
// 14 categorical ids) labelled with TFX's "big tipper" rule. The column
// table below is the contract a wide & deep model spec is checked against.
// Reading the CSV exports is in taxi_csv.h, the synthetic generator in
// taxi_synthetic.h.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include "nn/data/dataset.h"

namespace distlab::nn {

inline constexpr double kTaxiMissing = std::numeric_limits<double>::quiet_NaN();

// One trip as the public data hold it; NaN or -1 mark what is missing.
struct TaxiTrip {
  double trip_seconds = kTaxiMissing;
  double trip_miles = kTaxiMissing;
  double fare = kTaxiMissing;  // dollars; never missing in a kept record
  double tips = kTaxiMissing;  // dollars; never missing in a kept record
  double pickup_latitude = kTaxiMissing;
  double pickup_longitude = kTaxiMissing;
  double dropoff_latitude = kTaxiMissing;
  double dropoff_longitude = kTaxiMissing;
  int pickup_community_area = -1;  // 1-77 in the data; -1 missing
  int dropoff_community_area = -1;
  int trip_start_hour = 0;   // 0-23
  int trip_start_day = 0;    // 0 = Sunday .. 6 = Saturday
  int trip_start_month = 1;  // 1-12
  std::string payment_type;  // "Cash", "Credit Card", ...; may be empty
  std::string company;       // may be empty
};

// One column of the featurized row.
struct TaxiColumn {
  std::string_view name;
  int vocab;  // ids 0..vocab-1 for a categorical column; 0 for a numeric one
};

// Positions in the row; kTaxiColumns[i] describes position i.
enum TaxiFeature : int {
  kTaxiLogTripMiles,     // log1p(trip_miles), missing -> 0
  kTaxiLogFare,          // log1p(fare)
  kTaxiLogTripMinutes,   // log1p(trip_seconds / 60), missing -> 0
  kTaxiPickupLatBucket,  // the rest are categorical ids, exact small floats
  kTaxiPickupLonBucket,
  kTaxiDropoffLatBucket,
  kTaxiDropoffLonBucket,
  kTaxiStartHour,
  kTaxiStartDay,
  kTaxiStartMonth,  // month - 1
  kTaxiPickupArea,
  kTaxiDropoffArea,
  kTaxiPaymentType,
  kTaxiCompany,
  kTaxiPickupLatLonCross,   // lat_bucket * 11 + lon_bucket
  kTaxiDropoffLatLonCross,  // lat_bucket * 11 + lon_bucket
  kTaxiHourDayCross,        // hour * 7 + day
  kTaxiFeatureCount
};

inline constexpr int kTaxiNumericFeatures = 3;   // positions 0-2; the rest categorical
inline constexpr int kTaxiLocationBuckets = 10;  // equal-width over the box below
inline constexpr int kTaxiMissingBucket = kTaxiLocationBuckets;  // id 10
inline constexpr int kTaxiCommunityAreas = 77;  // 1-77; id 0 = missing or out of range
inline constexpr int kTaxiCompanyBuckets = 100;
inline constexpr double kTaxiBigTipFraction = 0.2;

// Chicago's bounding box for the location buckets; values outside clamp.
inline constexpr double kChicagoLatitudeMin = 41.64;
inline constexpr double kChicagoLatitudeMax = 42.03;
inline constexpr double kChicagoLongitudeMin = -87.95;
inline constexpr double kChicagoLongitudeMax = -87.52;

// The payment types of the data portal, ids 0-6; id 7 is anything else
// ("Mobile", "Way2ride", empty). Matched ignoring case.
inline constexpr std::array<std::string_view, 7> kTaxiPaymentTypes{
    "Cash", "Credit Card", "No Charge", "Dispute", "Unknown", "Pcard", "Prcard"};
inline constexpr int kTaxiOtherPayment = 7;

inline constexpr std::array<TaxiColumn, kTaxiFeatureCount> kTaxiColumns{{
    {"log_trip_miles", 0},
    {"log_fare", 0},
    {"log_trip_minutes", 0},
    {"pickup_latitude_bucket", kTaxiLocationBuckets + 1},
    {"pickup_longitude_bucket", kTaxiLocationBuckets + 1},
    {"dropoff_latitude_bucket", kTaxiLocationBuckets + 1},
    {"dropoff_longitude_bucket", kTaxiLocationBuckets + 1},
    {"trip_start_hour", 24},
    {"trip_start_day", 7},
    {"trip_start_month", 12},
    {"pickup_community_area", kTaxiCommunityAreas + 1},
    {"dropoff_community_area", kTaxiCommunityAreas + 1},
    {"payment_type", kTaxiOtherPayment + 1},
    {"company", kTaxiCompanyBuckets},
    {"pickup_latitude_x_longitude", (kTaxiLocationBuckets + 1) * (kTaxiLocationBuckets + 1)},
    {"dropoff_latitude_x_longitude", (kTaxiLocationBuckets + 1) * (kTaxiLocationBuckets + 1)},
    {"trip_start_hour_x_day", 24 * 7},
}};

// Location bucket 0-9 over the box, clamped; kTaxiMissingBucket for NaN.
int taxi_latitude_bucket(double latitude);
int taxi_longitude_bucket(double longitude);
int taxi_community_area_id(int area);                // 1-77 kept, else 0
int taxi_payment_id(std::string_view payment_type);  // 0-7
// 64-bit FNV-1a: a fixed, portable string hash (std::hash is neither).
uint64_t fnv1a_64(std::string_view text);
// FNV-1a mod 100: TensorFlow's categorical_column_with_hash_bucket idea, so
// that the vocabulary of companies need not be known in advance.
int taxi_company_id(std::string_view company);

// TFX's taxi label: a tip of more than 20% of the fare.
bool taxi_big_tipper(const TaxiTrip& trip);

// Why a trip cannot be featurized (a missing fare or tip, an hour, day or
// month out of range), or an empty string when it can.
std::string taxi_trip_problem(const TaxiTrip& trip);

// Fills one row. Throws distlab::Error if taxi_trip_problem(trip) is not empty.
void taxi_features(const TaxiTrip& trip, std::span<float, kTaxiFeatureCount> row);

// The trips as a data set: example_shape Shape::flat(17), 2 classes
// (1 = big tipper), rows as laid out above. Throws DataError "name: trip i:
// problem" for a trip that cannot be featurized.
Dataset make_taxi_dataset(std::span<const TaxiTrip> trips, const std::string& name);

}  // namespace distlab::nn
