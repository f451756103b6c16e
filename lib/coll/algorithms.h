// Collective algorithms on one communicator (one level of a hierarchy),
// written over point-to-point messages so that each level can use the
// algorithm that suits its size and links, whatever the MPI library would
// pick. kNative calls the MPI library's own collective.
//
// Every function is collective over comm, takes MPI's arguments (any
// root, MPI_IN_PLACE where MPI allows it, count 0, derived datatypes,
// predefined and user-defined operations) and throws mpi::MpiError when an
// MPI call fails, std::invalid_argument for an algorithm that does not
// apply to the collective. comm must be private to the caller: the
// point-to-point messages use a fixed tag. Reductions combine in rank
// order, so non-commutative operations are correct, except ring,
// Rabenseifner and recursive halving, which run the native call
// (allreduce, reduce_scatter_block) or the binomial tree (reduce) for
// non-commutative operations.
#ifndef RANKSHAPE_LIB_COLL_ALGORITHMS_H_
#define RANKSHAPE_LIB_COLL_ALGORITHMS_H_

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace rankshape::coll {

enum class Algorithm {
  kNative,
  kBinomial,           // bcast, reduce (allreduce: both): binomial tree
  kKnomial,            // the same, 4-nomial tree, a round's messages at once
  kScatterAllgather,   // bcast: binomial scatter, then allgather (scatter_allgather_doubles)
  kChain,              // bcast, reduce: pipelined chain of segments
  kBinary,             // bcast, reduce: pipelined binary tree of segments
  kRecursiveDoubling,  // allreduce, allgather
  kRing,               // allreduce: ring reduce-scatter, then ring allgather; allgather
  kRabenseifner,       // allreduce, reduce: recursive halving, then recursive doubling
  kRecursiveHalving,   // reduce_scatter_block
  kLinear,             // barrier: every rank to rank 0, then rank 0 to every rank
};

/// The radix of the k-nomial trees (kKnomial): MVAPICH2's default between
/// nodes. A round costs one latency for radix - 1 messages, where a
/// binomial tree pays one per message: log_radix(p) rounds, not log_2(p).
inline constexpr int kKnomialRadix = 4;

/// kScatterAllgather's allgather, by MPICH's rule for a bcast: recursive
/// doubling (log2 p steps) for messages under 512 KiB on a power-of-two
/// count of ranks, else a ring (p - 1 steps, each rank's links busy with
/// one piece at a time).
inline bool scatter_allgather_doubles(std::int64_t bytes, int ranks) {
  return bytes < (512 << 10) && ranks > 0 && (ranks & (ranks - 1)) == 0;
}

/// kBinary's segment for a message of `bytes` when none is given:
/// sqrt(bytes x 4 KiB), within [8 KiB, 1 MiB] (1 MiB: 64 KiB, 4 MiB:
/// 128 KiB, 16 MiB: 256 KiB). A tree of depth d moving B bytes in
/// segments of s takes about (d - 1 + B / s) steps of alpha + s beta,
/// least at s = sqrt(B alpha / ((d - 1) beta)). Where a shared backbone
/// bounds the steps, beta is a segment's share of it: on the simulated
/// 32-node platform (`lvl2-node32-core8`) 31 edges share 80 Gb/s (beta =
/// 31 / 9.4 GB/s, with SimGrid's factor 0.94), alpha is 5 us x SimGrid's
/// factor 11.6 for large messages, and d = 5: alpha / ((d - 1) beta) =
/// 4.4 KB. Measured there (bench/segment_sweep.sh, docs/benchmarks.md),
/// bcast 1 MiB was fastest at 64 KiB of 32-256 KiB, and 4 MiB at 128 KiB
/// of 96-256 KiB; no real network has tuned it.
std::int64_t binary_segment_bytes(std::int64_t bytes);

/// kBinary's tree over ranks 0..p-1 from root: a rank's parent (-1 at the
/// root) and children. Every subtree is a run of consecutive ranks (the
/// root's own place skipped), so a node's or rack's ranks stay together.
struct TreeLinks {
  int parent = -1;
  std::vector<int> children;
};
TreeLinks binary_tree_links(int rank, int root, int p);

/// "native", "binomial", "knomial", "scatter-allgather", "chain", "binary",
/// "recursive-doubling", "ring", "rabenseifner", "recursive-halving".
std::string_view algorithm_name(Algorithm a);
std::optional<Algorithm> algorithm_named(std::string_view name);

/// kNative, kBinomial, kKnomial, kScatterAllgather, kChain, kBinary.
/// segment_bytes: the chain's or binary tree's segment size (0: a default
/// of 64 KiB for the chain, binary_segment_bytes for the tree), rounded
/// down to whole elements, at least one. kScatterAllgather, kChain and
/// kBinary split the buffer
/// into whole elements, so every rank must pass the same count and type
/// (MPI asks only for the same type signature).
void level_bcast(Algorithm a, void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
                 std::int64_t segment_bytes = 0);
/// kNative, kBinomial, kKnomial, kChain, kBinary (segment_bytes as for
/// bcast), kRabenseifner (binomial for a non-commutative op); kChain,
/// kBinary and kRabenseifner split the buffer, so every rank must pass the
/// same count and type. send may be MPI_IN_PLACE at the root.
void level_reduce(Algorithm a, const void* send, void* recv, int count, MPI_Datatype type,
                  MPI_Op op, int root, MPI_Comm comm, std::int64_t segment_bytes = 0);
/// kNative, kRecursiveDoubling, kRing, kRabenseifner, and kBinomial or
/// kKnomial: that tree's reduce to rank 0, then its bcast. send may be
/// MPI_IN_PLACE.
void level_allreduce(Algorithm a, const void* send, void* recv, int count, MPI_Datatype type,
                     MPI_Op op, MPI_Comm comm);
/// kNative, kRecursiveDoubling (on a power-of-two count of ranks; the ring
/// on others), kRing. send may be MPI_IN_PLACE.
void level_allgather(Algorithm a, const void* send, int send_count, MPI_Datatype send_type,
                     void* recv, int recv_count, MPI_Datatype recv_type, MPI_Comm comm);
/// kNative, kRecursiveHalving (on a power-of-two count of ranks and a
/// commutative op; the native call otherwise). send may be MPI_IN_PLACE.
void level_reduce_scatter_block(Algorithm a, const void* send, void* recv, int count,
                                MPI_Datatype type, MPI_Op op, MPI_Comm comm);
/// kNative, kLinear: a message of no bytes from every rank to rank 0, then
/// one from rank 0 to every rank (depth 2 whatever the size: the fastest
/// where a message's cost is its latency, e.g. SimGrid's, where neither
/// sending nor receiving one takes time).
void level_barrier(Algorithm a, MPI_Comm comm);

}  // namespace rankshape::coll

#endif  // RANKSHAPE_LIB_COLL_ALGORITHMS_H_
