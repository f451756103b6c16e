// Who measures whom, and when: the ping-pong partner schedule (van Duijn
// §5.2.1). A sweep has q = 2^ceil(log2 p) rounds; in each round every rank
// has exactly one partner (possibly itself, then it idles), and over the
// sweep every pair meets exactly once.
//
// Randomised form, with alpha and beta drawn per sweep, equal on all ranks:
//   t = ((((s + beta) mod q) XOR alpha XOR i) - beta) mod q
//   partner = t if t < p, else s.
// It is a pairing because x -> (x + beta) mod q is a bijection and XOR with
// a fixed value is an involution. Example, p = 3 (q = 4), alpha = beta = 0:
// round 1 pairs 0-1 (2 idles: 2 XOR 1 = 3 >= p), round 2 pairs 0-2, round 3
// pairs 1-2 (0 XOR 3 = 3 idles 0).
#ifndef RANKSHAPE_LIB_MEASURE_SCHEDULE_H_
#define RANKSHAPE_LIB_MEASURE_SCHEDULE_H_

#include <cstdint>
#include <utility>
#include <vector>

namespace rankshape {

struct PartnerSchedule {
  int p = 1;
  int q = 1;  // rounds per sweep: the smallest power of two >= p
  int alpha = 0;
  int beta = 0;

  /// Throws std::invalid_argument unless p >= 1 and 0 <= alpha, beta < q.
  PartnerSchedule(int ranks, int alpha_value, int beta_value);
  /// A schedule whose alpha and beta come from seed (equal on every rank that
  /// uses the same seed).
  static PartnerSchedule random(int ranks, std::uint64_t seed);

  int rounds() const { return q; }
  /// Partner of rank s in round i (0 <= i < q); s itself means idle.
  int partner(int s, int round) const;
};

/// Rounds in which only some ranks measure at once, for hosts with more
/// ranks than CPUs (a rank waiting for a descheduled partner times the
/// scheduler, not the network): pairs (a, b) of ranks are dealt into rounds
/// in a random order from seed, each rank at most once per round and each
/// host h at most cap[h] measuring ranks per round (a pair inside one host
/// takes two of its places; a cap below 2 counts as 2). Every pair lands in
/// exactly one round. Greedy: on one host of 8 ranks with cap 2, the 28
/// pairs take 28 rounds, the fewest possible. Throws std::invalid_argument
/// for a rank outside [0, host_of.size()) or a pair of one rank.
std::vector<std::vector<std::pair<int, int>>> capped_rounds(std::vector<std::pair<int, int>> pairs,
                                                            const std::vector<int>& host_of,
                                                            const std::vector<int>& cap,
                                                            std::uint64_t seed);

/// Every pair (a, b), a < b, of p ranks.
std::vector<std::pair<int, int>> all_pairs(int p);

/// The smallest power of two >= p (p >= 1).
int next_power_of_two(int p);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_MEASURE_SCHEDULE_H_
