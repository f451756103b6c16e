// Small hand-made machines for tests.
#ifndef RANKSHAPE_TESTS_TESTING_MACHINES_H_
#define RANKSHAPE_TESTS_TESTING_MACHINES_H_

#include "lib/model/costs.h"

namespace rankshape::testing {

/// nodes x cores, cost 1 between two cores of a node and `between` across
/// nodes (one rack); ranks are left for the test to place.
inline StructuredSpec flat_machine(int nodes, int cores, double between) {
  StructuredSpec s;
  s.cores_per_node = cores;
  s.core_costs.assign(static_cast<std::size_t>(cores) * cores, 1);
  for (int c = 0; c < cores; ++c) s.core_costs[static_cast<std::size_t>(c) * cores + c] = 0;
  s.nodes = nodes;
  s.rack_costs = {between};
  return s;
}

}  // namespace rankshape::testing

#endif  // RANKSHAPE_TESTS_TESTING_MACHINES_H_
