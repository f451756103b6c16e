// The nine collectives as a drop-in (PMPI interposition): an unmodified MPI
// program's MPI_Bcast, MPI_Reduce, MPI_Allreduce, MPI_Gather, MPI_Scatter,
// MPI_Allgather, MPI_Reduce_scatter_block, MPI_Alltoall and MPI_Barrier go
// to rankshape::coll::dispatch, which runs either a hierarchical collective
// or the MPI library's own (PMPI_) one. The choice, its caching per
// communicator, the re-entrancy of the library's own MPI calls and the
// environment (RANKSHAPE_COLL, RANKSHAPE_COLL_GROUPS, RANKSHAPE_COLL_RACKS, RANKSHAPE_COLL_TABLE)
// are dispatch's; see lib/coll/dispatch.h.
//
// Use it by preloading librankshape_coll.so (LD_PRELOAD, forwarded to the
// ranks: `mpirun -x LD_PRELOAD=...` for Open MPI, `mpiexec -genv LD_PRELOAD
// ...` for MPICH) or by linking //lib/dropin:collectives into the program.
// Under SimGrid SMPI only linking works: smpirun dlopens a private copy of
// the program per rank with RTLD_DEEPBIND, so the program's calls bind to
// its own copy and libsimgrid before anything preloaded (a preloaded copy
// is loaded but never called); linked, every simulated rank has its own
// copy of this file's and dispatch's state, thread-local state included,
// as long as SMPI privatises (smpirun's default).
//
// Each call:
//   - inter-communicators and MPI_COMM_NULL go straight to the PMPI_ call
//     (which reports its own errors);
//   - otherwise dispatch::<collective>; a code other than MPI_SUCCESS is
//     handed to the communicator's error handler (MPI_ERRORS_ARE_FATAL
//     aborts, MPI_ERRORS_RETURN and user handlers get it as MPI requires)
//     and returned. An exception (none should reach here) is reported on
//     stderr as "rankshape MPI_<Name>: rank R: ..." and becomes
//     MPI_ERR_OTHER the same way; no exception leaves this file but the
//     forced unwinds that end a thread or a simulated rank.
//
// Fortran callers are caught too: see the end of this file.
//
// rankshape_coll_dispatched_calls() (exported, like the MPI symbols) counts
// the calls of this process that took the hierarchical path, so that tests
// and users can tell that the drop-in was active: a program looks it up
// with dlsym(RTLD_DEFAULT, ...) and needs nothing of rankshape.
#include <cxxabi.h>
#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <exception>
#include <string>

#include "lib/coll/dispatch.h"
#include "lib/mpi/communicator.h"
#include "lib/mpi/fortran.h"

#ifdef RANKSHAPE_SMPI
#include <simgrid/Exception.hpp>
#endif

// SMPI's mpi.h turns every MPI name into a macro under TRACE_CALL_LOCATION
// (smpicc's call-location tracing), which would rename the definitions
// below; //third_party/mpi never sets it.
#ifdef TRACE_CALL_LOCATION
#error "build the collectives drop-in without TRACE_CALL_LOCATION"
#endif

