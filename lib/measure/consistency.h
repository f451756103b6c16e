// What measured costs must look like, and the pairs that do not.
//
// Descheduling (a partner, or a busy-polling rank on the same core, losing
// its CPU in the middle of a ping-pong) only ever adds time, and hits the
// same pairs in every repetition, so it shows as pairs much dearer than the
// structure around them. Two checks find them:
// - triangle: a pair (a, b) costs more than `factor` times the cheaper of
//   the paths through a third rank c, max(cost(a, c), cost(c, b)). On a
//   machine whose costs form a hierarchy (cores, sockets, nodes, racks),
//   cost(a, b) <= max(cost(a, c), cost(c, b)) for every c; on a torus it
//   is off by at most the hop ratio, well under 3.
// - node order: with the nodes known (MPI_COMM_TYPE_SHARED), pairs inside a
//   node should be cheaper than pairs across. With m_in and m_out the
//   medians of the two, a pair inside a node dearer than m_out is suspect
//   (a machine whose two kinds of pairs overlap a little, such as shared
//   memory across sockets against a fast network, is not; a pair across
//   that is cheap is not either: descheduling only adds time, so measuring
//   it again could not change it). When m_in >= m_out the whole
//   measurement is inverted. Pairs inside a node dearer than the cheapest
//   pair across are listed apart (overlap): worth measuring again, but not
//   wrong on their own.
// Example, 6 ranks on 2 nodes {0, 1, 2}, {3, 4, 5}: inside 15 us, across
// 50 us, but (0, 1) measured at 4 ms. Triangle: via rank 2, max(15, 15) =
// 15 us, and 4 ms > 3 x 15 us; node order: 4 ms > 50 us, the median across.
// (0, 1) is suspect twice over and is measured again.
#ifndef RANKSHAPE_LIB_MEASURE_CONSISTENCY_H_
#define RANKSHAPE_LIB_MEASURE_CONSISTENCY_H_

#include <utility>
#include <vector>

namespace rankshape {

struct ConsistencyCheck {
  std::vector<std::pair<int, int>> suspects;  // (a, b), a < b, sorted, each once
  int triangle = 0;                           // suspects by the triangle check
  int node_order = 0;                         // suspects by the node order check
  /// Inside-node pairs dearer than the cheapest across-node pair, suspects
  /// or not: (a, b), a < b, sorted.
  std::vector<std::pair<int, int>> overlap;
  bool inverted = false;  // inside-node pairs not cheaper than across, in the median
  double inside_median = 0, across_median = 0;  // 0 when there are none
};

/// m: p x p row-major, symmetric (only a < b is read). node_of: the node
/// of every rank, or empty (no node order check). The triangle check looks
/// through up to max_thirds ranks c (all of them for small p; otherwise
/// the same spread-out sample for every pair), so large p stay cheap.
/// Throws std::invalid_argument on a size mismatch or factor < 1.
ConsistencyCheck check_consistency(const std::vector<double>& m, int p,
                                   const std::vector<int>& node_of, double factor = 3,
                                   int max_thirds = 64);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_MEASURE_CONSISTENCY_H_
