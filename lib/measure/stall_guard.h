// Ends a measurement that stops making progress: a partner that never
// answers would otherwise hang the whole job silently. A watchdog thread
// watches the current step; past the deadline it prints which rank waited
// for which and exits, and the launcher then ends the other ranks.
// Under SMPI (one process, simulated time) the simulator itself detects
// deadlocks, so no thread is started there.
#ifndef RANKSHAPE_LIB_MEASURE_STALL_GUARD_H_
#define RANKSHAPE_LIB_MEASURE_STALL_GUARD_H_

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace rankshape {

class StallGuard {
 public:
  /// Exit status of a run ended by the guard.
  static constexpr int kExitStatus = 3;

  /// seconds <= 0 disables the guard.
  StallGuard(int rank, double seconds);
  ~StallGuard();
  StallGuard(const StallGuard&) = delete;
  StallGuard& operator=(const StallGuard&) = delete;

  /// Starts timing a step, e.g. "waiting for rank 5 in round 7"; the
  /// message on a stall reads "measure: rank R: <step>: no answer ...".
  void arm(const std::string& step);
  void disarm();

 private:
  void watch();

  int rank_;
  double seconds_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::string step_;
  double armed_at_ = -1;  // steady-clock seconds, -1 = disarmed
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_MEASURE_STALL_GUARD_H_
