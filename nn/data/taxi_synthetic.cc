#include "nn/data/taxi_synthetic.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "common/error.h"
#include "nn/random.h"

namespace distlab::nn {
namespace {

struct Place {
  double latitude, longitude, spread;  // degrees
  int area;                            // community area
  double weight;                       // share of pickups
  double tip_effect;
};

// Pickup clusters; the remaining 7% are anywhere (5%) or missing (2%).
constexpr std::array<Place, 7> kPlaces{{
    {41.8837, -87.6289, 0.006, 32, 0.33, 0.4},  // the Loop
    {41.8920, -87.6330, 0.008, 8, 0.25, 0.4},   // Near North Side (River North)
    {41.8810, -87.6550, 0.010, 28, 0.10, 0.0},  // Near West Side (West Loop)
    {41.9400, -87.6500, 0.010, 6, 0.08, 0.0},   // Lake View
    {41.9210, -87.6400, 0.010, 7, 0.07, 0.0},   // Lincoln Park
    {41.9786, -87.9048, 0.004, 76, 0.07, 0.6},  // O'Hare
    {41.7868, -87.7522, 0.004, 56, 0.03, 0.6},  // Garfield Ridge (Midway)
}};
constexpr double kAnywhereShare = 0.05;
constexpr double kMissingPickupTipEffect = -0.3;

struct Company {
  std::string_view name;
  double weight;
  double tip_effect;
};

constexpr std::array<Company, 20> kCompanies{{
    {"Taxi Affiliation Services", 0.22, 0.0},
    {"Flash Cab", 0.12, -0.3},
    {"Dispatch Taxi Affiliation", 0.08, 0.2},
    {"Yellow Cab", 0.08, 0.3},
    {"Chicago Carriage Cab Corp", 0.06, -0.2},
    {"City Service", 0.06, 0.1},
    {"Blue Ribbon Taxi Association Inc.", 0.05, 0.4},
    {"Sun Taxi", 0.04, -0.4},
    {"Star North Management LLC", 0.03, 0.6},
    {"Choice Taxi Association", 0.03, -0.1},
    {"Globe Taxi", 0.03, 0.2},
    {"Medallion Leasin", 0.03, -0.6},
    {"Northwest Management LLC", 0.03, 0.5},
    {"KOAM Taxi Association", 0.02, -0.5},
    {"Top Cab Affiliation", 0.02, 0.3},
    {"Chicago Medallion Management", 0.02, 0.0},
    {"Checker Taxi", 0.02, -0.3},
    {"303 Taxi", 0.02, 0.4},
    {"Nova Taxi Affiliation Llc", 0.015, 0.1},
    {"Patriot Taxi Dba Peace Taxi Association", 0.015, -0.2},
}};
constexpr double kNoCompanyShare = 0.03;

struct Payment {
  std::string_view name;
  double weight;
  double tip_effect;
  bool card;  // tips on a card are recorded; cash tips are not
};

constexpr std::array<Payment, 8> kPayments{{
    {"Cash", 0.50, -6.0, false},
    {"Credit Card", 0.42, 0.9, true},
    {"Mobile", 0.02, 0.6, true},
    {"Prcard", 0.02, 0.3, true},
    {"Pcard", 0.01, 0.0, true},
    {"No Charge", 0.015, -5.0, false},
    {"Unknown", 0.01, -5.0, false},
    {"Dispute", 0.005, -5.0, false},
}};

// Relative trip counts by hour of day and by weekday (0 = Sunday).
constexpr std::array<double, 24> kHourWeights{3,   2.5, 2, 1.5, 1, 1, 1.5, 3,   5, 5.5, 5, 5, 5.5,
                                              5.5, 5.5, 6, 6.5, 7, 7, 6.5, 5.5, 5, 4.5, 4};
constexpr std::array<double, 7> kDayWeights{0.85, 0.9, 1.0, 1.0, 1.05, 1.2, 1.1};

constexpr double kMilesPerDegreeLatitude = 69.0;
constexpr double kMilesPerDegreeLongitude = 51.4;  // at 41.9 degrees north
constexpr double kStreetDetour = 1.3;              // road miles per straight-line mile

// Index drawn with probability proportional to weight(item).
template <typename Items, typename Weight>
std::size_t pick(const Items& items, Weight weight, Rng& rng) {
  double total = 0.0;
  for (const auto& item : items) total += weight(item);
  double u = rng.uniform() * total;
  for (std::size_t i = 0; i < items.size(); ++i) {
    u -= weight(items[i]);
    if (u < 0.0) return i;
  }
  return items.size() - 1;
}

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

// A stand-in map from location to community area for trips outside the
// clusters: a fixed scramble of the 10x10 location buckets onto 1-77.
int area_of(double latitude, double longitude) {
  const int cell =
      taxi_latitude_bucket(latitude) * kTaxiLocationBuckets + taxi_longitude_bucket(longitude);
  return 1 + (cell * 37) % kTaxiCommunityAreas;
}

double clamp_latitude(double v) {
  return std::clamp(v, kChicagoLatitudeMin, kChicagoLatitudeMax);
}
double clamp_longitude(double v) {
  return std::clamp(v, kChicagoLongitudeMin, kChicagoLongitudeMax);
}

// Pickup location and area; returns the pickup's tip effect.
double draw_pickup(TaxiTrip& t, Rng& rng) {
  const double u = rng.uniform();
  if (u < 0.02) return kMissingPickupTipEffect;
  if (u < 0.02 + kAnywhereShare) {
    t.pickup_latitude = rng.uniform(kChicagoLatitudeMin, kChicagoLatitudeMax);
    t.pickup_longitude = rng.uniform(kChicagoLongitudeMin, kChicagoLongitudeMax);
    t.pickup_community_area = area_of(t.pickup_latitude, t.pickup_longitude);
    return 0.0;
  }
  const Place& p = kPlaces[pick(
      kPlaces, [](const Place& q) { return q.weight; }, rng)];
  t.pickup_latitude = clamp_latitude(p.latitude + p.spread * rng.normal());
  t.pickup_longitude = clamp_longitude(p.longitude + p.spread * rng.normal());
  t.pickup_community_area = p.area;
  return p.tip_effect;
}

// Miles, then a dropoff that far away (by street) in a random direction.
void draw_route(TaxiTrip& t, Rng& rng) {
  const bool airport = t.pickup_community_area == 76 || t.pickup_community_area == 56;
  const double miles =
      airport ? rng.uniform(12.0, 25.0) : std::exp(std::log(2.0) + 0.8 * rng.normal());
  t.trip_miles = std::round(std::clamp(miles, 0.1, 60.0) * 10.0) / 10.0;  // the meter's tenths
  if (rng.uniform() < 0.03) return;                                       // dropoff not recorded
  const double from_lat = std::isnan(t.pickup_latitude) ? kPlaces[0].latitude : t.pickup_latitude;
  const double from_lon =
      std::isnan(t.pickup_longitude) ? kPlaces[0].longitude : t.pickup_longitude;
  const double straight = t.trip_miles / kStreetDetour;
  const double bearing = rng.uniform(0.0f, 6.2831853f);
  t.dropoff_latitude =
      clamp_latitude(from_lat + straight * std::cos(bearing) / kMilesPerDegreeLatitude);
  t.dropoff_longitude =
      clamp_longitude(from_lon + straight * std::sin(bearing) / kMilesPerDegreeLongitude);
  t.dropoff_community_area = area_of(t.dropoff_latitude, t.dropoff_longitude);
}

// Duration from speed, fare from Chicago's meter.
void draw_duration_and_fare(TaxiTrip& t, Rng& rng) {
  double mph = rng.uniform(10.0f, 22.0f);
  const bool weekday = t.trip_start_day >= 1 && t.trip_start_day <= 5;
  const int h = t.trip_start_hour;
  if (weekday && ((h >= 7 && h <= 9) || (h >= 16 && h <= 18))) mph *= 0.7;
  if (h <= 5) mph *= 1.4;
  t.trip_seconds = std::round(t.trip_miles / mph * 3600.0) + 60.0;
  const double meter = 3.25 + 2.25 * t.trip_miles + 0.25 * std::floor(t.trip_seconds / 36.0);
  t.fare = std::round(meter * 4.0) / 4.0;
}

double hour_day_effect(int hour, int day) {
  const bool evening = hour >= 18;
  const bool weekend = day == 0 || day == 6;
  const bool going_out = evening && (day == 5 || day == 6);
  const bool morning_rush = !weekend && hour >= 6 && hour <= 9;
  return (evening ? 0.5 : 0.0) + (weekend ? 0.3 : 0.0) + (going_out ? 0.7 : 0.0) +
         (morning_rush ? -0.5 : 0.0);
}

// Draws the tip from the rule in the header; `effects` is the logit without
// the payment and hour x day terms.
void draw_tip(TaxiTrip& t, const Payment& payment, double effects, Rng& rng) {
  const double logit =
      payment.tip_effect + hour_day_effect(t.trip_start_hour, t.trip_start_day) + effects;
  if (rng.uniform() < sigmoid(logit)) {
    // Rounded up to the cent from at least 21%: always more than 20%.
    t.tips = std::ceil(t.fare * rng.uniform(0.21f, 0.40f) * 100.0) / 100.0;
  } else if (payment.card && rng.uniform() < 0.6f) {
    t.tips = std::floor(t.fare * rng.uniform(0.05f, 0.18f) * 100.0) / 100.0;
  } else {
    t.tips = 0.0;
  }
}

TaxiTrip draw_trip(Rng& rng) {
  TaxiTrip t;
  t.trip_start_hour = static_cast<int>(pick(
      kHourWeights, [](double w) { return w; }, rng));
  t.trip_start_day = static_cast<int>(pick(
      kDayWeights, [](double w) { return w; }, rng));
  t.trip_start_month = 1 + static_cast<int>(rng.below(12));
  double effects = draw_pickup(t, rng);
  draw_route(t, rng);
  draw_duration_and_fare(t, rng);
  const Payment& payment = kPayments[pick(
      kPayments, [](const Payment& p) { return p.weight; }, rng)];
  t.payment_type = payment.name;
  if (rng.uniform() >= kNoCompanyShare) {
    const Company& c = kCompanies[pick(
        kCompanies, [](const Company& x) { return x.weight; }, rng)];
    t.company = c.name;
    effects += c.tip_effect;
  }
  draw_tip(t, payment, effects, rng);
  return t;
}

}  // namespace

std::vector<TaxiTrip> generate_taxi_trips(int64_t n, uint64_t seed) {
  if (n < 0) throw Error(fmt::format("generate_taxi_trips: n must not be negative, got {}", n));
  std::vector<TaxiTrip> trips;
  trips.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    // One stream per trip: trip i does not depend on n.
    Rng rng(derive_seed(seed, SeedUse::kSyntheticTaxi, {static_cast<uint64_t>(i)}));
    trips.push_back(draw_trip(rng));
  }
  return trips;
}

}  // namespace distlab::nn
