#include "lib/measure/pingpong.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <limits>
#include <stdexcept>

#include "lib/measure/consistency.h"
#include "lib/measure/fit.h"
#include "lib/measure/host_load.h"
#include "lib/measure/rescale.h"
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
  if (o.retries < 0) throw std::invalid_argument("ping-pong retries must be >= 0");
  if (sorted.back() > (std::size_t{1} << 30)) {
    throw std::invalid_argument("message sizes are limited to 1 GiB");
  }
}

namespace {

// Rank 0's p x p matrix per size from every rank's row of minima
// (row[partner * sizes + s], filled where rank < partner).
std::vector<std::vector<double>> gather_times(const mpi::Communicator& comm,
                                              const std::vector<double>& row, int sizes) {
  const int p = comm.size();
  const bool root = comm.rank() == 0;
  std::vector<double> rows(root ? row.size() * p : 0);
  mpi::check(MPI_Gather(row.data(), static_cast<int>(row.size()), MPI_DOUBLE, rows.data(),
                        static_cast<int>(row.size()), MPI_DOUBLE, 0, comm.get()),
             "MPI_Gather");
  std::vector<std::vector<double>> times;
  if (!root) return times;
  const auto pp = static_cast<std::size_t>(p) * p;
  times.assign(static_cast<std::size_t>(sizes), std::vector<double>(pp, 0));
  for (int a = 0; a < p; ++a) {
    for (int b = a + 1; b < p; ++b) {
      for (int s = 0; s < sizes; ++s) {
        const double t = rows[(static_cast<std::size_t>(a) * p + b) * sizes + s];
        times[s][static_cast<std::size_t>(a) * p + b] = t;
        times[s][static_cast<std::size_t>(b) * p + a] = t;
      }
    }
  }
  return times;
}

// Every size's check on rank 0: the union of the suspect (and of the
// overlapping) pairs; inverted when any size is.
ConsistencyCheck check_all_sizes(const std::vector<std::vector<double>>& times, int p,
                                 const std::vector<int>& node_of) {
  ConsistencyCheck all;
  for (const auto& m : times) {
    ConsistencyCheck c = check_consistency(m, p, node_of);
    all.suspects.insert(all.suspects.end(), c.suspects.begin(), c.suspects.end());
    all.overlap.insert(all.overlap.end(), c.overlap.begin(), c.overlap.end());
    all.inverted |= c.inverted;
  }
  for (auto* v : {&all.suspects, &all.overlap}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  return all;
}

void bcast_pairs(const mpi::Communicator& comm, std::vector<std::pair<int, int>>& pairs) {
  std::vector<int> flat;
  for (const auto& [a, b] : pairs) {
    flat.push_back(a);
    flat.push_back(b);
  }
  int n = static_cast<int>(flat.size());
  mpi::check(MPI_Bcast(&n, 1, MPI_INT, 0, comm.get()), "MPI_Bcast");
  flat.resize(static_cast<std::size_t>(n));
  if (n > 0) mpi::check(MPI_Bcast(flat.data(), n, MPI_INT, 0, comm.get()), "MPI_Bcast");
  pairs.clear();
  for (int i = 0; i + 1 < n; i += 2) pairs.emplace_back(flat[i], flat[i + 1]);
}

}  // namespace

Pacing parse_pacing(const std::string& name) {
  if (name == "auto") return Pacing::kAuto;
  if (name == "all") return Pacing::kAllPairs;
  if (name == "capped") return Pacing::kCapped;
  throw std::invalid_argument("unknown pacing '" + name + "': expected auto, all or capped");
}

std::string PingPongResult::warning() const {
  std::string out;
  if (inverted) out = "pairs inside a node are not cheaper than pairs across nodes";
  if (!inconsistent.empty()) {
    if (!out.empty()) out += "; ";
    out += std::to_string(inconsistent.size()) + " of " + std::to_string(p * (p - 1) / 2) +
           " pairs break the structure" +
           (remeasured > 0 ? std::string(" after being measured again") : std::string()) + " (";
    for (std::size_t i = 0; i < inconsistent.size() && i < 5; ++i) {
      out += (i ? ", " : "") + std::to_string(inconsistent[i].first) + "-" +
             std::to_string(inconsistent[i].second);
    }
    out += inconsistent.size() > 5 ? ", ...)" : ")";
  }
  return out;
}

PingPongResult measure_pingpong(const mpi::Communicator& comm, const PingPongOptions& o) {
  check_pingpong_options(o);
  const int p = comm.size();
  const int me = comm.rank();
  if (!o.node_of.empty() && static_cast<int>(o.node_of.size()) != p) {
    throw std::invalid_argument("ping-pong: nodes for " + std::to_string(o.node_of.size()) +
                                " ranks, the communicator has " + std::to_string(p));
  }
  const std::size_t largest = *std::max_element(o.sizes.begin(), o.sizes.end());
  std::vector<char> buffer(std::max<std::size_t>(largest, 1), 0);
  StallGuard guard(me, mpi::simulated() ? 0 : o.stall_seconds);
  const double started = MPI_Wtime();
  const int sizes = static_cast<int>(o.sizes.size());
  std::vector<double> sizes_d(o.sizes.begin(), o.sizes.end());

  PingPongResult r;
  r.p = p;
  const HostLoad load =
      detect_host_load(comm, [&guard](const std::string& step) { guard.arm(step); });
  guard.disarm();
  r.host_load = load.describe();
  r.oversubscribed = load.oversubscribed();
  const bool capped =
      o.pacing == Pacing::kCapped || (o.pacing == Pacing::kAuto && r.oversubscribed);
  // Measuring ranks per host at once: its CPUs where it has fewer than
  // ranks (one pair per host when forced), otherwise no limit.
  std::vector<int> cap(load.ranks.size());
  for (std::size_t h = 0; h < cap.size(); ++h) {
    cap[h] = o.pacing == Pacing::kCapped ? 2
             : capped                    ? std::min(load.ranks[h], load.cpus[h])
                                         : load.ranks[h];
  }
  // When capped, each sweep's repetitions are spread over three rounds at
  // different times (a third of them in each, at least 2): a pair measured
  // while the host as a whole was slow keeps its least time from the others.
  const int spread = capped ? 3 : 1;
  const int spread_repetitions =
      capped ? std::max(2, (o.repetitions + spread - 1) / spread) : o.repetitions;
  if (capped) {
    int most = 0;
    for (int c : cap) most = std::max(most, std::max(2, c));
    r.pacing = "capped: at most " + std::to_string(most) +
               " measuring ranks per host at once, the others sleep; each pair in " +
               std::to_string(spread * o.sweeps) + " rounds of " +
               std::to_string(spread_repetitions) + " repetitions";
  } else {
    r.pacing = "all: every rank measures in every round";
  }

  // best[partner * sizes + s]: the least one-way time to partner (> me).
  std::vector<double> best(static_cast<std::size_t>(p) * sizes,
                           std::numeric_limits<double>::infinity());
  const auto exchange = [&](int partner, int sweep, int round, int repetitions) {
    const bool initiator = me < partner;
    guard.arm("waiting for rank " + std::to_string(partner) + " in ping-pong round " +
              std::to_string(round));
    // Repetition by repetition, every size in each: a burst of
    // disturbance spoils one repetition of every size, not all of one.
    for (int rep = 0; rep < o.warmup + repetitions; ++rep) {
      for (int s = 0; s < sizes; ++s) {
        const int count = static_cast<int>(o.sizes[s]);
        if (initiator) {
          const double t0 = MPI_Wtime();
          mpi::check(MPI_Send(buffer.data(), count, MPI_BYTE, partner, round, comm.get()),
                     "MPI_Send");
          if (o.inject) o.inject({sweep, round, partner, rep});
          mpi::check(MPI_Recv(buffer.data(), count, MPI_BYTE, partner, round, comm.get(),
                              MPI_STATUS_IGNORE),
                     "MPI_Recv");
          if (rep >= o.warmup) {
            double& b = best[static_cast<std::size_t>(partner) * sizes + s];
            b = std::min(b, (MPI_Wtime() - t0) / 2);
          }
        } else {
          mpi::check(MPI_Recv(buffer.data(), count, MPI_BYTE, partner, round, comm.get(),
                              MPI_STATUS_IGNORE),
                     "MPI_Recv");
          if (o.inject) o.inject({sweep, round, partner, rep});
          mpi::check(MPI_Send(buffer.data(), count, MPI_BYTE, partner, round, comm.get()),
                     "MPI_Send");
        }
      }
    }
  };
  int rounds_planned = 0;
  const auto end_round = [&](int round) {
    guard.arm("waiting at the barrier after round " + std::to_string(round));
    if (capped) {
      quiet_barrier(comm);
    } else {
      comm.barrier();
    }
    guard.disarm();
    ++r.rounds;
    if (me == 0 && o.progress && r.rounds % std::max(1, rounds_planned / 10) == 0) {
      const double elapsed = MPI_Wtime() - started;
      const double left = elapsed / r.rounds * std::max(0, rounds_planned - r.rounds);
      char line[160];
      std::snprintf(line, sizeof line, "ping-pong round %d of %d, %.1f s so far, about %.1f s left",
                    r.rounds, rounds_planned, elapsed, left);
      o.progress(line);
    }
  };
  // Rounds given as lists of pairs: each rank finds its own partner. When
  // capped, a round starts once the previous one has ended: its initiators
  // send a token to the next round's ranks, who wait for it in sleeps
  // (quiet_wait). Ranks skip the rounds they have no pair in, so the many
  // rounds of a crowded host cost one token hop each, not a barrier across
  // sleeping ranks; one quiet barrier ends the list. A rank sleeps long
  // while its round is far (the mean round length so far tells how far)
  // and polls often only when it is near, so that few ranks wake at a time.
  constexpr int kTokenTag = 30000;  // ping-pong tags stay below it (round % 16384)
  double seconds_per_round = 0;     // of the last list run: the first guess in the next
  const auto run_listed = [&](const std::vector<std::vector<std::pair<int, int>>>& rounds,
                              int sweep, int repetitions) {
    const auto partner_in = [&](std::size_t round) {
      for (const auto& [a, b] : rounds[round]) {
        if (a == me || b == me) return a == me ? b : a;
      }
      return -1;
    };
    std::vector<MPI_Request> sent;
    char token = 0;
    const double started_list = MPI_Wtime();
    double last_end = started_list;
    int last_round = -1;
    for (std::size_t round = 0; round < rounds.size(); ++round) {
      const int partner = partner_in(round);
      if (!capped) {
        if (partner >= 0) exchange(partner, sweep, static_cast<int>(round % 16384), repetitions);
        end_round(static_cast<int>(round));
        continue;
      }
      if (partner < 0) continue;
      if (round > 0) {
        std::vector<MPI_Request> tokens;
        for (const auto& [a, b] : rounds[round - 1]) {
          tokens.emplace_back();  // from the pair's initiator, its lower rank
          mpi::check(
              MPI_Irecv(&token, 0, MPI_BYTE, std::min(a, b), kTokenTag, comm.get(), &tokens.back()),
              "MPI_Irecv");
        }
        const std::string step = "waiting for round " + std::to_string(round - 1) + " to end";
        guard.arm(step);
        const double per_round =
            last_round >= 0 ? (last_end - started_list) / (last_round + 1) : seconds_per_round;
        // A quarter of the time the rounds before this one should still
        // take: long sleeps while far, short ones when near. (Sleeping up
        // to an estimate instead feeds back: late ranks make rounds long,
        // which makes the estimate longer.) Without an estimate, 100 us
        // doubling. The stall guard counts from when the wait is overdue.
        double doubling = 50e-6;
        quiet_wait(tokens, [&] {
          if (per_round <= 0) return doubling *= 2;
          const double ahead =
              per_round * (static_cast<double>(round) - last_round - 1) - (MPI_Wtime() - last_end);
          if (ahead > 0) guard.arm(step);
          return ahead / 4;
        });
        guard.disarm();
      }
      exchange(partner, sweep, static_cast<int>(round % 16384), repetitions);
      last_end = MPI_Wtime();
      last_round = static_cast<int>(round);
      if (me < partner && round + 1 < rounds.size()) {
        for (const auto& [a, b] : rounds[round + 1]) {
          for (int x : {a, b}) {
            sent.emplace_back();
            mpi::check(MPI_Isend(&token, 0, MPI_BYTE, x, kTokenTag, comm.get(), &sent.back()),
                       "MPI_Isend");
          }
        }
      }
    }
    if (capped) {
      mpi::check(MPI_Waitall(static_cast<int>(sent.size()), sent.data(), MPI_STATUSES_IGNORE),
                 "MPI_Waitall");
      if (!rounds.empty()) {
        seconds_per_round = (MPI_Wtime() - started_list) / static_cast<double>(rounds.size());
        r.rounds += static_cast<int>(rounds.size()) - 1;
        end_round(static_cast<int>(rounds.size()) - 1);  // counts the last
      }
    }
  };

  // Sweeps, each with its own schedule: a pair disturbed in one keeps its
  // least time from the others.
  if (capped) {
    std::vector<std::vector<std::vector<std::pair<int, int>>>> plans;
    for (int k = 0; k < o.sweeps * spread; ++k) {
      plans.push_back(
          capped_rounds(all_pairs(p), load.host_of, cap, o.seed + static_cast<std::uint64_t>(k)));
      rounds_planned += static_cast<int>(plans.back().size());
    }
    for (int k = 0; k < o.sweeps * spread; ++k) {
      run_listed(plans[k], k / spread, spread_repetitions);
    }
  } else {
    rounds_planned = o.sweeps * next_power_of_two(p);
    for (int k = 0; k < o.sweeps; ++k) {
      const PartnerSchedule schedule =
          PartnerSchedule::random(p, o.seed + static_cast<std::uint64_t>(k));
      for (int round = 0; round < schedule.rounds(); ++round) {
        const int partner = schedule.partner(me, round);
        if (partner != me) exchange(partner, k, round % 16384, o.repetitions);
        end_round(round);
      }
    }
  }

  // Check on rank 0; measure the suspects, and the inside-node pairs dearer
  // than some pair across, again (all ranks), beside reference pairs that
  // tell whether the host as a whole is slow now (rescale.h); then check
  // again. Only the suspects left at the end make the measurement
  // inconsistent. Rank 0 keeps the times over all passes.
  const auto largest_size =
      static_cast<std::size_t>(std::max_element(o.sizes.begin(), o.sizes.end()) - o.sizes.begin());
  std::vector<std::vector<double>> times = gather_times(comm, best, sizes);
  for (int pass = 0;; ++pass) {
    std::vector<std::pair<int, int>> suspects, again, references;
    int inverted = 0;
    if (me == 0) {
      const ConsistencyCheck c = check_all_sizes(times, p, o.node_of);
      suspects = c.suspects;
      std::set_union(c.suspects.begin(), c.suspects.end(), c.overlap.begin(), c.overlap.end(),
                     std::back_inserter(again));
      inverted = c.inverted ? 1 : 0;
      if (!again.empty() && pass < o.retries) {
        references = reference_pairs(times[largest_size], p, o.node_of, again);
      }
    }
    bcast_pairs(comm, suspects);
    bcast_pairs(comm, again);
    bcast_pairs(comm, references);
    mpi::check(MPI_Bcast(&inverted, 1, MPI_INT, 0, comm.get()), "MPI_Bcast");
    if (pass == 0) r.suspects = static_cast<int>(suspects.size());
    if (again.empty() || pass == o.retries) {
      r.inconsistent = std::move(suspects);
      r.inverted = inverted != 0;
      break;
    }
    r.remeasured += static_cast<int>(again.size());
    // Later, not at once: the host may still be in the slow phase that
    // spoilt the sweep.
    wait_before_pass(pass);
    std::vector<std::pair<int, int>> listed = again;
    listed.insert(listed.end(), references.begin(), references.end());
    const auto rounds = capped_rounds(std::move(listed), load.host_of, cap,
                                      o.seed + 7919 * static_cast<std::uint64_t>(pass + 1));
    rounds_planned += static_cast<int>(rounds.size());
    std::fill(best.begin(), best.end(), std::numeric_limits<double>::infinity());
    run_listed(rounds, o.sweeps + pass, 2 * o.repetitions);
    const std::vector<std::vector<double>> measured = gather_times(comm, best, sizes);
    if (me == 0) r.rescaled += merge_pass(times, measured, p, o.node_of, again, references);
  }

  // The fit per pair, from the least times per size.
  const bool receives = o.result_on_every_rank || me == 0;
  const auto pp = static_cast<std::size_t>(p) * p;
  if (receives) {
    r.startup.assign(pp, 0);
    r.latency.assign(pp, 0);
    r.inverse_bandwidth.assign(pp, 0);
  }
  if (me == 0) {
    double r2_sum = 0;
    int pairs = 0;
    std::vector<double> t(static_cast<std::size_t>(sizes));
    for (int a = 0; a < p; ++a) {
      for (int b = a + 1; b < p; ++b) {
        const std::size_t ab = static_cast<std::size_t>(a) * p + b;
        const std::size_t ba = static_cast<std::size_t>(b) * p + a;
        for (int s = 0; s < sizes; ++s) t[s] = times[s][ab];
        const LineFit f = fit_line(sizes_d, t);
        r.startup[ab] = r.startup[ba] = t[0];
        r.latency[ab] = r.latency[ba] = f.latency;
        r.inverse_bandwidth[ab] = r.inverse_bandwidth[ba] = f.inverse_bandwidth;
        r.worst_r_squared = pairs == 0 ? f.r_squared : std::min(r.worst_r_squared, f.r_squared);
        r2_sum += f.r_squared;
        ++pairs;
      }
    }
    r.mean_r_squared = pairs ? r2_sum / pairs : 1;
  }
  if (o.result_on_every_rank && p > 1) {
    for (std::vector<double>* m : {&r.startup, &r.latency, &r.inverse_bandwidth}) {
      mpi::check(MPI_Bcast(m->data(), static_cast<int>(pp), MPI_DOUBLE, 0, comm.get()),
                 "MPI_Bcast");
    }
    double r2[2] = {r.worst_r_squared, r.mean_r_squared};
    mpi::check(MPI_Bcast(r2, 2, MPI_DOUBLE, 0, comm.get()), "MPI_Bcast");
    r.worst_r_squared = r2[0];
    r.mean_r_squared = r2[1];
  }
  r.seconds = MPI_Wtime() - started;
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
