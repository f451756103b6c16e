// Pairs measured again while the whole host is slow.
//
// Some machines change speed as a whole for seconds at a time: a virtual
// machine whose CPUs the hypervisor moves apart, a noisy neighbour. On the
// 2-CPU machine CI runs on, a ping-pong between the two CPUs through
// shared memory takes 0.06 us for tens of seconds, then 0.32 us for up to
// 41 s (4 minutes sampled every 0.1 s; bench/slow_phases repeats the
// probe). A measurement that a slow phase starts in the middle of keeps
// slow times for the pairs measured after it began, and measuring them
// again a few seconds later finds the host still slow: a pair inside a
// node then stays dearer than pairs across that were measured before.
//
// So each pass that measures pairs again also measures, beside them,
// reference pairs of the same class: the cheapest pairs, not measured
// again, between the same two nodes (or inside the same node; inside any
// node when all of its own pairs are measured again). How much
// slower the references are in this pass than their kept times tells how
// slow the host is now (per message size, the median over the references,
// at least 1), and a pair measured again keeps the least of its kept time,
// its time in the pass, and that time divided by the slowdown. On a quiet
// host the references take their kept times and nothing is rescaled; a
// pair disturbed on its own (descheduled, a noisy link) is measured again
// as before. Without the nodes known there are no classes, and nothing is
// rescaled.
// A rescaled time is never below the cheapest reference's kept time: the
// slowdown may end between a reference and its pair.
// Example: nodes {0, 1, 2, 3} and {4, 5, 6, 7}, inside 12 us, across
// 30 us; the host slows 3x after (0, 1) and (0, 2) were measured and
// before (1, 2) was: (1, 2) reads 36 us, dearer than every pair across.
// Measured again beside (0, 1), (0, 2) and (0, 3), the references, with
// the host still 3x slow, all four read 36 us, and (1, 2) keeps
// 36 / 3 = 12 us.
#ifndef RANKSHAPE_LIB_MEASURE_RESCALE_H_
#define RANKSHAPE_LIB_MEASURE_RESCALE_H_

#include <utility>
#include <vector>

namespace rankshape {

/// The reference pairs for measuring `again` anew: for every class (the
/// two nodes' pair, by node_of) of a pair in `again`, up to `per_class`
/// pairs of that class not in `again`, the cheapest by m (p x p row-major,
/// symmetric; pairs as (a, b), a < b). A node all of whose pairs are in
/// `again` gets the cheapest pairs inside any node instead. Sorted, each
/// once; empty when node_of is empty.
/// Throws std::invalid_argument on a size mismatch or per_class < 1.
std::vector<std::pair<int, int>> reference_pairs(const std::vector<double>& m, int p,
                                                 const std::vector<int>& node_of,
                                                 const std::vector<std::pair<int, int>>& again,
                                                 int per_class = 3);

/// Merges one pass into the kept times, size by size (kept and pass: one
/// p x p matrix per message size; pass holds the pairs measured in it).
/// Each reference keeps the least of its two times; each pair of `again`
/// the least of its kept time, its pass time and its pass time divided by
/// its class's slowdown (the median over the class's references of pass
/// over kept, at least 1; inside a node without references of its own,
/// over the references inside every node; none without), but not below the
/// least kept time of those references. Returns how many pairs
/// of `again` keep a rescaled time. Throws std::invalid_argument on a size
/// mismatch.
int merge_pass(std::vector<std::vector<double>>& kept, const std::vector<std::vector<double>>& pass,
               int p, const std::vector<int>& node_of,
               const std::vector<std::pair<int, int>>& again,
               const std::vector<std::pair<int, int>>& references);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_MEASURE_RESCALE_H_
