#include "lib/measure/pingpong.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "lib/measure/fit.h"
#include "lib/measure/schedule.h"
#include "lib/measure/stall_guard.h"

namespace rankshape {

Metric parse_metric(const std::string& name) {
  if (name == "latency") return Metric::kStartup;
  if (name == "inverse-bandwidth") return Metric::kInverseBandwidth;
  if (name == "time") return Metric::kMessageTime;
  throw std::invalid_argument("unknown metric '" + name +
                              "': expected latency, inverse-bandwidth or time");
}

std::string metric_name(Metric metric) {
  switch (metric) {
    case Metric::kStartup:
      return "latency";
    case Metric::kInverseBandwidth:
      return "inverse-bandwidth";
    case Metric::kMessageTime:
      return "time";
  }
  return "?";
}

void check_pingpong_options(const PingPongOptions& o) {
  std::vector<std::size_t> sorted = o.sizes;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  if (sorted.size() < 2) {
    throw std::invalid_argument("ping-pong needs at least two different message sizes");
  }
  if (o.repetitions < 1) throw std::invalid_argument("ping-pong needs at least one repetition");
  if (o.warmup < 0) throw std::invalid_argument("warm-up repetitions must be >= 0");
  if (o.sweeps < 1) throw std::invalid_argument("ping-pong needs at least one sweep");
  if (sorted.back() > (std::size_t{1} << 30)) {
    throw std::invalid_argument("message sizes are limited to 1 GiB");
  }
}

PingPongResult measure_pingpong(const mpi::Communicator& comm, const PingPongOptions& o) {
  check_pingpong_options(o);
  const int p = comm.size();
  const int me = comm.rank();
  const std::size_t largest = *std::max_element(o.sizes.begin(), o.sizes.end());
  std::vector<char> buffer(std::max<std::size_t>(largest, 1), 0);
  StallGuard guard(me, mpi::simulated() ? 0 : o.stall_seconds);

  const double started = MPI_Wtime();
  std::vector<double> sizes_d(o.sizes.begin(), o.sizes.end());
  const int total_rounds = o.sweeps * next_power_of_two(p);
  int rounds_done = 0;
  // The lower rank of a pair times it in every sweep, so each rank keeps
  // only its own row: startup, latency, g and r^2 for every higher partner,
  // per sweep. Rows meet once at the end (4p values per rank, not p^2).
  constexpr int kQuantities = 4;
  const auto row_size = static_cast<std::size_t>(kQuantities) * p;
  std::vector<double> mine(static_cast<std::size_t>(o.sweeps) * row_size, 0.0);
  const auto sweep = [&](int k, const PartnerSchedule& schedule, double* row) {
    for (int round = 0; round < schedule.rounds(); ++round) {
      const int partner = schedule.partner(me, round);
      if (partner != me) {
        const bool initiator = me < partner;
        guard.arm("waiting for rank " + std::to_string(partner) + " in ping-pong round " +
                  std::to_string(round));
        std::vector<double> per_size;
        for (std::size_t size : o.sizes) {
          const int count = static_cast<int>(size);
          std::vector<double> times;
          for (int rep = 0; rep < o.warmup + o.repetitions; ++rep) {
            if (initiator) {
              const double t0 = MPI_Wtime();
              mpi::check(MPI_Send(buffer.data(), count, MPI_BYTE, partner, round, comm.get()),
                         "MPI_Send");
              if (o.inject) o.inject({k, round, partner, rep});
              mpi::check(MPI_Recv(buffer.data(), count, MPI_BYTE, partner, round, comm.get(),
                                  MPI_STATUS_IGNORE),
                         "MPI_Recv");
              if (rep >= o.warmup) times.push_back((MPI_Wtime() - t0) / 2);
            } else {
              mpi::check(MPI_Recv(buffer.data(), count, MPI_BYTE, partner, round, comm.get(),
                                  MPI_STATUS_IGNORE),
                         "MPI_Recv");
              if (o.inject) o.inject({k, round, partner, rep});
              mpi::check(MPI_Send(buffer.data(), count, MPI_BYTE, partner, round, comm.get()),
                         "MPI_Send");
            }
          }
          if (initiator) per_size.push_back(median(without_outliers(times)));
        }
        if (initiator) {
          const LineFit f = fit_line(sizes_d, per_size);
          row[partner] = per_size[0];
          row[p + partner] = f.latency;
          row[2 * p + partner] = f.inverse_bandwidth;
          row[3 * p + partner] = f.r_squared;
        }
      }
      guard.arm("waiting at the barrier after round " + std::to_string(round));
      comm.barrier();
      guard.disarm();
      ++rounds_done;
      if (me == 0 && o.progress && rounds_done % std::max(1, total_rounds / 10) == 0) {
        const double elapsed = MPI_Wtime() - started;
        const double left = elapsed / rounds_done * (total_rounds - rounds_done);
        char line[160];
        std::snprintf(line, sizeof line,
                      "ping-pong round %d of %d, %.1f s so far, about %.1f s left", rounds_done,
                      total_rounds, elapsed, left);
        o.progress(line);
      }
    }
  };
  // Several sweeps, each with its own schedule, and the median per pair: a
  // rank that was slow during one sweep does not decide the result.
  for (int k = 0; k < o.sweeps; ++k) {
    sweep(k, PartnerSchedule::random(p, o.seed + static_cast<std::uint64_t>(k)),
          mine.data() + static_cast<std::size_t>(k) * row_size);
  }
  std::vector<double> row(row_size, 0.0), values(static_cast<std::size_t>(o.sweeps));
  for (std::size_t i = 0; i < row_size; ++i) {
    for (std::size_t k = 0; k < values.size(); ++k) values[k] = mine[k * row_size + i];
    row[i] = median(values);
  }

  PingPongResult r;
  r.p = p;
  const bool receives = o.result_on_every_rank || me == 0;
  const auto pp = static_cast<std::size_t>(p) * p;
  std::vector<double> rows(receives ? kQuantities * pp : 0);
  const int count = static_cast<int>(row_size);
  if (o.result_on_every_rank) {
    mpi::check(
        MPI_Allgather(row.data(), count, MPI_DOUBLE, rows.data(), count, MPI_DOUBLE, comm.get()),
        "MPI_Allgather");
  } else {
    mpi::check(
        MPI_Gather(row.data(), count, MPI_DOUBLE, rows.data(), count, MPI_DOUBLE, 0, comm.get()),
        "MPI_Gather");
  }
  r.seconds = MPI_Wtime() - started;
  if (!receives) return r;
  r.startup.assign(pp, 0);
  r.latency.assign(pp, 0);
  r.inverse_bandwidth.assign(pp, 0);
  double r2_sum = 0;
  int pairs = 0;
  for (int a = 0; a < p; ++a) {
    const double* of_a = rows.data() + static_cast<std::size_t>(a) * row_size;
    for (int b = a + 1; b < p; ++b) {
      const std::size_t ab = static_cast<std::size_t>(a) * p + b;
      const std::size_t ba = static_cast<std::size_t>(b) * p + a;
      r.startup[ab] = r.startup[ba] = of_a[b];
      r.latency[ab] = r.latency[ba] = of_a[p + b];
      r.inverse_bandwidth[ab] = r.inverse_bandwidth[ba] = of_a[2 * p + b];
      const double r2 = of_a[3 * p + b];
      r.worst_r_squared = pairs == 0 ? r2 : std::min(r.worst_r_squared, r2);
      r2_sum += r2;
      ++pairs;
    }
  }
  r.mean_r_squared = pairs ? r2_sum / pairs : 1;
  return r;
}

DenseCosts costs_from(const PingPongResult& r, Metric metric, double message_bytes) {
  return DenseCosts(r.p, metric_matrix(r, metric, message_bytes));
}

std::vector<double> metric_matrix(const PingPongResult& r, Metric metric, double message_bytes) {
  std::vector<double> m(static_cast<std::size_t>(r.p) * r.p, 0.0);
  for (std::size_t i = 0; i < m.size(); ++i) {
    double v = 0;
    switch (metric) {
      case Metric::kStartup:
        v = r.startup[i];
        break;
      case Metric::kInverseBandwidth:
        v = r.inverse_bandwidth[i];
        break;
      case Metric::kMessageTime:
        v = r.latency[i] + r.inverse_bandwidth[i] * message_bytes;
        break;
    }
    m[i] = std::max(0.0, v);
  }
  return m;
}

}  // namespace rankshape
