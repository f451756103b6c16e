#include "lib/coll/calibrate.h"

#include <algorithm>
#include <vector>

#include "lib/coll/pipeline.h"
#include "lib/mpi/error.h"

namespace rankshape::coll {
namespace {

using mpi::check;

// Round trips of three sizes: latency from the small one, bandwidth from
// the two large ones, and the latency messages of kLargeMessageBytes and
// more pay (model.h) from the first of those.
constexpr int kSmall = 8, kLarge = 64 << 10, kHuge = 256 << 10, kRepetitions = 5;
static_assert(kLarge >= kLargeMessageBytes);

// Median round-trip seconds of `bytes` between ranks 0 and 1 of comm (the
// other ranks return 0).
double round_trip(MPI_Comm comm, int rank, int partner, int bytes) {
  std::vector<char> buffer(static_cast<std::size_t>(bytes));
  std::vector<double> times;
  for (int i = 0; i <= kRepetitions; ++i) {  // the first is a warm-up
    const double start = MPI_Wtime();
    if (rank == 0) {
      check(MPI_Send(buffer.data(), bytes, MPI_BYTE, partner, 0, comm), "MPI_Send");
      check(MPI_Recv(buffer.data(), bytes, MPI_BYTE, partner, 0, comm, MPI_STATUS_IGNORE),
            "MPI_Recv");
    } else {
      check(MPI_Recv(buffer.data(), bytes, MPI_BYTE, 0, 0, comm, MPI_STATUS_IGNORE), "MPI_Recv");
      check(MPI_Send(buffer.data(), bytes, MPI_BYTE, 0, 0, comm), "MPI_Send");
    }
    if (i > 0) times.push_back(MPI_Wtime() - start);
  }
  std::nth_element(times.begin(), times.begin() + kRepetitions / 2, times.end());
  return times[kRepetitions / 2];
}

// Median seconds for every member of comm to send `bytes` to the member
// n / 2 ranks further on (cyclically) while receiving from the one as far
// back: all links of the level busy at once.
double shift(MPI_Comm comm, int bytes) {
  int n = 0, rank = 0;
  check(MPI_Comm_size(comm, &n), "MPI_Comm_size");
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  const int to = (rank + n / 2) % n, from = (rank + n - n / 2) % n;
  std::vector<char> out(static_cast<std::size_t>(bytes)), in(out.size());
  std::vector<double> times;
  for (int i = 0; i <= kRepetitions; ++i) {
    check(MPI_Barrier(comm), "MPI_Barrier");
    const double start = MPI_Wtime();
    check(MPI_Sendrecv(out.data(), bytes, MPI_BYTE, to, 1, in.data(), bytes, MPI_BYTE, from, 1,
                       comm, MPI_STATUS_IGNORE),
          "MPI_Sendrecv");
    if (i > 0) times.push_back(MPI_Wtime() - start);
  }
  std::nth_element(times.begin(), times.begin() + kRepetitions / 2, times.end());
  return times[kRepetitions / 2];
}

// Seconds per byte of MPI_SUM over doubles, the fastest of a few runs.
double reduce_speed() {
  constexpr int kCount = kLarge / 8;
  std::vector<double> a(kCount, 1.0), b(kCount, 2.0);
  double best = 1e30;
  for (int i = 0; i < 3; ++i) {
    const double start = MPI_Wtime();
    check(MPI_Reduce_local(a.data(), b.data(), kCount, MPI_DOUBLE, MPI_SUM), "MPI_Reduce_local");
    best = std::min(best, MPI_Wtime() - start);
  }
  return best / kLarge;
}

}  // namespace

std::vector<int> level_sizes(const Hierarchy& h) {
  std::vector<int> sizes(static_cast<std::size_t>(h.depth() + 1), 1);
  for (int j = 0; j <= h.depth(); ++j) {
    for (int r = 0; r < h.size(); ++r) {
      sizes[static_cast<std::size_t>(j)] =
          std::max(sizes[static_cast<std::size_t>(j)], h.rank_in_level(r, j) + 1);
    }
  }
  return sizes;
}

Model calibrate(const Hierarchy& h) {
  const int levels = h.depth() + 1;
  // alpha_j, beta_j, loaded beta_j and alpha_j of large messages for every
  // level, then gamma: maxima over all ranks.
  std::vector<double> fitted(static_cast<std::size_t>(4 * levels + 1), 0.0);
  const auto at = [&fitted](int j, int k) -> double& {
    return fitted[static_cast<std::size_t>(4 * j + k)];
  };
  for (int j = 0; j < levels; ++j) {
    check(MPI_Barrier(h.comm()), "MPI_Barrier");  // one level at a time
    const mpi::Communicator* level = h.level(j);
    if (!level || level->size() < 2) continue;
    // Every level j communicator at once, as in a hierarchical collective.
    const double loaded_small = shift(level->get(), kSmall);
    const double loaded_large = shift(level->get(), kLarge);
    // Two members alone; the others get the jump in latency from them.
    double jump = 0;
    if (level->rank() == 0 || level->rank() == level->size() - 1) {
      const int partner = level->rank() == 0 ? level->size() - 1 : 0;
      const int me = level->rank() == 0 ? 0 : 1;
      const double small = round_trip(level->get(), me, partner, kSmall) / 2;
      const double large = round_trip(level->get(), me, partner, kLarge) / 2;
      const double huge = round_trip(level->get(), me, partner, kHuge) / 2;
      const double beta = std::max(0.0, (huge - large) / (kHuge - kLarge));
      at(j, 0) = std::max(0.0, small - kSmall * beta);
      at(j, 1) = beta;
      at(j, 3) = std::max(at(j, 0), large - kLarge * beta);
      jump = at(j, 3) - at(j, 0);
    }
    check(MPI_Bcast(&jump, 1, MPI_DOUBLE, 0, level->get()), "MPI_Bcast");
    // The loaded bandwidth from a small and a large message, less the jump.
    at(j, 2) = std::max(0.0, (loaded_large - loaded_small - jump) / (kLarge - kSmall));
  }
  fitted.back() = reduce_speed();
  check(MPI_Allreduce(MPI_IN_PLACE, fitted.data(), static_cast<int>(fitted.size()), MPI_DOUBLE,
                      MPI_MAX, h.comm()),
        "MPI_Allreduce");
  Model model;
  model.sizes = level_sizes(h);
  for (int j = 0; j < levels; ++j) model.links.push_back({at(j, 0), at(j, 1), at(j, 2), at(j, 3)});
  model.gamma = fitted.back();
  model.ranks = h.size();
  model.contiguous = h.ordered();
  model.pipelines = can_pipeline();
  return model;
}

}  // namespace rankshape::coll
