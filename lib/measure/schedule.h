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

/// The smallest power of two >= p (p >= 1).
int next_power_of_two(int p);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_MEASURE_SCHEDULE_H_
