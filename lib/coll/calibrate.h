// Fits the cost model's parameters for a hierarchy: per level, alpha and
// beta from round trips between two members of each level communicator
// (8 B and 64 KiB, the median of a few), the loaded beta from every member
// of every level communicator sending at once (a shift by half the level,
// which crosses its bisection: shared links and oversubscribed switches
// show), gamma from timing a local reduction. Every rank gets the same model (the worst of all
// groups of a level), so that every rank makes the same choices from it.
#ifndef RANKSHAPE_LIB_COLL_CALIBRATE_H_
#define RANKSHAPE_LIB_COLL_CALIBRATE_H_

#include <vector>

#include "lib/coll/hierarchy.h"
#include "lib/coll/model.h"

namespace rankshape::coll {

/// Members of the largest level j communicator, for j = 0 .. depth (the
/// key of the tuning table). Local: every rank computes the same.
std::vector<int> level_sizes(const Hierarchy& h);

/// Collective over h.comm(); takes a few milliseconds on real machines.
Model calibrate(const Hierarchy& h);

}  // namespace rankshape::coll

#endif  // RANKSHAPE_LIB_COLL_CALIBRATE_H_
