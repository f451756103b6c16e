// Pipelined hierarchical bcast, reduce and allreduce (HAN's scheme): the
// message is cut into segments of whole elements, and each segment moves
// through the levels with non-blocking native calls, so that level j works
// on segment i while level j + 1 works on segment i + 1. Used by
// collectives.cc when a configuration has segment_bytes > 0; arguments as
// there (recv of reduce is significant at the root only). Throws
// mpi::MpiError.
#ifndef RANKSHAPE_LIB_COLL_PIPELINE_H_
#define RANKSHAPE_LIB_COLL_PIPELINE_H_

#include <mpi.h>

#include <cstdint>

#include "lib/coll/hierarchy.h"

namespace rankshape::coll {

/// False under SMPI: SimGrid 3.32's non-blocking reductions give wrong
/// results with user-defined operations, and with several in flight on
/// one communicator (a sum of 100,000 doubles in 4 ranks); there the
/// levels run unpipelined.
bool can_pipeline();

/// root's data must already be at its top-level representative.
void pipelined_bcast(void* buffer, int count, MPI_Datatype type, int top_root, const Hierarchy& h,
                     std::int64_t segment_bytes);
/// Reduces acc (this rank's contribution, overwritten) to the first member
/// of the top communicator (always rank 0 there: MPICH 4.0 mishandles
/// MPI_IN_PLACE at other roots, pmodels/mpich#6540).
void pipelined_reduce(void* acc, int count, MPI_Datatype type, MPI_Op op, const Hierarchy& h,
                      std::int64_t segment_bytes);
/// In place on buffer.
void pipelined_allreduce(void* buffer, int count, MPI_Datatype type, MPI_Op op, const Hierarchy& h,
                         std::int64_t segment_bytes);

}  // namespace rankshape::coll

#endif  // RANKSHAPE_LIB_COLL_PIPELINE_H_
