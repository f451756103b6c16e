#include "lib/measure/stall_guard.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace rankshape {
namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

StallGuard::StallGuard(int rank, double seconds) : rank_(rank), seconds_(seconds) {
  if (seconds_ > 0) thread_ = std::thread([this] { watch(); });
}

StallGuard::~StallGuard() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StallGuard::arm(const std::string& step) {
  if (seconds_ <= 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  step_ = step;
  armed_at_ = now();
}

void StallGuard::disarm() {
  if (seconds_ <= 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  armed_at_ = -1;
}

void StallGuard::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::milliseconds(100));
    if (armed_at_ >= 0 && now() - armed_at_ > seconds_) {
      std::fprintf(stderr,
                   "measure: rank %d: %s: no answer after %.0f s; ending the run (exit %d)\n",
                   rank_, step_.c_str(), seconds_, kExitStatus);
      std::fflush(stderr);
      std::_Exit(kExitStatus);
    }
  }
}

}  // namespace rankshape
