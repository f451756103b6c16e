// Rank identities. A labelling maps grid positions (new ranks) to the job's
// original ranks (old ranks); mixing the two up is the classic relabelling
// bug, so they are distinct types and never convert implicitly.
#ifndef RANKSHAPE_LIB_MODEL_RANK_H_
#define RANKSHAPE_LIB_MODEL_RANK_H_

#include <cstdint>
#include <functional>
#include <ostream>

namespace rankshape {

template <class Tag>
class RankId {
 public:
  constexpr RankId() = default;
  constexpr explicit RankId(std::int32_t value) : value_(value) {}

  /// The rank as a plain index, for array access and MPI calls.
  constexpr std::int32_t value() const { return value_; }

  friend constexpr bool operator==(RankId a, RankId b) { return a.value_ == b.value_; }
  friend constexpr bool operator!=(RankId a, RankId b) { return a.value_ != b.value_; }
  friend constexpr bool operator<(RankId a, RankId b) { return a.value_ < b.value_; }
  friend std::ostream& operator<<(std::ostream& os, RankId r) { return os << r.value_; }

 private:
  std::int32_t value_ = 0;
};

/// A rank of the job as started (e.g. in MPI_COMM_WORLD): it names a process
/// and therefore a place on the machine.
using OldRank = RankId<struct OldRankTag>;
/// A rank after relabelling: a position in the process grid.
using NewRank = RankId<struct NewRankTag>;

}  // namespace rankshape

template <class Tag>
struct std::hash<rankshape::RankId<Tag>> {
  std::size_t operator()(rankshape::RankId<Tag> r) const noexcept {
    return std::hash<std::int32_t>()(r.value());
  }
};

#endif  // RANKSHAPE_LIB_MODEL_RANK_H_
