#include "lib/measure/fit.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace rankshape {

double median(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("median of an empty sample");
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower =
      *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lower + upper);
}

std::vector<double> without_outliers(const std::vector<double>& values, double k) {
  if (values.size() < 3) return values;
  const double m = median(values);
  std::vector<double> deviations;
  for (double v : values) deviations.push_back(std::abs(v - m));
  const double mad = median(deviations);
  if (mad == 0) {
    std::vector<double> same;
    for (double v : values) {
      if (v == m) same.push_back(v);
    }
    return same;
  }
  std::vector<double> kept;
  for (double v : values) {
    if (std::abs(v - m) <= k * mad) kept.push_back(v);
  }
  return kept;
}

LineFit fit_line(const std::vector<double>& h, const std::vector<double>& t) {
  if (h.size() != t.size()) throw std::invalid_argument("fit_line: sizes differ");
  const double n = static_cast<double>(h.size());
  double mh = 0, mt = 0;
  for (std::size_t i = 0; i < h.size(); ++i) {
    mh += h[i];
    mt += t[i];
  }
  mh /= n;
  mt /= n;
  double shh = 0, sht = 0, stt = 0;
  for (std::size_t i = 0; i < h.size(); ++i) {
    shh += (h[i] - mh) * (h[i] - mh);
    sht += (h[i] - mh) * (t[i] - mt);
    stt += (t[i] - mt) * (t[i] - mt);
  }
  if (h.size() < 2 || shh == 0) {
    throw std::invalid_argument("fit_line needs at least two different message sizes");
  }
  LineFit f;
  f.inverse_bandwidth = sht / shh;
  f.latency = mt - f.inverse_bandwidth * mh;
  f.r_squared = stt == 0 ? 1.0 : (sht * sht) / (shh * stt);
  return f;
}

}  // namespace rankshape
