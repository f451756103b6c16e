// The traffic profiler's counts: bytes and messages this process sent to
// every rank of MPI_COMM_WORLD, and their collection into one traffic file
// at MPI_Finalize (lib/io/traffic.h, rankshape's format, directed lines).
//
// Counts are recorded after a call succeeds, with the destination
// translated from the call's communicator (the remote group of an
// inter-communicator) to MPI_COMM_WORLD; MPI_PROC_NULL and sends to
// oneself are not counted. A communicator's description (this process's
// rank, the size, every rank's world rank) is made once and kept as an
// attribute of it (dropped with it): a call then asks MPI only for its
// datatype's size. A point-to-point send with the last one's arguments is
// counted inline and asks MPI nothing (record_send()); a collective that
// repeats the last one (same call, communicator, bytes and root) is only
// counted, and its sends added later (repeat_last()): it asks MPI nothing
// either. Counting is thread-safe (atomic additions, locked under
// MPI_THREAD_MULTIPLE only).
#ifndef RANKSHAPE_LIB_PROFILE_RECORDER_H_
#define RANKSHAPE_LIB_PROFILE_RECORDER_H_

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "lib/profile/algorithms.h"

namespace rankshape::profile {

/// Where the traffic file goes: $RANKSHAPE_PROFILE_OUT, else
/// "rankshape.traffic" in the working folder of rank 0.
std::string output_path();

/// What the profiler keeps of a communicator, made at its first use.
struct CommInfo {
  int rank = 0;  // this process's
  int size = 0;
  bool inter = false;
  /// The world rank of each rank (of the remote group of an
  /// inter-communicator); empty for MPI_COMM_WORLD itself.
  std::vector<int> world;
};
/// comm's, kept as its attribute (freed with it); null before MPI_Init or
/// when MPI cannot describe comm.
const CommInfo* comm_info(MPI_Comm comm);

// Every call reads `forwarding`. In a shared object the default TLS model
// asks the loader for the address on each access (__tls_get_addr); a
// preloaded or linked-in profiler is there from the start, so the static
// TLS block serves (SMPI dlopens programs, so it keeps the default there).
#ifdef RANKSHAPE_SMPI
#define RANKSHAPE_FAST_TLS
#else
#define RANKSHAPE_FAST_TLS __attribute__((tls_model("initial-exec")))
#endif

namespace detail {
/// The last point-to-point send (below MPI_THREAD_MULTIPLE only): its
/// arguments as passed and where its counts go, so that a loop of like
/// sends asks MPI nothing and calls nothing (an 8-byte exchange between
/// two ranks takes ~250 ns with both ranks' wrappers on its path; the
/// wrapper's one-rank cost went from 24 to 14 ns, bench/profile_overhead.sh).
/// Forgotten when its communicator or datatype is freed: the handle may
/// come back as another.
struct LastSend {
  bool valid = false;
  MPI_Comm comm = MPI_COMM_NULL;
  int dest = -1;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::int64_t bytes = 0;
  std::atomic<std::int64_t>* bytes_to = nullptr;  // null: not counted (oneself)
  std::atomic<std::int64_t>* messages_to = nullptr;
};
extern LastSend last_send;
/// > 0 while a Fortran entry point forwards (forwarding_from_fortran()).
extern thread_local int forwarding RANKSHAPE_FAST_TLS;
void record_new_send(MPI_Comm comm, int dest, int count, MPI_Datatype type);
}  // namespace detail

/// Counts count elements of type sent to rank dest of comm (not while a
/// Fortran entry point forwards: that entry point counts it). A repeat of
/// the last send's arguments is counted here, inline.
inline void record_send(MPI_Comm comm, int dest, int count, MPI_Datatype type) {
  detail::LastSend& l = detail::last_send;
  if (l.valid && l.comm == comm && l.dest == dest && l.count == count && l.type == type &&
      detail::forwarding == 0) {
    if (l.bytes_to != nullptr) {
      l.bytes_to->store(l.bytes_to->load(std::memory_order_relaxed) + l.bytes,
                        std::memory_order_relaxed);
      l.messages_to->store(l.messages_to->load(std::memory_order_relaxed) + 1,
                           std::memory_order_relaxed);
    }
    return;
  }
  detail::record_new_send(comm, dest, count, type);
}
/// Counts a collective's sends from this rank (ranks of comm).
void record_sends(const CommInfo& comm, const Sends& sends);
/// What decides a collective's sends from this rank, when its arguments
/// are one block (not per-rank counts): the call, its communicator, the
/// block (count elements of type) and the root.
struct CollectiveCall {
  MPI_Comm comm = MPI_COMM_NULL;
  int call = 0;  // which collective (the caller's numbering)
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int root = 0;
};
/// Below MPI_THREAD_MULTIPLE, and unless the call is forwarded from
/// Fortran: if call repeats the last keyed collective (same call,
/// communicator, root and bytes), counts it as one more repeat and returns
/// true (its sends are added at MPI_Finalize, when its communicator is
/// freed, or when another keyed collective comes). The same count and
/// datatype as last time are recognised without asking MPI anything, so a
/// loop of small collectives costs a few comparisons per call. False
/// otherwise, and under MPI_THREAD_MULTIPLE.
bool repeat_last(const CollectiveCall& call);
/// Counts a keyed collective's sends (ranks of comm; bytes: its block),
/// and remembers them for repeat_last().
void record_keyed(const CollectiveCall& call, std::int64_t bytes, const CommInfo& comm,
                  const Sends& sends);
/// At MPI_Type_free: type's handle may come back as a datatype of another
/// size, so repeat_last() must ask for the size again.
void forget_datatype(MPI_Datatype type);
/// This thread's buffer for a collective's sends, emptied (its capacity
/// kept: no allocation per call once warm).
Sends& scratch_sends();
/// Bytes of count elements of type (0 if the type has no size).
std::int64_t bytes_of(int count, MPI_Datatype type);
/// Bytes of counts[j] elements of type, for j < n.
std::vector<std::int64_t> blocks(int n, const int* counts, MPI_Datatype type);
/// The ranks comm's neighbourhood collectives send to, in their order
/// (MPI_PROC_NULL included): per dimension the source and the destination
/// of MPI_Cart_shift by 1; a graph's neighbours; a distributed graph's
/// destinations. Empty without a topology or when a call fails.
std::vector<int> out_neighbours(MPI_Comm comm);

/// Persistent send requests: Start and Startall count what the request
/// sends (Send_init and its kin register it, Request_free forgets it).
void register_persistent(MPI_Request request, MPI_Comm comm, int dest, int count,
                         MPI_Datatype type);
void record_start(MPI_Request request);
void forget_persistent(MPI_Request request);

/// Collective over MPI_COMM_WORLD, before PMPI_Finalize: gathers every
/// rank's counts to rank 0, which writes them to output_path() and says so
/// on stderr. Returns MPI_SUCCESS, or an MPI error code after a message on
/// stderr (the counts are then lost; nothing is left half-written).
int write_at_finalize();

/// True while a Fortran entry point forwards to the MPI library's own
/// Fortran symbol: MPICH's come back through the C entry points, which
/// must not count the call again.
bool forwarding_from_fortran();

class FortranForward {
 public:
  FortranForward();
  ~FortranForward();
  FortranForward(const FortranForward&) = delete;
  FortranForward& operator=(const FortranForward&) = delete;
};

}  // namespace rankshape::profile

#endif  // RANKSHAPE_LIB_PROFILE_RECORDER_H_
