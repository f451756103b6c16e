#include "lib/measure/schedule.h"

#include <stdexcept>
#include <string>

#include "lib/util/random.h"

namespace rankshape {

int next_power_of_two(int p) {
  if (p < 1) throw std::invalid_argument("next_power_of_two: p must be >= 1");
  int q = 1;
  while (q < p) q *= 2;
  return q;
}

PartnerSchedule::PartnerSchedule(int ranks, int alpha_value, int beta_value)
    : p(ranks), q(next_power_of_two(ranks)), alpha(alpha_value), beta(beta_value) {
  if (alpha < 0 || alpha >= q || beta < 0 || beta >= q) {
    throw std::invalid_argument("schedule: alpha and beta must be in [0, " + std::to_string(q) +
                                ")");
  }
}

PartnerSchedule PartnerSchedule::random(int ranks, std::uint64_t seed) {
  const int q = next_power_of_two(ranks);
  SplitMix64 rng(seed);
  const int a = static_cast<int>(rng.below(static_cast<std::uint64_t>(q)));
  const int b = static_cast<int>(rng.below(static_cast<std::uint64_t>(q)));
  return PartnerSchedule(ranks, a, b);
}

int PartnerSchedule::partner(int s, int round) const {
  const int shifted = (s + beta) % q;
  const int t = (((shifted ^ alpha ^ round) - beta) % q + q) % q;
  return t < p ? t : s;
}

}  // namespace rankshape
