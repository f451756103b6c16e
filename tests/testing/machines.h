// Small hand-made machines for tests.
#ifndef RANKSHAPE_TESTS_TESTING_MACHINES_H_
#define RANKSHAPE_TESTS_TESTING_MACHINES_H_

#include <cstddef>
#include <vector>

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

/// p ranks on two "nodes", old ranks alternating between them (a scrambled
/// job): a dense p x p matrix (row-major) costing 1 inside a node and 100
/// across, so that relabelling moves ranks.
inline std::vector<double> alternating_machine(int p) {
  std::vector<double> m(static_cast<std::size_t>(p) * p, 0);
  for (int a = 0; a < p; ++a) {
    for (int b = 0; b < p; ++b) {
      if (a != b) m[static_cast<std::size_t>(a) * p + b] = a % 2 == b % 2 ? 1 : 100;
    }
  }
  return m;
}

}  // namespace rankshape::testing

#endif  // RANKSHAPE_TESTS_TESTING_MACHINES_H_
