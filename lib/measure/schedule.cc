#include "lib/measure/schedule.h"

#include <algorithm>
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

std::vector<std::pair<int, int>> all_pairs(int p) {
  std::vector<std::pair<int, int>> pairs;
  pairs.reserve(static_cast<std::size_t>(p) * std::max(0, p - 1) / 2);
  for (int a = 0; a < p; ++a) {
    for (int b = a + 1; b < p; ++b) pairs.emplace_back(a, b);
  }
  return pairs;
}

std::vector<std::vector<std::pair<int, int>>> capped_rounds(std::vector<std::pair<int, int>> pairs,
                                                            const std::vector<int>& host_of,
                                                            const std::vector<int>& cap,
                                                            std::uint64_t seed) {
  const int p = static_cast<int>(host_of.size());
  for (const auto& [a, b] : pairs) {
    if (a < 0 || b < 0 || a >= p || b >= p || a == b) {
      throw std::invalid_argument("capped_rounds: bad pair (" + std::to_string(a) + ", " +
                                  std::to_string(b) + ") of " + std::to_string(p) + " ranks");
    }
  }
  for (int h : host_of) {
    if (h < 0 || h >= static_cast<int>(cap.size())) {
      throw std::invalid_argument("capped_rounds: host " + std::to_string(h) + " has no cap");
    }
  }
  SplitMix64 rng(seed);  // the same order on every rank
  shuffle(pairs, rng);
  std::vector<std::vector<std::pair<int, int>>> rounds;
  std::vector<int> used_round(static_cast<std::size_t>(p), -1);
  std::vector<int> active(cap.size(), 0);
  while (!pairs.empty()) {
    const int round = static_cast<int>(rounds.size());
    std::fill(active.begin(), active.end(), 0);
    int free_places = 0;
    for (int c : cap) free_places += std::max(2, c);
    std::vector<std::pair<int, int>> taken, left;
    for (const auto& pair : pairs) {
      const auto [a, b] = pair;
      const int ha = host_of[a], hb = host_of[b];
      const bool fits =
          free_places >= 2 && used_round[a] != round && used_round[b] != round &&
          (ha == hb ? active[ha] + 2 <= std::max(2, cap[ha])
                    : active[ha] < std::max(2, cap[ha]) && active[hb] < std::max(2, cap[hb]));
      if (!fits) {
        left.push_back(pair);
        continue;
      }
      used_round[a] = used_round[b] = round;
      ++active[ha];
      ++active[hb];
      free_places -= 2;
      taken.push_back(pair);
    }
    rounds.push_back(std::move(taken));
    pairs = std::move(left);
  }
  return rounds;
}

}  // namespace rankshape
