#include "calibration/least_squares.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace distlab::calibration {

double LinearFit::predict(const std::vector<double>& terms) const {
  double seconds = 0;
  for (std::size_t k = 0; k < terms.size() && k < coefficients.size(); ++k) {
    seconds += coefficients[k] * terms[k];
  }
  return seconds;
}

namespace {

void check(const std::vector<Observation>& observations, const std::string& what) {
  if (observations.empty()) throw Error("fit '" + what + "': no observations");
  const std::size_t terms = observations.front().terms.size();
  if (terms == 0) throw Error("fit '" + what + "': no terms");
  if (observations.size() < terms) {
    throw Error("fit '" + what + "': " + std::to_string(observations.size()) +
                " observations cannot fit " + std::to_string(terms) + " terms");
  }
  for (const Observation& o : observations) {
    if (o.terms.size() != terms) throw Error("fit '" + what + "': rows of unequal length");
    if (!(o.seconds > 0) || !std::isfinite(o.seconds)) {
      throw Error("fit '" + what + "': a measured time is not positive (" +
                  std::to_string(o.seconds) + " s)");
    }
  }
}

// Least squares over the free terms only; the others stay zero. The
// normal equations of a few terms, each column scaled to unit norm first
// (they differ by many orders of magnitude: seconds per op against
// seconds per FLOP), solved by Gaussian elimination with partial pivoting.
std::vector<double> solve(const std::vector<Observation>& observations,
                          const std::vector<bool>& free) {
  std::vector<std::size_t> columns;
  for (std::size_t k = 0; k < free.size(); ++k) {
    if (free[k]) columns.push_back(k);
  }
  std::vector<double> c(free.size(), 0.0);
  const std::size_t n = columns.size();
  if (n == 0) return c;
  // Row r of the system: terms / measured, so that the residual against 1
  // is the relative error.
  auto element = [&](const Observation& o, std::size_t j) {
    return o.terms[columns[j]] / o.seconds;
  };
  std::vector<double> scale(n, 0.0);
  for (const Observation& o : observations) {
    for (std::size_t j = 0; j < n; ++j) scale[j] += o.weight * element(o, j) * element(o, j);
  }
  for (double& s : scale) s = s > 0 ? std::sqrt(s) : 1.0;
  // [A^T A | A^T 1] of the scaled columns.
  std::vector<std::vector<double>> m(n, std::vector<double>(n + 1, 0.0));
  for (const Observation& o : observations) {
    for (std::size_t i = 0; i < n; ++i) {
      const double ai = element(o, i) / scale[i];
      for (std::size_t j = 0; j < n; ++j) m[i][j] += o.weight * ai * element(o, j) / scale[j];
      m[i][n] += o.weight * ai;
    }
  }
  for (std::size_t p = 0; p < n; ++p) {
    std::size_t pivot = p;
    for (std::size_t r = p + 1; r < n; ++r) {
      if (std::abs(m[r][p]) > std::abs(m[pivot][p])) pivot = r;
    }
    std::swap(m[p], m[pivot]);
    // A term that no sample varies (all zero) stays zero.
    if (std::abs(m[p][p]) < 1e-12) continue;
    for (std::size_t r = 0; r < n; ++r) {
      if (r == p) continue;
      const double f = m[r][p] / m[p][p];
      for (std::size_t j = p; j <= n; ++j) m[r][j] -= f * m[p][j];
    }
  }
  for (std::size_t j = 0; j < n; ++j) {
    const double x = std::abs(m[j][j]) < 1e-12 ? 0.0 : m[j][n] / m[j][j];
    c[columns[j]] = x / scale[j];
  }
  return c;
}

}  // namespace

FitQuality fit_quality(const LinearFit& fit, const std::vector<Observation>& observations) {
  std::vector<double> errors;
  errors.reserve(observations.size());
  for (const Observation& o : observations) {
    errors.push_back(std::abs(fit.predict(o.terms) / o.seconds - 1));
  }
  FitQuality q;
  if (errors.empty()) return q;
  std::sort(errors.begin(), errors.end());
  const std::size_t n = errors.size();
  q.median_error = n % 2 == 1 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
  q.worst_error = errors.back();
  return q;
}

LinearFit fit_nonnegative(const std::vector<Observation>& observations, const std::string& what) {
  check(observations, what);
  std::vector<bool> free(observations.front().terms.size(), true);
  LinearFit fit;
  for (;;) {
    fit.coefficients = solve(observations, free);
    auto most_negative = std::min_element(fit.coefficients.begin(), fit.coefficients.end());
    if (*most_negative >= 0) break;
    free[static_cast<std::size_t>(most_negative - fit.coefficients.begin())] = false;
  }
  fit.quality = fit_quality(fit, observations);
  return fit;
}

}  // namespace distlab::calibration
