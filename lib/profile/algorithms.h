// What the traffic profiler records for a collective: the messages one
// stated algorithm sends, from one rank of a communicator of n ranks (ranks
// of that communicator). MPI libraries choose among several algorithms by
// size and count; these are the common short-message ones, so that a
// collective's traffic has the right partners and volume, not the exact
// messages of every library.
//
// Example: bcast(4, 0, 0, 100), a binomial tree from rank 0, sends 100
// bytes to ranks 1 and 2 (relative distances 1 and 2); rank 2 then sends to
// 3 (bcast(4, 2, 0, 100)), rank 1 sends nothing. n - 1 messages in all.
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

// In all: 0 <= rank, root < n; bytes >= 0.

/// Binomial tree from root: relative rank r = (rank - root) mod n sends the
/// buffer to r + 2^k for every 2^k below r's lowest set bit (every 2^k < n
/// for the root) with r + 2^k < n.
Sends bcast(int n, int rank, int root, std::int64_t bytes);
/// Binomial tree to root: every relative rank r > 0 sends once, to r minus
/// its lowest set bit.
Sends reduce(int n, int rank, int root, std::int64_t bytes);
/// Recursive doubling (MPICH's for short messages): with 2^m the largest
/// power of two <= n and e = n - 2^m, the even ranks below 2e first send to
/// the next odd one and take no further part; the other 2^m exchange with
/// partners at distance 1, 2, 4, ... of their new numbering; each odd rank
/// below 2e finally sends the result to the even one before it.
Sends allreduce(int n, int rank, std::int64_t bytes);
/// Linear: every rank but the root sends its block to the root.
Sends gather(int n, int rank, int root, std::int64_t block_bytes);
/// Linear: the root sends each other rank its block.
Sends scatter(int n, int rank, int root, std::int64_t block_bytes);
/// Ring: n - 1 messages of one block each to rank + 1.
Sends allgather(int n, int rank, std::int64_t block_bytes);
/// Pairwise: one block to every other rank (as reduce_scatter_block's
/// pairwise exchange and alltoall's do).
Sends pairwise(int n, int rank, std::int64_t block_bytes);
/// Ring with blocks of different sizes (allgatherv): n - 1 messages to
/// rank + 1 carrying every block but that of rank + 1.
Sends allgather_v(int n, int rank, const std::vector<std::int64_t>& block_bytes);
/// block_bytes[to] to every other rank (alltoallv, reduce_scatter, and
/// scatterv from its root); block_bytes has n entries.
Sends pairwise_v(int n, int rank, const std::vector<std::int64_t>& block_bytes);
/// Dissemination: in round k = 0 .. ceil(log2 n) - 1 an empty message to
/// (rank + 2^k) mod n.
Sends barrier(int n, int rank);

}  // namespace rankshape::profile

#endif  // RANKSHAPE_LIB_PROFILE_ALGORITHMS_H_
