// Fits measured times to a sum of non-negative terms, t ≈ Σ c_k · x_k (a
// fixed cost per operation, seconds per FLOP, seconds per byte...), by
// least squares on the relative error: a 10 µs sample counts as much as a
// 10 ms one, so small operations, where overhead dominates, are not drowned
// by large ones. A coefficient the data would make negative is zero
// instead (an active-set method: drop the most negative term, solve again),
// since no cost is negative.
#pragma once

#include <string>
#include <vector>

namespace distlab::calibration {

struct Observation {
  std::vector<double> terms;  // x_k of this sample, one per coefficient
  double seconds = 0;         // measured, > 0
  // How much its relative error counts (1: as much as any other). The
  // kernel fit weighs layer passes by their time, so that the passes that
  // make up most of a step are fitted best.
  double weight = 1;
};

struct FitQuality {
  double median_error = 0;  // median |predicted / measured - 1|
  double worst_error = 0;   // largest |predicted / measured - 1|
};

struct LinearFit {
  std::vector<double> coefficients;  // c_k >= 0
  FitQuality quality;

  double predict(const std::vector<double>& terms) const;
};

// Throws Error when there are fewer observations than terms, when a
// measured time is not positive, or when the rows have unequal lengths.
// `what` names the fit in error messages.
LinearFit fit_nonnegative(const std::vector<Observation>& observations, const std::string& what);

// The median and worst relative error of `fit` over `observations`.
FitQuality fit_quality(const LinearFit& fit, const std::vector<Observation>& observations);

}  // namespace distlab::calibration
