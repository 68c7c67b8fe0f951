// What every probe of ./calibrate returns: the samples it took (size and
// median time) and the figures fitted to them, so that the tool can print
// how well each fit matches what it measured.
#pragma once

#include <string>
#include <vector>

#include "calibration/least_squares.h"

namespace distlab::calibration {

struct Sample {
  double size = 0;     // bytes (or the probe's own unit, named by the probe)
  double seconds = 0;  // median of the repetitions
};

// The median of `seconds` (which it reorders); 0 for none.
double median(std::vector<double> seconds);

// A fixed cost plus a rate: t = fixed_seconds + size / rate. Fitted by
// fit_nonnegative on the samples (terms {1, size}).
struct AffineFit {
  double fixed_seconds = 0;
  double rate = 0;  // size units per second; 0 when the data show none
  FitQuality quality;
};
AffineFit fit_affine(const std::vector<Sample>& samples, const std::string& what);

}  // namespace distlab::calibration
