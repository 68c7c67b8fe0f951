#include "calibration/measurement.h"

#include <algorithm>

namespace distlab::calibration {

double median(std::vector<double> seconds) {
  if (seconds.empty()) return 0;
  const std::size_t n = seconds.size();
  std::nth_element(seconds.begin(), seconds.begin() + static_cast<std::ptrdiff_t>(n / 2),
                   seconds.end());
  const double upper = seconds[n / 2];
  if (n % 2 == 1) return upper;
  const double lower =
      *std::max_element(seconds.begin(), seconds.begin() + static_cast<std::ptrdiff_t>(n / 2));
  return (lower + upper) / 2;
}

AffineFit fit_affine(const std::vector<Sample>& samples, const std::string& what) {
  std::vector<Observation> observations;
  observations.reserve(samples.size());
  for (const Sample& s : samples) observations.push_back({{1.0, s.size}, s.seconds});
  const LinearFit fit = fit_nonnegative(observations, what);
  return {.fixed_seconds = fit.coefficients[0],
          .rate = fit.coefficients[1] > 0 ? 1 / fit.coefficients[1] : 0,
          .quality = fit.quality};
}

}  // namespace distlab::calibration
