// Does this machine change speed as a whole for seconds at a time? Two
// threads pinned to two CPUs pass a turn back and forth through one shared
// word; every --interval seconds the first times --round-trips of them. The
// series shows the machine's fast and slow phases and how long each lasts
// (bench/phases.h), the figures docs/measure.md ("Rescale") quotes for CI's
// virtual machine:
//   bazel run -c opt //bench:slow_phases -- [--seconds 240] [--out FILE.csv]
// Prints a summary and, with --out, every sample (seconds since the start,
// microseconds per round trip). Needs two CPUs to run on.
#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "bench/phases.h"
#include "lib/io/atomic_file.h"

namespace rankshape {
namespace {

using Clock = std::chrono::steady_clock;

// The two CPUs to pin to: the ones asked for, or the first two this process
// may run on.
std::vector<int> pick_cpus(std::vector<int> asked) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) != 0)
    throw std::runtime_error("cannot read this process's CPUs (sched_getaffinity)");
  if (asked.empty()) {
    for (int cpu = 0; cpu < CPU_SETSIZE && asked.size() < 2; ++cpu)
      if (CPU_ISSET(cpu, &mine)) asked.push_back(cpu);
    if (asked.size() < 2)
      throw std::runtime_error("this process may run on one CPU only; the probe needs two");
  }
  if (asked.size() != 2 || asked[0] == asked[1])
    throw std::runtime_error("--cpus needs two different CPUs");
  for (int cpu : asked)
    if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &mine))
      throw std::runtime_error(fmt::format("CPU {} is not one this process may run on", cpu));
  return asked;
}

void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (int err = pthread_setaffinity_np(pthread_self(), sizeof set, &set); err != 0)
    throw std::runtime_error(fmt::format("cannot pin a thread to CPU {} (error {})", cpu, err));
}

// The turn: odd while the answering thread owes a reply, even after it.
// kStop tells it to end.
constexpr std::uint64_t kStop = ~std::uint64_t{0};

struct Probe {
  double seconds = 240;
  double interval = 0.1;
  int round_trips = 20000;
  std::vector<int> cpus;
};

// Seconds since the start and microseconds per round trip, one per interval.
std::vector<std::pair<double, double>> sample(const Probe& p) {
  std::atomic<std::uint64_t> turn{0};
  std::atomic<int> pinned{0};  // 1 once the answering thread is pinned, -1 if it failed
  std::exception_ptr answer_error;
  std::thread answer([&] {
    try {
      pin_to(p.cpus[1]);
      pinned.store(1);
    } catch (...) {
      answer_error = std::current_exception();
      pinned.store(-1);
      return;
    }
    for (;;) {
      std::uint64_t t = turn.load(std::memory_order_acquire);
      if (t == kStop) return;
      if (t % 2 == 1) turn.store(t + 1, std::memory_order_release);
    }
  });
  while (pinned.load() == 0) std::this_thread::yield();
  if (pinned.load() < 0) {
    answer.join();
    std::rethrow_exception(answer_error);
  }
  std::vector<std::pair<double, double>> out;
  try {
    pin_to(p.cpus[0]);
    const Clock::time_point start = Clock::now();
    const auto step = std::chrono::duration<double>(p.interval);
    std::uint64_t t = 0;
    for (int i = 0; Clock::now() - start < std::chrono::duration<double>(p.seconds); ++i) {
      const Clock::time_point begin = Clock::now();
      for (int k = 0; k < p.round_trips; ++k) {
        turn.store(++t, std::memory_order_release);
        ++t;
        while (turn.load(std::memory_order_acquire) != t) {
        }
      }
      const std::chrono::duration<double> took = Clock::now() - begin;
      out.emplace_back(std::chrono::duration<double>(begin - start).count(),
                       took.count() / p.round_trips * 1e6);
      std::this_thread::sleep_until(start +
                                    std::chrono::duration_cast<Clock::duration>(step * (i + 1)));
    }
  } catch (...) {
    turn.store(kStop);
    answer.join();
    throw;
  }
  turn.store(kStop);
  answer.join();
  return out;
}

int run(int argc, char** argv) {
  Probe p;
  std::string out_path;
  double slow_ratio = 2;
  CLI::App app{
      "Times round trips between two CPUs through shared memory at a fixed interval "
      "and reports the machine's fast and slow phases."};
  app.add_option("--seconds", p.seconds, "how long to sample")->check(CLI::PositiveNumber);
  app.add_option("--interval", p.interval, "seconds between samples")->check(CLI::PositiveNumber);
  app.add_option("--round-trips", p.round_trips, "round trips timed per sample")
      ->check(CLI::PositiveNumber);
  app.add_option("--cpus", p.cpus, "the two CPUs (default: the first two this process may use)")
      ->delimiter(',');
  app.add_option("--slow-ratio", slow_ratio,
                 "a sample is slow above this many times the 10th percentile")
      ->check(CLI::Range(1.0001, 1e9));
  app.add_option("--out", out_path, "CSV of every sample: seconds,us_per_round_trip");
  CLI11_PARSE(app, argc, argv);
  try {
    p.cpus = pick_cpus(p.cpus);
    const auto samples = sample(p);
    std::vector<double> us;
    for (const auto& s : samples) us.push_back(s.second);
    const PhaseSummary sum = split_phases(us, slow_ratio);
    if (!out_path.empty())
      write_file_atomically(out_path, [&](std::ostream& os) {
        os << "seconds,us_per_round_trip\n";
        for (const auto& [at, t] : samples) os << fmt::format("{:.3f},{:.5f}\n", at, t);
      });
    std::cout << fmt::format(
        "CPUs {} and {}: {} samples of {} round trips, {} s apart\n"
        "fast: median {:.3f} us per round trip (10th percentile {:.3f}); slow above {:.3f}\n",
        p.cpus[0], p.cpus[1], us.size(), p.round_trips, p.interval, sum.fast_median,
        sum.fast_reference, sum.threshold);
    std::vector<std::string> fast_lengths, slow_lengths;
    for (const Phase& ph : sum.phases)
      (ph.slow ? slow_lengths : fast_lengths)
          .push_back(fmt::format("{:.1f}", ph.samples * p.interval));
    if (slow_lengths.empty()) {
      std::cout << "no slow phase\n";
    } else {
      std::cout << fmt::format("slow: median {:.3f} us ({:.1f}x); {} slow phases lasting {} s\n",
                               sum.slow_median, sum.slow_median / sum.fast_median,
                               slow_lengths.size(), fmt::join(slow_lengths, ", "));
    }
    std::cout << fmt::format("{} fast phases lasting {} s\n", fast_lengths.size(),
                             fmt::join(fast_lengths, ", "));
  } catch (const std::exception& e) {
    std::cerr << "slow_phases: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace rankshape

int main(int argc, char** argv) { return rankshape::run(argc, argv); }
