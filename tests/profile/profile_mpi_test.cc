// The traffic profiler linked into a program whose traffic is known
// exactly: every kind of send it counts (blocking, nonblocking, persistent,
// sendrecv, on MPI_COMM_WORLD and on a split communicator, to
// MPI_PROC_NULL and to oneself, which are not counted) and the nine
// collectives (some repeated in a row, one on a communicator freed with
// repeats pending and followed by another, some of derived datatypes freed
// and made again), their vector and nonblocking forms, and neighbourhood
// collectives on a ring and a distributed graph. After MPI_Finalize, rank 0 reads the traffic file
// the profiler wrote and compares it pair by pair with what the program sent, the collectives as
// lib/profile/algorithms.h states them. Exits non-zero on any difference.
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lib/io/input_error.h"
#include "lib/io/traffic.h"
#include "lib/profile/algorithms.h"

namespace rankshape {
namespace {

using Counts = std::map<std::pair<int, int>, std::pair<std::int64_t, std::int64_t>>;

void check(int code, const char* call) {
  if (code != MPI_SUCCESS) {
    std::fprintf(stderr, "%s failed (%d)\n", call, code);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

// The program's traffic, seen from world rank r of p: what each step sends.
// sub(s) is the world rank of rank s of r's parity communicator.
void expected_from(int r, int p, Counts& out) {
  const auto add = [&](int to, std::int64_t bytes, std::int64_t messages) {
    if (to == r) return;
    auto& c = out[{std::min(r, to), std::max(r, to)}];
    c.first += bytes;
    c.second += messages;
  };
  const auto add_all = [&](const profile::Sends& sends, auto world_of) {
    for (const profile::Send& s : sends) add(world_of(s.to), s.bytes, s.messages);
  };
  const auto world = [](int s) { return s; };
  const int parity = r % 2, sub_size = (p - parity + 1) / 2, sub_rank = r / 2;
  const auto sub = [&](int s) { return parity + 2 * s; };
  add((r + 1) % p, 3 * 100, 3);               // MPI_Send, 3 x 100 chars
  add((r + 2) % p, 7 * 4, 1);                 // MPI_Isend, 7 ints
  add((r + p - 1) % p, 16 * 8, 1);            // MPI_Sendrecv, 16 doubles
  add((r + 1) % p, 3 * 2 * 4, 3);             // MPI_Send_init, 3 starts of 2 ints
  add(sub((sub_rank + 1) % sub_size), 4, 1);  // MPI_Send on the split
  add_all(profile::sends_of(profile::bcast, p, r, p - 1, 10 * 4), world);  // 10 ints from p - 1
  for (int i = 0; i < 3; ++i) {  // 1 double, 3 times in a row (counted as repeats)
    add_all(profile::sends_of(profile::allreduce, p, r, 8), world);
  }
  add_all(profile::sends_of(profile::barrier, p, r), world);           //
  add_all(profile::sends_of(profile::pairwise, p, r, 2 * 4), world);   // alltoall, 2 ints each
  add_all(profile::sends_of(profile::gather, p, r, 0, 3 * 4), world);  // 3 ints to 0
  add_all(profile::sends_of(profile::allgather, p, r, 4), world);      // 1 int each
  add_all(profile::sends_of(profile::reduce, p, r, 0, 4 * 4), world);  // 4 ints to 0
  add_all(profile::sends_of(profile::scatter, p, r, 0, 5), world);     // 5 chars each from 0
  add_all(profile::sends_of(profile::pairwise, p, r, 4), world);  // reduce_scatter_block, 1 int
  for (int i = 0; i < 4; ++i) {  // 1 int on the split, 4 times in a row
    add_all(profile::sends_of(profile::allreduce, sub_size, sub_rank, 4), sub);
  }
  // Then, after the split is freed, twice on the halves of the world (a
  // new communicator that may get the freed one's handle).
  const int low = (p + 1) / 2, half_size = r < low ? low : p - low,
            half_rank = r < low ? r : r - low;
  const auto half = [&](int s) { return r < low ? s : low + s; };
  for (int i = 0; i < 2; ++i) {
    add_all(profile::sends_of(profile::allreduce, half_size, half_rank, 4), half);
  }
  // And 1 int to the next rank of the half, with the arguments of the
  // split's send above (a point-to-point send remembered on a freed
  // communicator must not be counted as on the split).
  add(half((half_rank + 1) % half_size), 4, 1);
  // Broadcasts from 0 of derived datatypes: 2 doubles twice; after that
  // datatype is freed, 4 doubles twice (a new datatype that may get the
  // freed one's handle), then as 4 MPI_DOUBLEs (the same bytes).
  for (int i = 0; i < 2; ++i) add_all(profile::sends_of(profile::bcast, p, r, 0, 16), world);
  for (int i = 0; i < 3; ++i) add_all(profile::sends_of(profile::bcast, p, r, 0, 32), world);
  // With each of those datatypes, one block to the next rank: 16, then 32
  // bytes (the same arguments as passed).
  add((r + 1) % p, 16 + 32, 2);
  // The vector forms: rank j's block is j + 1 ints (scatterv: j + 2).
  std::vector<std::int64_t> plus1(static_cast<std::size_t>(p)), plus2(plus1.size()),
      ones(plus1.size(), 4);
  for (int j = 0; j < p; ++j) {
    plus1[static_cast<std::size_t>(j)] = 4 * (j + 1);
    plus2[static_cast<std::size_t>(j)] = 4 * (j + 2);
  }
  add_all(profile::sends_of(profile::pairwise_v, p, r, plus1), world);              // alltoallv
  add_all(profile::sends_of(profile::allgather_v, p, r, plus1), world);             // allgatherv
  add_all(profile::sends_of(profile::gather, p, r, 0, 4 * (r + 1)), world);         // gatherv
  if (r == 0) add_all(profile::sends_of(profile::pairwise_v, p, r, plus2), world);  // scatterv
  add_all(profile::sends_of(profile::pairwise_v, p, r, ones), world);  // reduce_scatter
  // Nonblocking: as blocking.
  add_all(profile::sends_of(profile::bcast, p, r, 0, 3 * 4), world);
  add_all(profile::sends_of(profile::allreduce, p, r, 2 * 4), world);
  add_all(profile::sends_of(profile::barrier, p, r), world);
  add_all(profile::sends_of(profile::pairwise, p, r, 4), world);
#ifndef SMPI_H  // SimGrid 3.32 has no neighbourhood collectives
  // A periodic ring (cartesian): 3 ints to each side, then 2.
  add((r + p - 1) % p, 12 + 8, 2);
  add((r + 1) % p, 12 + 8, 2);
  // A distributed graph: rank r sends to r + 3; 5 chars.
  add((r + 3) % p, 5, 1);
#endif
}

// Runs every counted kind of call.
void communicate(int r, int p) {
  std::vector<char> chars(100, 'x'), in_chars(100);
  for (int i = 0; i < 3; ++i) {
    MPI_Request rq;
    check(MPI_Irecv(in_chars.data(), 100, MPI_CHAR, (r + p - 1) % p, 1, MPI_COMM_WORLD, &rq),
          "MPI_Irecv");
    check(MPI_Send(chars.data(), 100, MPI_CHAR, (r + 1) % p, 1, MPI_COMM_WORLD), "MPI_Send");
    check(MPI_Wait(&rq, MPI_STATUS_IGNORE), "MPI_Wait");
  }
  int ints[16] = {0}, in_ints[16];
  MPI_Request two[2];
  check(MPI_Irecv(in_ints, 7, MPI_INT, (r + 2 * p - 2) % p, 2, MPI_COMM_WORLD, &two[0]),
        "MPI_Irecv");
  check(MPI_Isend(ints, 7, MPI_INT, (r + 2) % p, 2, MPI_COMM_WORLD, &two[1]), "MPI_Isend");
  check(MPI_Waitall(2, two, MPI_STATUSES_IGNORE), "MPI_Waitall");
  double doubles[16] = {0}, in_doubles[16];
  check(MPI_Sendrecv(doubles, 16, MPI_DOUBLE, (r + p - 1) % p, 3, in_doubles, 16, MPI_DOUBLE,
                     (r + 1) % p, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
  // Not counted: MPI_PROC_NULL.
  check(MPI_Ssend(ints, 5, MPI_INT, MPI_PROC_NULL, 4, MPI_COMM_WORLD), "MPI_Ssend");
  // Persistent: the send counts at each start, the receive never.
  MPI_Request persistent[2];
  check(MPI_Recv_init(in_ints, 2, MPI_INT, (r + p - 1) % p, 5, MPI_COMM_WORLD, &persistent[0]),
        "MPI_Recv_init");
  check(MPI_Send_init(ints, 2, MPI_INT, (r + 1) % p, 5, MPI_COMM_WORLD, &persistent[1]),
        "MPI_Send_init");
  check(MPI_Start(&persistent[0]), "MPI_Start");
  check(MPI_Start(&persistent[1]), "MPI_Start");
  check(MPI_Waitall(2, persistent, MPI_STATUSES_IGNORE), "MPI_Waitall");
  for (int i = 0; i < 2; ++i) {
    check(MPI_Startall(2, persistent), "MPI_Startall");
    check(MPI_Waitall(2, persistent, MPI_STATUSES_IGNORE), "MPI_Waitall");
  }
  check(MPI_Request_free(&persistent[0]), "MPI_Request_free");
  check(MPI_Request_free(&persistent[1]), "MPI_Request_free");
  // A split communicator: ranks of one parity, in world order.
  MPI_Comm sub;
  check(MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &sub), "MPI_Comm_split");
  int sr = 0, sp = 1;
  MPI_Comm_rank(sub, &sr);
  MPI_Comm_size(sub, &sp);
  MPI_Request rq;
  check(MPI_Irecv(in_ints, 1, MPI_INT, (sr + sp - 1) % sp, 6, sub, &rq), "MPI_Irecv");
  check(MPI_Send(ints, 1, MPI_INT, (sr + 1) % sp, 6, sub), "MPI_Send");
  check(MPI_Wait(&rq, MPI_STATUS_IGNORE), "MPI_Wait");
  // The collectives.
  std::vector<int> many(static_cast<std::size_t>(4 * p + 16)), more(many.size());
  check(MPI_Bcast(many.data(), 10, MPI_INT, p - 1, MPI_COMM_WORLD), "MPI_Bcast");
  double d = 1, sum = 0;
  for (int i = 0; i < 3; ++i) {
    check(MPI_Allreduce(&d, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
  }
  check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  check(MPI_Alltoall(many.data(), 2, MPI_INT, more.data(), 2, MPI_INT, MPI_COMM_WORLD),
        "MPI_Alltoall");
  check(MPI_Gather(many.data(), 3, MPI_INT, more.data(), 3, MPI_INT, 0, MPI_COMM_WORLD),
        "MPI_Gather");
  check(MPI_Allgather(many.data(), 1, MPI_INT, more.data(), 1, MPI_INT, MPI_COMM_WORLD),
        "MPI_Allgather");
  check(MPI_Reduce(many.data(), more.data(), 4, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD), "MPI_Reduce");
  std::vector<char> scatter(static_cast<std::size_t>(5 * p)), part(5);
  check(MPI_Scatter(scatter.data(), 5, MPI_CHAR, part.data(), 5, MPI_CHAR, 0, MPI_COMM_WORLD),
        "MPI_Scatter");
  check(MPI_Reduce_scatter_block(many.data(), more.data(), 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
        "MPI_Reduce_scatter_block");
  int one = 1, total = 0;
  for (int i = 0; i < 4; ++i) {
    check(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, sub), "MPI_Allreduce");
  }
  check(MPI_Comm_free(&sub), "MPI_Comm_free");
  MPI_Comm halves;
  check(MPI_Comm_split(MPI_COMM_WORLD, r < (p + 1) / 2 ? 0 : 1, r, &halves), "MPI_Comm_split");
  for (int i = 0; i < 2; ++i) {
    check(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, halves), "MPI_Allreduce");
  }
  int hr = 0, hp = 1;
  MPI_Comm_rank(halves, &hr);
  MPI_Comm_size(halves, &hp);
  check(MPI_Irecv(in_ints, 1, MPI_INT, (hr + hp - 1) % hp, 6, halves, &rq), "MPI_Irecv");
  check(MPI_Send(ints, 1, MPI_INT, (hr + 1) % hp, 6, halves), "MPI_Send");
  check(MPI_Wait(&rq, MPI_STATUS_IGNORE), "MPI_Wait");
  check(MPI_Comm_free(&halves), "MPI_Comm_free");
  for (const int doubles_per_block : {2, 4}) {
    MPI_Datatype block;
    check(MPI_Type_contiguous(doubles_per_block, MPI_DOUBLE, &block), "MPI_Type_contiguous");
    check(MPI_Type_commit(&block), "MPI_Type_commit");
    for (int i = 0; i < 2; ++i) {
      check(MPI_Bcast(doubles, 1, block, 0, MPI_COMM_WORLD), "MPI_Bcast");
    }
    check(MPI_Irecv(in_doubles, 1, block, (r + p - 1) % p, 8, MPI_COMM_WORLD, &rq), "MPI_Irecv");
    check(MPI_Send(doubles, 1, block, (r + 1) % p, 8, MPI_COMM_WORLD), "MPI_Send");
    check(MPI_Wait(&rq, MPI_STATUS_IGNORE), "MPI_Wait");
    check(MPI_Type_free(&block), "MPI_Type_free");
  }
  check(MPI_Bcast(doubles, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD), "MPI_Bcast");
  // The vector forms.
  std::vector<int> plus1(static_cast<std::size_t>(p)), plus2(plus1.size()), at(plus1.size()),
      at2(plus1.size()), unit(plus1.size(), 1);
  int sum1 = 0, sum2 = 0;
  for (int j = 0; j < p; ++j) {
    plus1[static_cast<std::size_t>(j)] = j + 1;
    plus2[static_cast<std::size_t>(j)] = j + 2;
    at[static_cast<std::size_t>(j)] = sum1;
    at2[static_cast<std::size_t>(j)] = sum2;
    sum1 += j + 1;
    sum2 += j + 2;
  }
  std::vector<int> big(static_cast<std::size_t>(sum2 + 1)), big_in(big.size());
  // alltoallv: r sends j + 1 ints to j; receives r + 1 from each.
  std::vector<int> from(static_cast<std::size_t>(p), r + 1), from_at(from.size());
  for (int j = 0; j < p; ++j) from_at[static_cast<std::size_t>(j)] = j * (r + 1);
  std::vector<int> alltoallv_in(static_cast<std::size_t>(p * (r + 1)));
  check(MPI_Alltoallv(big.data(), plus1.data(), at.data(), MPI_INT, alltoallv_in.data(),
                      from.data(), from_at.data(), MPI_INT, MPI_COMM_WORLD),
        "MPI_Alltoallv");
  check(MPI_Allgatherv(big.data(), r + 1, MPI_INT, big_in.data(), plus1.data(), at.data(), MPI_INT,
                       MPI_COMM_WORLD),
        "MPI_Allgatherv");
  check(MPI_Gatherv(big.data(), r + 1, MPI_INT, big_in.data(), plus1.data(), at.data(), MPI_INT, 0,
                    MPI_COMM_WORLD),
        "MPI_Gatherv");
  check(MPI_Scatterv(big.data(), plus2.data(), at2.data(), MPI_INT, big_in.data(), r + 2, MPI_INT,
                     0, MPI_COMM_WORLD),
        "MPI_Scatterv");
  check(
      MPI_Reduce_scatter(big.data(), big_in.data(), unit.data(), MPI_INT, MPI_SUM, MPI_COMM_WORLD),
      "MPI_Reduce_scatter");
  // Nonblocking collectives.
  MPI_Request started[4];
  int three[3] = {0}, two_in[2] = {0}, two_out[2] = {0};
  check(MPI_Ibcast(three, 3, MPI_INT, 0, MPI_COMM_WORLD, &started[0]), "MPI_Ibcast");
  check(MPI_Iallreduce(two_in, two_out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &started[1]),
        "MPI_Iallreduce");
  check(MPI_Ibarrier(MPI_COMM_WORLD, &started[2]), "MPI_Ibarrier");
  check(
      MPI_Ialltoall(many.data(), 1, MPI_INT, more.data(), 1, MPI_INT, MPI_COMM_WORLD, &started[3]),
      "MPI_Ialltoall");
  check(MPI_Waitall(4, started, MPI_STATUSES_IGNORE), "MPI_Waitall");
#ifndef SMPI_H
  // Neighbourhood collectives on a periodic ring and a distributed graph.
  MPI_Comm ring, graph;
  const int dims[1] = {p}, periods[1] = {1};
  check(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring), "MPI_Cart_create");
  check(MPI_Neighbor_alltoall(many.data(), 3, MPI_INT, more.data(), 3, MPI_INT, ring),
        "MPI_Neighbor_alltoall");
  const int sides[2] = {2, 2}, side_at[2] = {0, 2};  // equal: at 2 ranks both sides are one rank
  MPI_Request neighbours;
  check(MPI_Ineighbor_alltoallv(many.data(), sides, side_at, MPI_INT, more.data(), sides, side_at,
                                MPI_INT, ring, &neighbours),
        "MPI_Ineighbor_alltoallv");
  check(MPI_Wait(&neighbours, MPI_STATUS_IGNORE), "MPI_Wait");
  const int to = (r + 3) % p, from_rank = (r + 4 * p - 3) % p;
  check(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &from_rank, MPI_UNWEIGHTED, 1, &to,
                                       MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph),
        "MPI_Dist_graph_create_adjacent");
  check(MPI_Neighbor_allgather(chars.data(), 5, MPI_CHAR, in_chars.data(), 5, MPI_CHAR, graph),
        "MPI_Neighbor_allgather");
  check(MPI_Comm_free(&graph), "MPI_Comm_free");
  check(MPI_Comm_free(&ring), "MPI_Comm_free");
#endif
}

int compare(int p, const std::string& path) {
  Counts want;
  for (int r = 0; r < p; ++r) expected_from(r, p, want);
  Traffic got;
  try {
    got = read_traffic({path}, p);
  } catch (const InputError& e) {
    std::fprintf(stderr, "FAIL: %s\n", e.what());
    return 1;
  }
  Counts have;
  for (const TrafficPair& t : got.pairs) {
    have[{t.a, t.b}] = {static_cast<std::int64_t>(t.bytes), static_cast<std::int64_t>(t.messages)};
  }
  int failures = 0;
  for (const auto& [pair, c] : want) {
    const auto it = have.find(pair);
    const std::pair<std::int64_t, std::int64_t> h =
        it == have.end() ? std::pair<std::int64_t, std::int64_t>{0, 0} : it->second;
    if (h != c) {
      std::fprintf(stderr,
                   "FAIL: ranks %d and %d: %lld bytes in %lld messages, expected %lld in %lld\n",
                   pair.first, pair.second, static_cast<long long>(h.first),
                   static_cast<long long>(h.second), static_cast<long long>(c.first),
                   static_cast<long long>(c.second));
      ++failures;
    }
  }
  for (const auto& [pair, c] : have) {
    if (want.count(pair) == 0) {
      std::fprintf(stderr, "FAIL: ranks %d and %d: %lld bytes, expected none\n", pair.first,
                   pair.second, static_cast<long long>(c.first));
      ++failures;
    }
  }
  std::printf("%s: %zu pairs of %d ranks checked, %d wrong\n", path.c_str(), want.size(), p,
              failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace rankshape

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/profile_mpi_test_np" +
                           std::to_string(p) + ".traffic";
  if (r == 0) {
    std::remove(path.c_str());
    setenv("RANKSHAPE_PROFILE_OUT", path.c_str(), 1);
  }
  rankshape::communicate(r, p);
  if (MPI_Finalize() != MPI_SUCCESS) {
    std::fprintf(stderr, "FAIL: MPI_Finalize (the profiler's write) failed\n");
    return 1;
  }
  return r == 0 ? rankshape::compare(p, path) : 0;
}
