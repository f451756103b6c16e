#!/usr/bin/env python3
"""Tests of bench/stencil_bench.py's own logic: the nodecart-style baseline,
Spearman's correlation, the peers' stencil and the periods of a pattern."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stencil_bench as sb  # noqa: E402


class NodecartStyle(unittest.TestCase):
    def test_boxes_follow_the_published_rule(self):
        # 32 ranks per node on 8x8x16: primes 2,2,2,2,2 go to the smallest
        # block that still divides: 2x1x1, 2x2x1, 2x2x2, 4x2x2, 4x4x2.
        node_of = [r // 32 for r in range(1024)]
        perm = sb.nodecart_style([8, 8, 16], node_of)
        self.assertEqual(sorted(perm), list(range(1024)))
        boxes = {}
        for x, r in enumerate(perm):
            c = (x // 128, (x // 16) % 8, x % 16)
            boxes.setdefault(node_of[r], []).append(c)
        for cs in boxes.values():
            extent = [max(c[k] for c in cs) - min(c[k] for c in cs) + 1 for k in range(3)]
            self.assertEqual(extent, [4, 4, 2])

    def test_scattered_nodes_and_rank_order_inside(self):
        node_of = [r % 4 for r in range(16)]  # round-robin over 4 nodes of 4
        perm = sb.nodecart_style([4, 4], node_of)
        # Node 0 = ranks 0, 4, 8, 12 in the first 2x2 box, row-major.
        self.assertEqual([perm[0], perm[1], perm[4], perm[5]], [0, 4, 8, 12])

    def test_refuses_unequal_nodes(self):
        self.assertIsNone(sb.nodecart_style([4, 4], [0] * 6 + [1] * 10))


class Spearman(unittest.TestCase):
    def test_known_values(self):
        self.assertAlmostEqual(sb.spearman([1, 2, 3, 4], [10, 20, 30, 40]), 1.0)
        self.assertAlmostEqual(sb.spearman([1, 2, 3, 4], [40, 30, 20, 10]), -1.0)
        # Ties take their mean rank: ranks (0.5, 0.5, 2, 3) against (0, 1, 2, 3).
        self.assertAlmostEqual(sb.spearman([1, 1, 2, 3], [1, 2, 3, 4]), 0.9486832980505138)


class Patterns(unittest.TestCase):
    def test_periods(self):
        self.assertEqual(sb.stencil_periods("stencil", 3), [0, 0, 0])
        self.assertEqual(sb.stencil_periods("stencil:periodic", 2), [1, 1])
        self.assertEqual(sb.stencil_periods("stencil:points=9,periodic=1x0", 2), [1, 0])

    def test_peer_stencil(self):
        self.assertIsNone(sb.peer_stencil("stencil:periodic", 2))
        nine = sb.peer_stencil("stencil:points=9", 2).split("@")
        self.assertEqual(len(nine), 8 * 2)
        self.assertNotIn(["0", "0"], [nine[i:i + 2] for i in range(0, 16, 2)])


if __name__ == "__main__":
    unittest.main()
