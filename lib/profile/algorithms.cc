#include "lib/profile/algorithms.h"

namespace rankshape::profile {
namespace {

int lowest_bit(int r) { return r & -r; }

int largest_power_of_two_at_most(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

}  // namespace

void bcast(int n, int rank, int root, std::int64_t bytes, Sends& out) {
  const int r = (rank - root + n) % n;
  const int limit = r == 0 ? n : lowest_bit(r);
  for (int step = 1; step < limit && r + step < n; step *= 2) {
    out.push_back({(r + step + root) % n, bytes, 1});
  }
}

void reduce(int n, int rank, int root, std::int64_t bytes, Sends& out) {
  const int r = (rank - root + n) % n;
  if (r != 0) out.push_back({(r - lowest_bit(r) + root) % n, bytes, 1});
}

void allreduce(int n, int rank, std::int64_t bytes, Sends& out) {
  const int pof2 = largest_power_of_two_at_most(n);
  const int rem = n - pof2;
  int newrank = rank - rem;
  if (rank < 2 * rem) {
    if (rank % 2 == 0) {  // hands its data on, then waits for the result
      out.push_back({rank + 1, bytes, 1});
      return;
    }
    newrank = rank / 2;
  }
  for (int mask = 1; mask < pof2; mask *= 2) {
    const int partner = newrank ^ mask;
    out.push_back({partner < rem ? partner * 2 + 1 : partner + rem, bytes, 1});
  }
  if (rank < 2 * rem) out.push_back({rank - 1, bytes, 1});
}

void gather(int, int rank, int root, std::int64_t block_bytes, Sends& out) {
  if (rank != root) out.push_back({root, block_bytes, 1});
}

void scatter(int n, int rank, int root, std::int64_t block_bytes, Sends& out) {
  if (rank != root) return;
  for (int to = 0; to < n; ++to) {
    if (to != root) out.push_back({to, block_bytes, 1});
  }
}

void allgather(int n, int rank, std::int64_t block_bytes, Sends& out) {
  if (n >= 2) out.push_back({(rank + 1) % n, block_bytes * (n - 1), n - 1});
}

void pairwise(int n, int rank, std::int64_t block_bytes, Sends& out) {
  for (int to = 0; to < n; ++to) {
    if (to != rank) out.push_back({to, block_bytes, 1});
  }
}

void allgather_v(int n, int rank, const std::vector<std::int64_t>& block_bytes, Sends& out) {
  if (n < 2) return;
  std::int64_t bytes = 0;
  for (int j = 0; j < n; ++j) {
    if (j != (rank + 1) % n) bytes += block_bytes[static_cast<std::size_t>(j)];
  }
  out.push_back({(rank + 1) % n, bytes, n - 1});
}

void pairwise_v(int n, int rank, const std::vector<std::int64_t>& block_bytes, Sends& out) {
  for (int to = 0; to < n; ++to) {
    if (to != rank) out.push_back({to, block_bytes[static_cast<std::size_t>(to)], 1});
  }
}

void barrier(int n, int rank, Sends& out) {
  for (int step = 1; step < n; step *= 2) out.push_back({(rank + step) % n, 0, 1});
}

}  // namespace rankshape::profile
