// Racks (and coarser levels) found by measuring: what MPI_Comm_split_type
// cannot tell. The leaders of the coarsest known groups (one per node)
// time round trips between every pair (lib/measure/pingpong.h), and the
// jumps in those times (groupings_by_gaps() in lib/model/link_load.h, the
// rule relabel uses on measured costs) give the levels above the nodes.
//
// Example: SMPI's lvl3-rack4-node8-core8 (4 racks of 8 nodes of 8 cores; 10
// Gb/s node links, one 10 Gb/s uplink per rack). With every pair of a round
// measuring at once (a one-off run that printed the times), 64 KiB took 114
// us one way between nodes of a rack and 303 to 655 us between racks, whose
// uplinks the round's other pairs share: one jump of 2.7x, so the 32 node
// leaders fall into 4 racks of 8 and the hierarchy gets three levels
// (cores, nodes, racks) instead of two. Its cost model then prices steps
// inside a rack apart from those between racks (calibrate.h), instead of
// every step at the dearest pair's cost. The dispatcher uses it with
// RANKSHAPE_COLL_RACKS=auto (dispatch.h says why not by default).
#ifndef RANKSHAPE_LIB_COLL_RACKS_H_
#define RANKSHAPE_LIB_COLL_RACKS_H_

#include <mpi.h>

#include <vector>

#include "lib/measure/pingpong.h"

namespace rankshape::coll {

/// Most leaders measured: the pairs' times are p^2 values on the leaders'
/// first rank, and the rounds grow with p.
constexpr int kMaxRackLeaders = 2048;
/// The message whose round-trip time decides.
constexpr std::size_t kRackMessageBytes = 65536;

/// What with_found_racks() measures: 8 B and kRackMessageBytes, 3 round
/// trips each after one warm-up, no watchdog, no second pass.
PingPongOptions rack_pingpong_options();

/// Collective over comm. groups: tables as Hierarchy takes them (finest
/// first, e.g. Hierarchy::machine_groups), not empty. Returns them with the
/// levels found above the coarsest one appended (each a table over comm's
/// ranks), or unchanged when none is found, when there are fewer than 3 or
/// more than kMaxRackLeaders coarsest groups. Every rank returns the same
/// tables. MPI errors throw std::runtime_error; a last table that does not
/// place comm's ranks, or bad options, std::invalid_argument on every rank.
/// options: for tests (PingPongOptions::inject slows chosen pairs).
std::vector<std::vector<int>> with_found_racks(
    MPI_Comm comm, std::vector<std::vector<int>> groups,
    const PingPongOptions& options = rack_pingpong_options());

}  // namespace rankshape::coll

#endif  // RANKSHAPE_LIB_COLL_RACKS_H_
