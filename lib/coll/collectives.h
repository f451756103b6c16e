// Hierarchical collectives over the levels of a Hierarchy, with MPI's
// semantics: any root, MPI_IN_PLACE, count 0, derived datatypes (send and
// receive types may differ where MPI allows it), predefined and
// user-defined operations. Each level runs the MPI library's own
// collective; data moves up the levels (reduce, gather) and back down
// (bcast, scatter).
//
// Rank order: buffers are always in the caller's rank order. When the
// hierarchy's groups are not contiguous blocks of ranks (relabelled
// communicators), blocks travel in hierarchical order and are permuted at
// the ends. A non-commutative operation is reduced in rank order only when
// the hierarchy is ordered(); the hierarchical reductions require it
// (dispatch.h falls back to the native call otherwise).
//
// Each function is collective over h.comm() and returns MPI_SUCCESS or the
// error code of the MPI call that failed.
#ifndef RANKSHAPE_LIB_COLL_COLLECTIVES_H_
#define RANKSHAPE_LIB_COLL_COLLECTIVES_H_

#include <mpi.h>

#include "lib/coll/config.h"
#include "lib/coll/hierarchy.h"

namespace rankshape::coll {

/// config: the per-level algorithms and the segment size of a pipeline, a
/// flat algorithm, or for allreduce a composition of two collectives
/// (config.h); its `hierarchical` flag is not looked at.
int bcast(void* buffer, int count, MPI_Datatype type, int root, const Hierarchy& h,
          const Config& config = {});
int reduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, int root,
           const Hierarchy& h, const Config& config = {});
int allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
              const Hierarchy& h, const Config& config = {});
int gather(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
           MPI_Datatype recv_type, int root, const Hierarchy& h);
int scatter(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
            MPI_Datatype recv_type, int root, const Hierarchy& h);
/// allgather and reduce_scatter_block: config only says whether to run a
/// flat algorithm (config.flat) instead of the hierarchy.
int allgather(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
              MPI_Datatype recv_type, const Hierarchy& h, const Config& config = {});
int reduce_scatter_block(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                         const Hierarchy& h, const Config& config = {});
/// Node-aware: level 0 groups aggregate at their leaders, which exchange
/// among themselves (coarser levels are not used).
int alltoall(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
             MPI_Datatype recv_type, const Hierarchy& h);
int barrier(const Hierarchy& h, const Config& config = {});

}  // namespace rankshape::coll

#endif  // RANKSHAPE_LIB_COLL_COLLECTIVES_H_
