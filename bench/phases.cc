#include "bench/phases.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "lib/measure/fit.h"

namespace rankshape {

PhaseSummary split_phases(const std::vector<double>& samples, double slow_ratio) {
  if (samples.empty()) throw std::invalid_argument("split_phases: no samples");
  if (!(slow_ratio > 1) || !std::isfinite(slow_ratio))
    throw std::invalid_argument("split_phases: the slow ratio must be a finite number above 1");
  for (double s : samples)
    if (!(s > 0) || !std::isfinite(s))
      throw std::invalid_argument("split_phases: a sample is not a positive finite time");

  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  PhaseSummary out;
  out.fast_reference = sorted[sorted.size() / 10];
  out.threshold = out.fast_reference * slow_ratio;

  std::vector<double> fast, slow;
  for (int i = 0; i < static_cast<int>(samples.size()); ++i) {
    bool is_slow = samples[i] > out.threshold;
    (is_slow ? slow : fast).push_back(samples[i]);
    if (out.phases.empty() || out.phases.back().slow != is_slow)
      out.phases.push_back(Phase{is_slow, i, 0});
    ++out.phases.back().samples;
  }
  out.fast_median = median(fast);  // never empty: the reference itself is fast
  out.slow_median = slow.empty() ? 0 : median(slow);
  return out;
}

}  // namespace rankshape
