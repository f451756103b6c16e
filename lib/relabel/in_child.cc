#include "lib/relabel/in_child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "lib/relabel/deadline.h"

namespace rankshape {
namespace {

// The child's answer: one tag byte, then the payload until end of file.
constexpr char kResult = 'R';
constexpr char kInvalid = 'I';
constexpr char kError = 'E';

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

[[noreturn]] void answer_and_exit(int fd, char tag, const std::string& payload) {
  const bool ok = write_all(fd, &tag, 1) && write_all(fd, payload.data(), payload.size());
  _exit(ok ? 0 : 1);
}

[[noreturn]] void child(int fd, const std::function<std::string()>& work) {
  try {
    answer_and_exit(fd, kResult, work());
  } catch (const std::invalid_argument& e) {
    answer_and_exit(fd, kInvalid, e.what());
  } catch (const std::exception& e) {
    answer_and_exit(fd, kError, e.what());
  } catch (...) {
    answer_and_exit(fd, kError, "unknown exception");
  }
}

// Waits for the child; returns its status and records its peak memory.
// A status no child gives: the child was reaped by someone else (the
// program ignores SIGCHLD or waits for every child itself).
constexpr int kNotReaped = -1;

int reap(pid_t pid, ChildRun& run) {
  int status = 0;
  rusage usage{};
  pid_t got;
  while ((got = wait4(pid, &status, 0, &usage)) < 0 && errno == EINTR) {
  }
  if (got != pid) return kNotReaped;
  run.peak_rss_bytes = static_cast<std::size_t>(usage.ru_maxrss) * 1024;  // ru_maxrss is in KiB
  return status;
}

std::string describe(int status) {
  if (status == kNotReaped) return "was reaped elsewhere";
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended abnormally";
}

}  // namespace

ChildRun run_in_child(const std::function<std::string()>& work, double seconds) {
  ChildRun run;
  if (!(seconds > 0)) return run;
  const Deadline deadline(seconds);
  int fds[2];
  const pid_t pid = pipe2(fds, O_CLOEXEC) == 0 ? fork() : -2;
  if (pid < 0) {
    if (pid == -1) {
      close(fds[0]);
      close(fds[1]);
    }
    run.ran_here = true;
    run.answer = work();
    return run;
  }
  if (pid == 0) {
    close(fds[0]);
    // Die with the parent (a rank killed by MPI_Abort or the launcher)
    // instead of computing on for nobody; the parent may be gone already.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) _exit(1);
    child(fds[1], work);
  }
  close(fds[1]);
  // Read while the child writes (answers can exceed the pipe's buffer),
  // until end of file or the deadline.
  std::string answer;
  bool timed_out = false;
  std::vector<char> buffer(1 << 16);  // on the heap: SMPI ranks have small stacks
  for (;;) {
    if (deadline.passed()) {
      timed_out = true;
      break;
    }
    // Rounded up, so that a last fraction of a millisecond is not a busy loop.
    const double left_ms = std::ceil(deadline.remaining() * 1000);
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min(left_ms, double{1 << 30})));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {
      const int e = errno;
      kill(pid, SIGKILL);
      reap(pid, run);
      close(fds[0]);
      throw std::runtime_error(std::string("waiting for the child process: ") + std::strerror(e));
    }
    if (ready == 0) continue;  // the loop's top sees the deadline
    const ssize_t n = read(fds[0], buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of file (or an error: judged by the exit status)
    answer.append(buffer.data(), static_cast<std::size_t>(n));
  }
  close(fds[0]);
  if (timed_out) {
    kill(pid, SIGKILL);
    reap(pid, run);
    return run;
  }
  const int status = reap(pid, run);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || answer.empty()) {
    throw std::runtime_error("the child process computing it " + describe(status) +
                             " without an answer");
  }
  std::string payload = answer.substr(1);
  switch (answer[0]) {
    case kResult:
      run.answer = std::move(payload);
      return run;
    case kInvalid:
      throw std::invalid_argument(payload);
    default:
      throw std::runtime_error(payload);
  }
}

}  // namespace rankshape
