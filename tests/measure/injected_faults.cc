// Measurement with injected faults recovers the same structure: run by
// injected_faults_test.sh under SMPI on a planted cluster, where time is
// simulated and a clean measurement is exact.
//
// Faults: one slow rank (every reply delayed during the first of three
// sweeps, as a rank that lost its core for a while) and one noisy link
// (two of five timed round trips of one pair delayed, in every sweep); then,
// in a run of their own, scheduler quanta: every rank loses its CPU for
// 4 ms in 5% of its round trips, at random; and in a third, a slow phase
// of the whole host's shared memory (as when a hypervisor moves a virtual
// machine's CPUs apart, rescale.h): from the middle of the only sweep on,
// and through every pass that measures pairs again, every round trip
// inside a host takes longer. The robust measurement (the
// least of repetitions and sweeps, suspect pairs measured again) must stay
// within 10% of the clean one on every pair; a naive one (one repetition,
// one sweep, nothing measured again) under the same faults must not, which
// shows the faults bite. Exits 1 on failure; rank 0 prints what it found.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

#include "lib/measure/hierarchy.h"
#include "lib/measure/pingpong.h"
#include "lib/util/random.h"

namespace rankshape {
namespace {

constexpr int kSlowRank = 5;
constexpr int kNoisyA = 2, kNoisyB = 9;
constexpr double kSlowDelay = 30e-6;    // s, per reply of the slow rank
constexpr double kNoisyDelay = 100e-6;  // s, per delayed round trip
constexpr double kQuantum = 4e-3;       // s, a scheduler time slice
constexpr double kQuantumShare = 0.05;  // of each rank's round trips
constexpr double kPhaseDelay = 20e-6;   // s, per round trip inside a host when slow
constexpr int kPhaseRound = 16;         // of the 32 rounds of a sweep of 32 ranks

// Busy waits in MPI time, so that SMPI advances simulated time as well.
void spin(double seconds) {
  const double start = MPI_Wtime();
  while (MPI_Wtime() - start < seconds) {
  }
}

// Repetition 0 is the warm-up: timed repetitions 1 and 3 of the noisy
// link are delayed (two of five, or the only one of a naive run).
void inject_faults(int me, const PingPongOptions::Step& s) {
  if (me == kSlowRank && s.sweep == 0) spin(kSlowDelay);
  if (me == kNoisyB && s.partner == kNoisyA && (s.repetition == 1 || s.repetition == 3)) {
    spin(kNoisyDelay);
  }
}

// Loses the CPU for a while: under SMPI a simulated sleep (spinning on
// MPI_Wtime for milliseconds takes minutes of real time there).
void deschedule(double seconds) {
#ifdef RANKSHAPE_SMPI
  smpi_usleep(static_cast<useconds_t>(seconds * 1e6));
#else
  spin(seconds);
#endif
}

// A rank descheduled for a quantum now and then (the same draws in every
// run: the generator is seeded by rank).
std::function<void(const PingPongOptions::Step&)> quanta(int me) {
  auto rng = std::make_shared<SplitMix64>(1000 + static_cast<std::uint64_t>(me));
  return [rng](const PingPongOptions::Step&) {
    if (static_cast<double>(rng->below(1000000)) < kQuantumShare * 1e6) deschedule(kQuantum);
  };
}

// The slow phase: from round kPhaseRound of sweep 0 on, and in every later
// sweep (the passes that measure again count as sweeps 1, 2, ...), the
// responder of a pair inside one host replies late.
std::function<void(const PingPongOptions::Step&)> slow_phase(int me,
                                                             const std::vector<int>& node_of) {
  return [me, node_of](const PingPongOptions::Step& s) {
    const bool slow = s.sweep > 0 || s.round >= kPhaseRound;
    if (slow && me > s.partner && node_of[me] == node_of[s.partner]) spin(kPhaseDelay);
  };
}

double relative_difference(const PingPongResult& clean, const PingPongResult& other, int a, int b) {
  const std::size_t i = static_cast<std::size_t>(a) * clean.p + b;
  return std::abs(other.startup[i] - clean.startup[i]) / clean.startup[i];
}

// Largest relative difference over pairs (a, b) that `among` accepts.
template <typename Among>
double deviation(const PingPongResult& clean, const PingPongResult& other, Among among) {
  double worst = 0;
  for (int a = 0; a < clean.p; ++a) {
    for (int b = a + 1; b < clean.p; ++b) {
      if (among(a, b)) worst = std::max(worst, relative_difference(clean, other, a, b));
    }
  }
  return worst;
}

// One fault's verdict, with a FAIL line when it does not hold: the robust
// measurement stays within 10% of the clean one, and consistent; the naive
// one is off by half or more, which shows the fault bites.
bool bites_but_holds(const char* fault, double robust_worst, bool consistent, double naive_worst) {
  if (robust_worst > 0.10 || !consistent) {
    std::printf("FAIL: %s changed the robust measurement\n", fault);
    return false;
  }
  if (naive_worst < 0.5) {
    std::printf("FAIL: %s did not disturb a naive measurement\n", fault);
    return false;
  }
  return true;
}

int run() {
  const mpi::Communicator world(MPI_COMM_WORLD, mpi::Ownership::kBorrow);
  const int me = world.rank();
  if (world.size() <= std::max({kSlowRank, kNoisyA, kNoisyB})) {
    if (me == 0) std::fprintf(stderr, "injected_faults: needs at least 10 ranks\n");
    return 2;
  }
  PingPongOptions robust;
  robust.sizes = {8, 1024};
  robust.repetitions = 5;
  robust.warmup = 1;
  robust.sweeps = 3;
  robust.result_on_every_rank = false;
  PingPongOptions naive = robust;
  naive.repetitions = 1;
  naive.sweeps = 1;

  const PingPongResult clean = measure_pingpong(world, robust);
  robust.inject = naive.inject = [me](const PingPongOptions::Step& s) { inject_faults(me, s); };
  const PingPongResult faulty = measure_pingpong(world, robust);
  naive.retries = 0;
  const PingPongResult naive_faulty = measure_pingpong(world, naive);
  robust.inject = quanta(me);
  const PingPongResult descheduled = measure_pingpong(world, robust);
  naive.inject = quanta(me);
  const PingPongResult naive_descheduled = measure_pingpong(world, naive);
  // The slow phase needs the nodes, for the references of the pairs
  // measured again, and one sweep, so that half the pairs are timed only
  // while slow.
  PingPongOptions phased = robust;
  phased.sweeps = 1;
  phased.node_of = gather_layout(world).node_of;
  const PingPongResult phased_clean = measure_pingpong(world, phased);
  phased.inject = slow_phase(me, phased.node_of);
  const PingPongResult phased_slow = measure_pingpong(world, phased);
  phased.retries = 0;
  const PingPongResult naive_phased = measure_pingpong(world, phased);
  if (me != 0) return 0;
  const auto any = [](int, int) { return true; };
  const auto slow = [](int a, int b) { return a == kSlowRank || b == kSlowRank; };
  const auto noisy = [](int a, int b) { return a == kNoisyA && b == kNoisyB; };
  const double robust_worst = deviation(clean, faulty, any);
  const double naive_slow = deviation(clean, naive_faulty, slow);
  const double naive_noisy = deviation(clean, naive_faulty, noisy);
  std::printf("robust measurement under faults: worst relative deviation %.4f\n", robust_worst);
  std::printf("naive measurement: slow rank's pairs off by up to %.2f, noisy link by %.2f\n",
              naive_slow, naive_noisy);
  const double quanta_worst = deviation(clean, descheduled, any);
  const double naive_quanta = deviation(clean, naive_descheduled, any);
  std::printf(
      "scheduler quanta: robust worst relative deviation %.4f (%d suspect pairs, %d measured "
      "again, %zu left), naive %.2f\n",
      quanta_worst, descheduled.suspects, descheduled.remeasured, descheduled.inconsistent.size(),
      naive_quanta);
  const double phase_worst = deviation(phased_clean, phased_slow, any);
  const double naive_phase = deviation(phased_clean, naive_phased, any);
  std::printf(
      "slow phase: robust worst relative deviation %.4f (%d measured again, %d rescaled, %zu "
      "inconsistent), naive %.2f\n",
      phase_worst, phased_slow.remeasured, phased_slow.rescaled, phased_slow.inconsistent.size(),
      naive_phase);
  const bool held =
      bites_but_holds("a slow phase of the host", phase_worst, phased_slow.consistent(),
                      naive_phase) &&
      bites_but_holds("scheduler quanta", quanta_worst, descheduled.consistent(), naive_quanta) &&
      bites_but_holds("the faults", robust_worst, true, std::min(naive_slow, naive_noisy));
  if (!held) return 1;
  std::printf(
      "ok: structure unchanged under a slow rank, a noisy link, scheduler quanta and a slow "
      "phase\n");
  return 0;
}

}  // namespace
}  // namespace rankshape

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 1;
  try {
    status = rankshape::run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "injected_faults: %s\n", e.what());
  }
  // Every rank reports; the worst status wins.
  int worst = status;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
