#include "sim/core_sharing.h"

#include <algorithm>
#include <cmath>

namespace distlab::sim {

double spread_at(const CoreSharing& sharing, double load) {
  const auto& points = sharing.spread_by_load;
  if (points.empty() || load <= 1) return 0;
  double load_before = 1, spread_before = 0;
  for (const auto& [at, spread] : points) {
    if (load <= at) {
      if (at <= load_before) return spread;
      return spread_before + (spread - spread_before) * (load - load_before) / (at - load_before);
    }
    load_before = at;
    spread_before = spread;
  }
  return points.back().second;
}

ShareWeights::ShareWeights(ShareUnevenness unevenness, uint64_t seed)
    : unevenness_(unevenness), random_(seed ^ 0x9E3779B97F4A7C15ULL) {}

double ShareWeights::at(double now) {
  if (!unevenness_.uneven()) return 1;
  if (now >= until_) {
    std::normal_distribution<double> z;
    weight_ = std::exp(unevenness_.spread * z(random_));
    // A share lasts a random time of the measured mean (at least an
    // instant: a zero correlation draws anew at every execution).
    const double mean = std::max(unevenness_.correlation_seconds, 1e-9);
    std::exponential_distribution<double> lasts(1 / mean);
    until_ = now + lasts(random_);
  }
  return weight_;
}

}  // namespace distlab::sim
