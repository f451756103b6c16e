// Slow and fast phases in a series of timings taken at a fixed interval
// (bench/slow_phases.cc): a machine that changes speed as a whole for
// seconds at a time shows as runs of slow samples between runs of fast ones.
#ifndef RANKSHAPE_BENCH_PHASES_H_
#define RANKSHAPE_BENCH_PHASES_H_

#include <vector>

namespace rankshape {

/// A run of consecutive samples on the same side of the threshold.
struct Phase {
  bool slow = false;
  int first = 0;  // index of its first sample
  int samples = 0;
};

struct PhaseSummary {
  double fast_reference = 0;  // the 10th percentile of the samples
  double threshold = 0;       // fast_reference x slow_ratio
  double fast_median = 0;     // median of the samples at or below threshold
  double slow_median = 0;     // of those above it; 0 when there are none
  std::vector<Phase> phases;  // in order, covering every sample
};

/// Splits samples into phases: a sample is slow when it exceeds slow_ratio
/// times the 10th percentile of all samples (the machine's quick state, if
/// it spends a tenth of the time in it). Throws std::invalid_argument on no
/// samples, a sample that is not positive and finite, or slow_ratio <= 1.
PhaseSummary split_phases(const std::vector<double>& samples, double slow_ratio);

}  // namespace rankshape

#endif  // RANKSHAPE_BENCH_PHASES_H_