namespace rankshape {
namespace {

namespace dispatch = coll::dispatch;

// Outermost calls of this process (any thread) that ran hierarchically.
std::atomic<long> dispatched_calls{0};

// Calls of this file in progress on this thread: the hierarchical
// collectives' own MPI calls come back through here and are not counted.
thread_local int depth = 0;

class Nested {
 public:
  Nested() { ++depth; }
  ~Nested() { --depth; }
  Nested(const Nested&) = delete;
  Nested& operator=(const Nested&) = delete;
  bool outermost() const { return depth == 1; }
};

// True for communicators that dispatch does not handle.
bool passes_through(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return true;
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return true;
  return inter != 0;
}

std::string rank_of(MPI_Comm comm) {
  int rank = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS) return "";
  return "rank " + std::to_string(rank) + ": ";
}

// MPI's way of reporting an error from a call on comm.
int fail(MPI_Comm comm, int code) { return mpi::call_error_handler(comm, code); }

// One intercepted call: native() is the PMPI_ call, dispatched() the
// dispatch:: one; both return an MPI code. Errors are MPI codes; the only
// exceptions let through are the forced unwinds that end a thread
// (pthread_cancel) or a simulated rank (SMPI kills actors so, e.g. after
// MPI_Abort): they must not be survived.
template <typename Native, typename Dispatched>
int intercept(const char* name, MPI_Comm comm, Native native, Dispatched dispatched) {
  try {
    const Nested nested;
    if (passes_through(comm)) return native();
    const int code = dispatched();
    if (nested.outermost() && dispatch::last_choice().rfind("hierarchical", 0) == 0) {
      dispatched_calls.fetch_add(1, std::memory_order_relaxed);
    }
    // dispatch:: has reported any error through comm's handler already.
    return code;
  } catch (const abi::__forced_unwind&) {
    throw;
#ifdef RANKSHAPE_SMPI
  } catch (const simgrid::ForcefulKillException&) {
    throw;
#endif
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rankshape %s: %s%s\n", name, rank_of(comm).c_str(), e.what());
    return fail(comm, MPI_ERR_OTHER);
  } catch (...) {
    std::fprintf(stderr, "rankshape %s: %sunknown error\n", name, rank_of(comm).c_str());
    return fail(comm, MPI_ERR_OTHER);
  }
}

}  // namespace
}  // namespace rankshape

extern "C" long rankshape_coll_dispatched_calls(void) {
  return rankshape::dispatched_calls.load(std::memory_order_relaxed);
}

extern "C" int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  using namespace rankshape;
  return intercept(
      "MPI_Bcast", comm, [&] { return PMPI_Bcast(buffer, count, type, root, comm); },
      [&] { return dispatch::bcast(buffer, count, type, root, comm); });
}

extern "C" int MPI_Reduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                          int root, MPI_Comm comm) {
  using namespace rankshape;
  return intercept(
      "MPI_Reduce", comm, [&] { return PMPI_Reduce(send, recv, count, type, op, root, comm); },
      [&] { return dispatch::reduce(send, recv, count, type, op, root, comm); });
}

extern "C" int MPI_Allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
  using namespace rankshape;
  return intercept(
      "MPI_Allreduce", comm, [&] { return PMPI_Allreduce(send, recv, count, type, op, comm); },
      [&] { return dispatch::allreduce(send, recv, count, type, op, comm); });
}

extern "C" int MPI_Gather(const void* send, int send_count, MPI_Datatype send_type, void* recv,
                          int recv_count, MPI_Datatype recv_type, int root, MPI_Comm comm) {
  using namespace rankshape;
  return intercept(
      "MPI_Gather", comm,
      [&] {
        return PMPI_Gather(send, send_count, send_type, recv, recv_count, recv_type, root, comm);
      },
      [&] {
        return dispatch::gather(send, send_count, send_type, recv, recv_count, recv_type, root,
                                comm);
      });
}

extern "C" int MPI_Scatter(const void* send, int send_count, MPI_Datatype send_type, void* recv,
                           int recv_count, MPI_Datatype recv_type, int root, MPI_Comm comm) {
  using namespace rankshape;
  return intercept(
      "MPI_Scatter", comm,
      [&] {
        return PMPI_Scatter(send, send_count, send_type, recv, recv_count, recv_type, root, comm);
      },
      [&] {
        return dispatch::scatter(send, send_count, send_type, recv, recv_count, recv_type, root,
                                 comm);
      });
}

extern "C" int MPI_Allgather(const void* send, int send_count, MPI_Datatype send_type, void* recv,
                             int recv_count, MPI_Datatype recv_type, MPI_Comm comm) {
  using namespace rankshape;
  return intercept(
      "MPI_Allgather", comm,
      [&] {
        return PMPI_Allgather(send, send_count, send_type, recv, recv_count, recv_type, comm);
      },
      [&] {
        return dispatch::allgather(send, send_count, send_type, recv, recv_count, recv_type, comm);
      });
}

