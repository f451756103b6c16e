#include "lib/measure/bsp.h"

#include <algorithm>
#include <stdexcept>

#include "lib/measure/fit.h"

namespace rankshape {

double daxpy_rate(std::size_t n, int reps) {
  if (n == 0 || reps < 1) throw std::invalid_argument("daxpy_rate: n and reps must be positive");
  std::vector<double> x(n, 1.0), y(n, 2.0);
  const double a = 1.0000001;
  std::vector<double> rates;
  for (int rep = 0; rep < reps; ++rep) {
    const double t0 = MPI_Wtime();
    for (std::size_t i = 0; i < n; ++i) y[i] += a * x[i];
    const double t = MPI_Wtime() - t0;
    if (t > 0) rates.push_back(2.0 * static_cast<double>(n) / t);
  }
  // y feeds the result so the loop cannot be optimised away.
  volatile double sink = y[n / 2];
  (void)sink;
  return rates.empty() ? 0 : median(rates);
}

BspParameters measure_bsp(const mpi::Communicator& comm, const std::vector<std::size_t>& words,
                          int reps) {
  if (reps < 1) throw std::invalid_argument("BSP needs at least one repetition");
  const int p = comm.size();
  BspParameters b;
  double rate = daxpy_rate(1 << 15, 9);
  mpi::check(MPI_Allreduce(MPI_IN_PLACE, &rate, 1, MPI_DOUBLE, MPI_MIN, comm.get()),
             "MPI_Allreduce");
  b.r = rate;
  if (p == 1) return b;
  std::vector<std::size_t> hs;
  for (std::size_t h : words) {
    const std::size_t per = std::max<std::size_t>(1, (h + p - 2) / (p - 1));
    hs.push_back(per * (p - 1));
  }
  std::sort(hs.begin(), hs.end());
  hs.erase(std::unique(hs.begin(), hs.end()), hs.end());
  if (hs.size() < 2) throw std::invalid_argument("BSP needs at least two different h values");
  std::vector<double> hd, times;
  for (std::size_t h : hs) {
    const int per = static_cast<int>(h / (p - 1));
    // Alltoall with nothing to itself: every rank sends and receives h words.
    std::vector<int> counts(p, per), displs(p, 0);
    counts[comm.rank()] = 0;
    for (int i = 1; i < p; ++i) displs[i] = displs[i - 1] + counts[i - 1];
    std::vector<double> send(h + 1, 1.0), recv(h + 1, 0.0);
    std::vector<double> samples;
    for (int rep = 0; rep < reps + 1; ++rep) {
      comm.barrier();
      const double t0 = MPI_Wtime();
      mpi::check(MPI_Alltoallv(send.data(), counts.data(), displs.data(), MPI_DOUBLE, recv.data(),
                               counts.data(), displs.data(), MPI_DOUBLE, comm.get()),
                 "MPI_Alltoallv");
      comm.barrier();
      if (rep > 0) samples.push_back(MPI_Wtime() - t0);  // the first is a warm-up
    }
    double t = median(samples);
    mpi::check(MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm.get()),
               "MPI_Allreduce");
    hd.push_back(static_cast<double>(h));
    times.push_back(t);
  }
  const LineFit f = fit_line(hd, times);
  b.g = std::max(0.0, f.inverse_bandwidth);
  b.l = std::max(0.0, f.latency);
  b.r_squared = f.r_squared;
  return b;
}

}  // namespace rankshape
