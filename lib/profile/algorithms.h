// What the traffic profiler records for a collective: the messages one
// stated algorithm sends, from one rank of a communicator of n ranks (ranks
// of that communicator). MPI libraries choose among several algorithms by
// size and count; these are the common short-message ones, so that a
// collective's traffic has the right partners and volume, not the exact
// messages of every library.
//
// Example: bcast on 4 ranks from rank 0 with 100 bytes, a binomial tree:
// rank 0 sends 100 bytes to ranks 1 and 2 (relative distances 1 and 2);
// rank 2 then sends to 3, rank 1 sends nothing. n - 1 messages in all.
#ifndef RANKSHAPE_LIB_PROFILE_ALGORITHMS_H_
#define RANKSHAPE_LIB_PROFILE_ALGORITHMS_H_

#include <cstdint>
#include <vector>

namespace rankshape::profile {

struct Send {
  int to = 0;  // a rank of the communicator
  std::int64_t bytes = 0;
  std::int64_t messages = 1;
};
using Sends = std::vector<Send>;

// In all: 0 <= rank, root < n; bytes >= 0. Each appends to out (the
// profiler reuses one buffer: no allocation per call); sends_of() returns
// them instead.

/// Binomial tree from root: relative rank r = (rank - root) mod n sends the
/// buffer to r + 2^k for every 2^k below r's lowest set bit (every 2^k < n
/// for the root) with r + 2^k < n.
void bcast(int n, int rank, int root, std::int64_t bytes, Sends& out);
/// Binomial tree to root: every relative rank r > 0 sends once, to r minus
/// its lowest set bit.
void reduce(int n, int rank, int root, std::int64_t bytes, Sends& out);
/// Recursive doubling (MPICH's for short messages): with 2^m the largest
/// power of two <= n and e = n - 2^m, the even ranks below 2e first send to
/// the next odd one and take no further part; the other 2^m exchange with
/// partners at distance 1, 2, 4, ... of their new numbering; each odd rank
/// below 2e finally sends the result to the even one before it.
void allreduce(int n, int rank, std::int64_t bytes, Sends& out);
/// Linear: every rank but the root sends its block to the root.
void gather(int n, int rank, int root, std::int64_t block_bytes, Sends& out);
/// Linear: the root sends each other rank its block.
void scatter(int n, int rank, int root, std::int64_t block_bytes, Sends& out);
/// Ring: n - 1 messages of one block each to rank + 1.
void allgather(int n, int rank, std::int64_t block_bytes, Sends& out);
/// Pairwise: one block to every other rank (as reduce_scatter_block's
/// pairwise exchange and alltoall's do).
void pairwise(int n, int rank, std::int64_t block_bytes, Sends& out);
/// Ring with blocks of different sizes (allgatherv): n - 1 messages to
/// rank + 1 carrying every block but that of rank + 1.
void allgather_v(int n, int rank, const std::vector<std::int64_t>& block_bytes, Sends& out);
/// block_bytes[to] to every other rank (alltoallv, reduce_scatter, and
/// scatterv from its root); block_bytes has n entries.
void pairwise_v(int n, int rank, const std::vector<std::int64_t>& block_bytes, Sends& out);
/// Dissemination: in round k = 0 .. ceil(log2 n) - 1 an empty message to
/// (rank + 2^k) mod n.
void barrier(int n, int rank, Sends& out);

/// The sends of algorithm(args..., out), e.g. sends_of(bcast, 4, 0, 0, 100).
template <class Algorithm, class... Args>
Sends sends_of(Algorithm algorithm, Args... args) {
  Sends out;
  algorithm(args..., out);
  return out;
}

}  // namespace rankshape::profile

#endif  // RANKSHAPE_LIB_PROFILE_ALGORITHMS_H_