extern "C" int MPI_Reduce_scatter_block(const void* send, void* recv, int count, MPI_Datatype type,
                                        MPI_Op op, MPI_Comm comm) {
  using namespace rankshape;
  return intercept(
      "MPI_Reduce_scatter_block", comm,
      [&] { return PMPI_Reduce_scatter_block(send, recv, count, type, op, comm); },
      [&] { return dispatch::reduce_scatter_block(send, recv, count, type, op, comm); });
}

extern "C" int MPI_Alltoall(const void* send, int send_count, MPI_Datatype send_type, void* recv,
                            int recv_count, MPI_Datatype recv_type, MPI_Comm comm) {
  using namespace rankshape;
  return intercept(
      "MPI_Alltoall", comm,
      [&] { return PMPI_Alltoall(send, send_count, send_type, recv, recv_count, recv_type, comm); },
      [&] {
        return dispatch::alltoall(send, send_count, send_type, recv, recv_count, recv_type, comm);
      });
}

extern "C" int MPI_Barrier(MPI_Comm comm) {
  using namespace rankshape;
  return intercept(
      "MPI_Barrier", comm, [&] { return PMPI_Barrier(comm); },
      [&] { return dispatch::barrier(comm); });
}

#ifndef RANKSHAPE_SMPI
// The nine collectives called from Fortran (mpif.h, use mpi, use mpi_f08).
// Open MPI's Fortran symbols call the PMPI_ layer, and MPICH's mpi_f08
// MPI_Barrier does too, so a C-only drop-in misses them. Each entry point
// converts the handles and the MPI_IN_PLACE and MPI_BOTTOM sentinels and
// calls the C entry point above (bound inside this library:
// -Bsymbolic-functions), never the MPI library's Fortran symbol, which
// under MPICH would come back through the C one and be caught twice.
// ierror is optional (NULL) in mpi_f08. MPICH's mpi_f08 routines with
// buffers (mpi_*_f08ts_, array descriptors) call the C MPI_ functions and
// are caught there.
namespace rankshape {
namespace {

void set_ierror(MPI_Fint* ierror, int code) {
  if (ierror != nullptr) *ierror = code;
}

MPI_Comm comm_c(const MPI_Fint* comm) { return PMPI_Comm_f2c(*comm); }
MPI_Datatype type_c(const MPI_Fint* type) { return PMPI_Type_f2c(*type); }
MPI_Op op_c(const MPI_Fint* op) { return PMPI_Op_f2c(*op); }

}  // namespace
}  // namespace rankshape

// RANKSHAPE_FORTRAN(lower, UPPER, parameters, call): the entry point under
// every name compilers give it (lower_, lower__, lower, UPPER) and
// mpi_f08's (lower_f08_; the same arguments by address).
#define RANKSHAPE_FORTRAN_NAME(name, parameters, call) \
  extern "C" void name parameters { call; }
