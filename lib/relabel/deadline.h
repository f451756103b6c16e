// Wall-clock budgets for anytime search.
#ifndef RANKSHAPE_LIB_RELABEL_DEADLINE_H_
#define RANKSHAPE_LIB_RELABEL_DEADLINE_H_

#include <algorithm>
#include <chrono>

namespace rankshape {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  /// A deadline `seconds` from now (<= 0: already passed).
  explicit Deadline(double seconds)
      : start_(Clock::now()),
        end_(start_ + std::chrono::duration_cast<Clock::duration>(
                          std::chrono::duration<double>(std::min(seconds, 1e9)))) {}

  bool passed() const { return Clock::now() >= end_; }
  double remaining() const {
    return std::max(0.0, std::chrono::duration<double>(end_ - Clock::now()).count());
  }
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  Clock::time_point start_;
  Clock::time_point end_;
};

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_RELABEL_DEADLINE_H_
