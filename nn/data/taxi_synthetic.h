// Seeded synthetic Chicago taxi trips, for scenarios of the taxi-tips lab
// that cannot download the real data: records of the same shape and
// plausible ranges, with a tip rule a wide & deep model can learn.
//
// How a trip is drawn (nn/random.h, so bit-identical everywhere):
// - pickup: 93% in one of seven clusters (the Loop, River North, the West
//   Loop, Lake View, Lincoln Park, O'Hare, Midway) with their community
//   areas, 5% anywhere in the box (area from a fixed stand-in map of the
//   location buckets), 2% missing (no location, no area);
// - trip_miles: log-normal around 2 miles (airport pickups: 12-25 miles);
//   the dropoff lies that far / 1.3 (streets are not straight) in a random
//   direction, clamped to the box; 3% of dropoffs missing;
// - trip_seconds: miles at 10-22 mph, slower in weekday rush hours, faster
//   at night, plus a minute; fare: Chicago's meter, $3.25 + $2.25 a mile +
//   $0.25 per 36 seconds, rounded to a quarter;
// - hour and weekday from fixed histograms (busy afternoons and evenings,
//   Friday and Saturday), month uniform; payment 50% Cash, 42% Credit
//   Card, the rest Mobile, Prcard, Pcard, No Charge, Unknown, Dispute;
//   20 companies, a few large, 3% with no company.
//
// The tip rule: a trip is a big tipper (tips > 20% of fare) with
// probability sigmoid(logit), logit the sum of
//   payment:  Credit Card +0.9, Mobile +0.6, Prcard +0.3, Pcard 0,
//             Cash -6 (drivers almost never record cash tips), No Charge,
//             Unknown and Dispute -5;
//   hour x day: evening (18-23) +0.5, weekend (Saturday, Sunday) +0.3,
//             Friday or Saturday evening another +0.7, weekday morning
//             rush (6-9) -0.5;
//   pickup:   the Loop or River North +0.4, O'Hare or Midway +0.6, missing
//             -0.3;
//   company:  a fixed offset per company in [-0.6, 0.6] (0 for none).
// A big tipper tips 21-40% of the fare; any other card-like payer tips
// 5-18% with probability 0.6, else nothing; cash, no tip.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/data/taxi.h"

namespace distlab::nn {

// n trips; trip i depends on the seed and i only (a larger n extends a
// smaller one).
std::vector<TaxiTrip> generate_taxi_trips(int64_t n, uint64_t seed);

}  // namespace distlab::nn
