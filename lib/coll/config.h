// How one hierarchical collective call runs: per level, the algorithm, and
// optionally the levels pipelined over segments of the message (HAN's
// scheme: segment i moves on one level while segment i + 1 moves on the
// next, through non-blocking native calls).
#ifndef RANKSHAPE_LIB_COLL_CONFIG_H_
#define RANKSHAPE_LIB_COLL_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/coll/algorithms.h"

namespace rankshape::coll {

enum class Collective {
  kBcast,
  kReduce,
  kAllreduce,
  kGather,
  kScatter,
  kAllgather,
  kReduceScatterBlock,
  kAlltoall,
  kBarrier,
};
inline constexpr Collective kAllCollectives[] = {Collective::kBcast,
                                                 Collective::kReduce,
                                                 Collective::kAllreduce,
                                                 Collective::kGather,
                                                 Collective::kScatter,
                                                 Collective::kAllgather,
                                                 Collective::kReduceScatterBlock,
                                                 Collective::kAlltoall,
                                                 Collective::kBarrier};

/// "bcast", "reduce", "allreduce", "gather", "scatter", "allgather",
/// "reduce_scatter_block", "alltoall", "barrier".
std::string_view collective_name(Collective c);
std::optional<Collective> collective_named(std::string_view name);
/// Reductions: the operation's commutativity matters.
bool is_reduction(Collective c);

struct Config {
  /// False: the MPI library's collective on the whole communicator.
  bool hierarchical = false;
  /// Per level, finest first and the top last (depth + 1 entries); empty:
  /// native at every level. Only bcast (native, binomial, knomial,
  /// scatter-allgather, chain, binary), reduce (native, binomial, knomial,
  /// chain, binary, Rabenseifner) and allreduce (below the top: native, binomial, knomial,
  /// chain, used up and down; at the top: native, recursive doubling, ring,
  /// Rabenseifner, binomial, knomial) use them.
  std::vector<Algorithm> levels;
  /// > 0: the levels are pipelined over segments of about this many bytes
  /// (bcast, reduce and allreduce, native algorithm at every level).
  std::int64_t segment_bytes = 0;
  /// Allreduce only, when not empty: two collectives, each configured by
  /// its part (native, the MPI library's call on the whole communicator,
  /// or hierarchical; neither composed itself), as `composition` says.
  /// Träff, Gropp and Thakur's guidelines that an allreduce be no slower
  /// than either, as candidates. `levels` and `segment_bytes` are then
  /// unused.
  std::vector<Config> parts;
  enum class Composition {
    /// A reduce to rank 0, then a bcast from it.
    kReduceBcast,
    /// A reduce_scatter_block of count / p elements per rank, then an
    /// allgather of those blocks; the last count % p elements (all of
    /// them when count < p) by the MPI library's allreduce.
    kReduceScatterAllgather,
  };
  Composition composition = Composition::kReduceBcast;
  /// Not native: rankshape's own algorithm of that name on the whole
  /// communicator, no hierarchy (bcast, reduce, allreduce: one their top
  /// level may run; allgather: recursive doubling or the ring;
  /// reduce_scatter_block: recursive halving; see textbook_flat).
  /// `levels`, `segment_bytes` and `parts` are then unused.
  Algorithm flat = Algorithm::kNative;

  /// Level j's algorithm (native past the end of `levels`).
  Algorithm level(int j) const {
    const auto k = static_cast<std::size_t>(j);
    return k < levels.size() ? levels[k] : Algorithm::kNative;
  }
  /// "native", or "hierarchical", " levels=A,B,..." when not all native, and
  /// " segment=N" when pipelined; composed: "reduce+bcast(R;B)" or
  /// "reduce_scatter_block+allgather(R;A)" with the parts' descriptions;
  /// flat: "flat=NAME". parse() reads it back.
  std::string describe() const;
  static std::optional<Config> parse(std::string_view text);
  bool operator==(const Config& o) const {
    return hierarchical == o.hierarchical && levels == o.levels &&
           segment_bytes == o.segment_bytes && parts == o.parts &&
           (parts.empty() || composition == o.composition) && flat == o.flat;
  }
};

/// Whether configuration `config` can run collective c: each level's
/// algorithm one that level runs for c (the top's choices at the top), a
/// flat algorithm one the top runs, a composed one only for allreduce
/// with parts that apply to the collectives it composes.
bool applies(const Config& config, Collective c);

/// rankshape's own flat algorithm for c with `bytes` in `count` elements
/// on `ranks` ranks by MPICH's textbook rules (Thakur, Rabenseifner and
/// Gropp 2005): binomial trees for short messages (recursive doubling for
/// allreduce); scatter then ring allgather for bcast from 12 KiB on 8
/// ranks or more, Rabenseifner for reduce and allreduce beyond 2 KiB when
/// every rank of the largest power of two within `ranks` gets an element
/// (count >= that power; with fewer its halving ends on empty pieces).
/// For allgather (`bytes` per rank) recursive doubling on a power-of-two
/// count of ranks, else the ring; for reduce_scatter_block recursive
/// halving on a power of two, farthest partner first. MPICH keeps both
/// under 512 KiB in all; here they are candidates at every size: with ranks
/// dealt round-robin over nodes their largest steps, between the farthest
/// ranks, stay within a node. Empty for the other collectives. A candidate beside native, whose own
/// choice can be far off (SMPI's `ompi` reduce of 64 KiB on 256 ranks:
/// 4.0 ms, `mpich`'s 0.73).
std::optional<Config> textbook_flat(Collective c, std::int64_t bytes, std::int64_t count,
                                    int ranks);

/// The configurations worth considering for collective c on a hierarchy of
/// `depth` levels below the top: native, hierarchical with native levels,
/// per-level algorithm choices and pipelined segment sizes (for messages
/// of `bytes`, when `pipelines`). The first is native.
std::vector<Config> candidates(Collective c, int depth, std::int64_t bytes, bool pipelines = true);

}  // namespace rankshape::coll

#endif  // RANKSHAPE_LIB_COLL_CONFIG_H_
