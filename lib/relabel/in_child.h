// Runs a computation that cannot stop by itself (one long library call, such
// as Scotch's mapping) in a forked child process, and kills it at the
// deadline so that the caller's time budget holds.
#ifndef RANKSHAPE_LIB_RELABEL_IN_CHILD_H_
#define RANKSHAPE_LIB_RELABEL_IN_CHILD_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace rankshape {

struct ChildRun {
  /// The bytes work() returned; nothing when the time ran out first.
  std::optional<std::string> answer;
  /// No child could be made (fork failed): work() ran in this process,
  /// with no time limit.
  bool ran_here = false;
  /// The child's highest resident memory, pages shared with this process
  /// included (0 without a child).
  std::size_t peak_rss_bytes = 0;
};

/// Calls work() in a child process and returns what it returned, unless
/// `seconds` run out first: the child is then killed and reaped. An
/// exception thrown by work() is thrown again here, as std::invalid_argument
/// or std::runtime_error with the same message; a child that dies without
/// answering (a crash, the OOM killer) gives std::runtime_error.
///
/// work() runs in a copy of this process with only the calling thread: it
/// must not use MPI or wait for another thread, and in a process with
/// other threads (an MPI rank's progress threads) it relies on glibc's
/// fork handling of malloc's locks. The child dies with its parent, and
/// leaves through _exit, so no destructor, atexit handler or stdio flush
/// of the parent's runs twice.
ChildRun run_in_child(const std::function<std::string()>& work, double seconds);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_RELABEL_IN_CHILD_H_
