// The collectives on any communicator, each call choosing between the
// hierarchical algorithms (collectives.h, with a configuration) and the MPI
// library's own (PMPI_) collective. Signatures and return codes are MPI's.
//
// The first collective call on a communicator builds its context once and
// caches it on the communicator (an MPI attribute, freed with it): the
// hierarchy (sockets and nodes, Hierarchy::machine_groups, and with
// RANKSHAPE_COLL_RACKS=auto the racks above them that timing the node
// leaders shows, racks.h; or the groups
// given to set_groups), per-level cost parameters fitted from a short measurement,
// and the rows of the tuning table for its level sizes. Where the table
// has no row, the first call of each collective in each size class (up to
// 2^k bytes) is a trial: the MPI library's own call, the cost model's two
// best hierarchical configurations and its best with each other top-level
// algorithm that it prices within 2x of its best, rankshape's flat
// algorithm by the textbook rules
// (config.h), and for allreduce this communicator's own reduce then bcast
// and its own reduce_scatter_block then allgather (decided first) are
// timed on scratch buffers of that size (3 runs each after a warm-up, the
// slowest rank's median; 1 under SMPI, whose simulated times repeat) and
// the fastest serves every later call of the
// class; native wins ties. A
// model misjudges the MPI library's own algorithms, so it never overrules
// native unmeasured (issue 28's "no regression"), except where trials are
// skipped: 0 bytes, and where any rank cannot hold the scratch buffers
// (over its trial memory, below, or out of memory; the ranks agree before
// the first run). Every rank makes the same choice: the inputs are agreed
// on when the context is built, trial times and vetoes are agreed, and the
// choice depends only on values that MPI requires to match (message size
// in bytes, operation, root).
//
// Environment (read once, at the first call):
//   RANKSHAPE_COLL=auto|hierarchical|native   auto (default): the tuning
//       table, else a trial (above), else the cost model, which falls back
//       to native when it predicts no gain; hierarchical: always the
//       hierarchical path when the communicator spans several nodes (for
//       tests); native: never.
//   RANKSHAPE_COLL_TABLE=FILE   a tuning table written by coll_tune.
//   RANKSHAPE_COLL_RACKS=auto|off   auto: find racks above the machine's
//       nodes (racks.h); off (default): nodes are the top. Off by default:
//       a hierarchy with racks prices calls far better, but its trials
//       cannot choose the algorithms that run over all node leaders at once,
//       and on SMPI's lvl3-rack4-node8-core8 some calls were then slower
//       (docs/benchmarks.md, "Racks found by timing").
//   RANKSHAPE_COLL_GROUPS=blocks:N|dealt:N   pretend that nodes are blocks
//       of N consecutive ranks, or ranks dealt round-robin over N nodes
//       (testing hierarchical paths on one machine).
//   RANKSHAPE_COLL_TRIAL_MEMORY=BYTES   the most memory a trial may take on
//       a rank: its scratch buffers, counted twice for the algorithms' own
//       scratch (default 67108864, 64 MiB; 0: no trials).
//
// Calls made while a dispatched call is running on the same thread (the
// library's own use of MPI, seen through an interposition library) go
// straight to the native collective.
#ifndef RANKSHAPE_LIB_COLL_DISPATCH_H_
#define RANKSHAPE_LIB_COLL_DISPATCH_H_

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lib/coll/workload.h"

namespace rankshape::coll::dispatch {

int bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm);
int reduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, int root,
           MPI_Comm comm);
int allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int gather(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
           MPI_Datatype recv_type, int root, MPI_Comm comm);
int scatter(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
            MPI_Datatype recv_type, int root, MPI_Comm comm);
int allgather(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
              MPI_Datatype recv_type, MPI_Comm comm);
int reduce_scatter_block(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm);
int alltoall(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
             MPI_Datatype recv_type, MPI_Comm comm);
int barrier(MPI_Comm comm);

/// The functions above, for Workload::run.
const Calls& calls();

/// Collective: give comm an explicit hierarchy (group tables as for
/// Hierarchy, finest first) before its first dispatched call, e.g. nodes
/// and racks known from measurement. Throws std::invalid_argument for
/// tables that do not fit, std::logic_error if comm already has a context.
void set_groups(MPI_Comm comm, std::vector<std::vector<int>> groups);

/// What the last dispatched call on this thread ran: "native" or
/// "hierarchical" followed by its configuration (for tests and reports).
const std::string& last_choice();

/// The cost model's price (seconds) of what the last dispatched call on
/// this thread ran (model.h's predict() of its configuration; for native,
/// the best flat algorithm), so that reports can set it beside the time
/// measured; -1 when the call was not decided (no hierarchy, an
/// inter-communicator, RANKSHAPE_COLL=native).
double last_predicted();

/// One alternative timed in a trial: its configuration (Config::describe),
/// seconds, and the cost model's price of it (seconds, model.h's predict()).
struct Trial {
  std::string config;
  double seconds = 0;
  double predicted = 0;
};

/// The alternatives the last dispatched call on this thread timed to make
/// its choice, native first; empty when it made none (the choice was
/// known, or came from a table or the model alone).
const std::vector<Trial>& last_trials();

/// This process's trial memory (bytes of scratch buffers per rank), over
/// RANKSHAPE_COLL_TRIAL_MEMORY; negative: back to the setting. A program
/// short of memory on some ranks may set it there alone: a trial needs
/// every rank's room.
void set_trial_memory(std::int64_t bytes);

/// Communicators that hold a context now (for tests: contexts are built
/// once per communicator and freed with it).
std::size_t contexts();

}  // namespace rankshape::coll::dispatch

#endif  // RANKSHAPE_LIB_COLL_DISPATCH_H_
