// Statistics for noisy timings: medians, outlier rejection and the ordinary
// least-squares line t = l + g * h (latency l, inverse bandwidth g per byte).
//
// The thesis's printed least-squares formulas (its 5.1-5.5) are wrong (a
// sample count off by one, missing factors) and give negative latencies on
// clean data; this is the textbook fit:
//   g = sum((h - mean h)(t - mean t)) / sum((h - mean h)^2),  l = mean t - g mean h.
#ifndef RANKSHAPE_LIB_MEASURE_FIT_H_
#define RANKSHAPE_LIB_MEASURE_FIT_H_

#include <vector>

namespace rankshape {

/// Median (mean of the two middle values for an even count). Throws
/// std::invalid_argument for an empty sample.
double median(std::vector<double> values);

/// Values within k median absolute deviations of the median (all of them
/// when the deviation is 0): drops the stragglers a busy core produces.
std::vector<double> without_outliers(const std::vector<double>& values, double k = 5.0);

struct LineFit {
  double latency = 0;            // l, same unit as t
  double inverse_bandwidth = 0;  // g, t per unit of h
  double r_squared = 1;          // 1 = perfect fit (also for constant t)
};

/// OLS fit of t = l + g h. Needs at least two distinct h; throws
/// std::invalid_argument otherwise or on a size mismatch.
LineFit fit_line(const std::vector<double>& h, const std::vector<double>& t);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_MEASURE_FIT_H_