#define RANKSHAPE_FORTRAN(lower, upper, parameters, call) \
  RANKSHAPE_FORTRAN_NAME(lower##_, parameters, call)      \
  RANKSHAPE_FORTRAN_NAME(lower##__, parameters, call)     \
  RANKSHAPE_FORTRAN_NAME(lower, parameters, call)         \
  RANKSHAPE_FORTRAN_NAME(upper, parameters, call)         \
  RANKSHAPE_FORTRAN_NAME(lower##_f08_, parameters, call)

using rankshape::comm_c;
using rankshape::op_c;
using rankshape::set_ierror;
using rankshape::type_c;
using rankshape::mpi::c_buffer;

RANKSHAPE_FORTRAN(mpi_bcast, MPI_BCAST,
                  (void* buffer, const MPI_Fint* count, const MPI_Fint* type, const MPI_Fint* root,
                   const MPI_Fint* comm, MPI_Fint* ierror),
                  set_ierror(ierror, MPI_Bcast(c_buffer(buffer), *count, type_c(type), *root,
                                               comm_c(comm))))
RANKSHAPE_FORTRAN(mpi_reduce, MPI_REDUCE,
                  (void* send, void* recv, const MPI_Fint* count, const MPI_Fint* type,
                   const MPI_Fint* op, const MPI_Fint* root, const MPI_Fint* comm,
                   MPI_Fint* ierror),
                  set_ierror(ierror, MPI_Reduce(c_buffer(send), c_buffer(recv), *count,
                                                type_c(type), op_c(op), *root, comm_c(comm))))
RANKSHAPE_FORTRAN(mpi_allreduce, MPI_ALLREDUCE,
                  (void* send, void* recv, const MPI_Fint* count, const MPI_Fint* type,
                   const MPI_Fint* op, const MPI_Fint* comm, MPI_Fint* ierror),
                  set_ierror(ierror, MPI_Allreduce(c_buffer(send), c_buffer(recv), *count,
                                                   type_c(type), op_c(op), comm_c(comm))))
RANKSHAPE_FORTRAN(mpi_gather, MPI_GATHER,
                  (void* send, const MPI_Fint* send_count, const MPI_Fint* send_type, void* recv,
                   const MPI_Fint* recv_count, const MPI_Fint* recv_type, const MPI_Fint* root,
                   const MPI_Fint* comm, MPI_Fint* ierror),
                  set_ierror(ierror, MPI_Gather(c_buffer(send), *send_count, type_c(send_type),
                                                c_buffer(recv), *recv_count, type_c(recv_type),
                                                *root, comm_c(comm))))
RANKSHAPE_FORTRAN(mpi_scatter, MPI_SCATTER,
                  (void* send, const MPI_Fint* send_count, const MPI_Fint* send_type, void* recv,
                   const MPI_Fint* recv_count, const MPI_Fint* recv_type, const MPI_Fint* root,
                   const MPI_Fint* comm, MPI_Fint* ierror),
                  set_ierror(ierror, MPI_Scatter(c_buffer(send), *send_count, type_c(send_type),
                                                 c_buffer(recv), *recv_count, type_c(recv_type),
                                                 *root, comm_c(comm))))
RANKSHAPE_FORTRAN(mpi_allgather, MPI_ALLGATHER,
                  (void* send, const MPI_Fint* send_count, const MPI_Fint* send_type, void* recv,
                   const MPI_Fint* recv_count, const MPI_Fint* recv_type, const MPI_Fint* comm,
                   MPI_Fint* ierror),
                  set_ierror(ierror, MPI_Allgather(c_buffer(send), *send_count, type_c(send_type),
                                                   c_buffer(recv), *recv_count, type_c(recv_type),
                                                   comm_c(comm))))
RANKSHAPE_FORTRAN(mpi_reduce_scatter_block, MPI_REDUCE_SCATTER_BLOCK,
                  (void* send, void* recv, const MPI_Fint* count, const MPI_Fint* type,
                   const MPI_Fint* op, const MPI_Fint* comm, MPI_Fint* ierror),
                  set_ierror(ierror,
                             MPI_Reduce_scatter_block(c_buffer(send), c_buffer(recv), *count,
                                                      type_c(type), op_c(op), comm_c(comm))))
RANKSHAPE_FORTRAN(mpi_alltoall, MPI_ALLTOALL,
                  (void* send, const MPI_Fint* send_count, const MPI_Fint* send_type, void* recv,
                   const MPI_Fint* recv_count, const MPI_Fint* recv_type, const MPI_Fint* comm,
                   MPI_Fint* ierror),
                  set_ierror(ierror, MPI_Alltoall(c_buffer(send), *send_count, type_c(send_type),
                                                  c_buffer(recv), *recv_count, type_c(recv_type),
                                                  comm_c(comm))))
RANKSHAPE_FORTRAN(mpi_barrier, MPI_BARRIER, (const MPI_Fint* comm, MPI_Fint* ierror),
                  set_ierror(ierror, MPI_Barrier(comm_c(comm))))
#undef RANKSHAPE_FORTRAN
#undef RANKSHAPE_FORTRAN_NAME
#endif
