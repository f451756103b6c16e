// A small, fully specified random generator: the same seed gives the same
// machine on every platform and standard library (std::uniform_*_distribution
// does not promise that).
#ifndef RANKSHAPE_LIB_UTIL_RANDOM_H_
#define RANKSHAPE_LIB_UTIL_RANDOM_H_

#include <cstdint>
#include <utility>
#include <vector>

namespace rankshape {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform in [0, n) for n >= 1 (Lemire's multiply-shift; the bias is
  /// below 2^-32 for the sizes used here).
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }

 private:
  std::uint64_t state_;
};

/// Fisher-Yates shuffle.
template <class T>
void shuffle(std::vector<T>& v, SplitMix64& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
}

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_UTIL_RANDOM_H_
