#!/usr/bin/env python3
"""Unit tests of graph_bench.py's pure parts: the synthetic instances, the
machine shapes, VieM's graph file, and perms from processing elements."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graph_bench as gb  # noqa: E402


def read_pairs(path):
    lines = [l.split() for l in open(path) if l.strip()]
    assert lines[0] == ["rankshape-traffic", "1"], lines[0]
    return int(lines[1][1]), {(int(a), int(b)): int(n) for a, b, n, _ in lines[2:]}


class SyntheticTest(unittest.TestCase):
    def test_mesh_has_its_neighbours_both_ways(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.traffic")
            gb.synthetic("m", 6, "mesh:2x3", path)
            p, pairs = read_pairs(path)
            self.assertEqual(p, 6)
            # 2x3: 2 rows of 3 (4 row edges) and 3 columns of 2 (3 edges), both ways.
            self.assertEqual(len(pairs), 14)
            self.assertIn((0, 1), pairs)
            self.assertIn((3, 0), pairs)
            self.assertNotIn((2, 3), pairs)

    def test_random_graphs_are_seeded_and_in_range(self):
        with tempfile.TemporaryDirectory() as d:
            for kind in ("rgg", "powerlaw"):
                a, b = os.path.join(d, "a"), os.path.join(d, "b")
                gb.synthetic("x", 200, kind, a, seed=3)
                gb.synthetic("x", 200, kind, b, seed=3)
                self.assertEqual(open(a).read(), open(b).read())
                p, pairs = read_pairs(a)
                self.assertTrue(all(0 <= x < p and 0 <= y < p and x != y for x, y in pairs))
                self.assertGreater(len(pairs), 200)


class MachineTest(unittest.TestCase):
    def test_shapes(self):
        self.assertEqual(gb.machine_shape(1024), (16, 8, 8))
        self.assertEqual(gb.machine_shape(64), (16, 2, 2))
        self.assertEqual(gb.machine_shape(216), (8, 9, 3))
        cores, per_rack, racks = gb.machine_shape(125)
        self.assertEqual(cores * per_rack * racks, 125)

    def test_platform_shape(self):
        self.assertEqual(gb.platform_shape("lvl3-rack8-node8-core16"), (16, 8, 8))
        self.assertEqual(gb.platform_shape("lvl2-node64-core16"), (16, 64, 1))


class PeerFilesTest(unittest.TestCase):
    def test_metis_graph_is_one_based_and_scaled(self):
        with tempfile.TemporaryDirectory() as d:
            traffic, graph = os.path.join(d, "t"), os.path.join(d, "g")
            with open(traffic, "w") as f:
                f.write("rankshape-traffic 1\nranks 3\n0 1 2000 0\n1 0 2000 0\n1 2 4 0\n")
            gb.metis_graph(traffic, graph, bytes_per_message=0)
            lines = open(graph).read().split("\n")
            self.assertEqual(lines[0], "3 2 1")
            self.assertEqual(lines[1], "2 1000")      # vertex 1: neighbour 2 (1-based), weight 1000
            self.assertEqual(lines[2], "1 1000 3 1")  # the light edge scales to 1, not 0
            self.assertEqual(lines[3], "2 1")

    def test_perm_from_slots(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "p")
            # old rank r sits in slot slots[r]; vertex i goes to PE pe[i].
            gb.perm_from_slots([2, 0, 1], [1, 2, 0], path, "test")
            perm = [int(l) for l in open(path) if l.strip() and not l.startswith("#")]
            self.assertEqual(perm, [1, 2, 0])


class SpeedTableTest(unittest.TestCase):
    def test_speedup_only_at_equal_or_better_quality(self):
        rows = []
        for mapper, objective, seconds in (("rankshape", 100.0, "0.5000"), ("rankshape-0.1s", 103.0, "0.0500"),
                                           ("rankshape-0.03s", 105.0, "0.0300"),
                                           ("rankshape-quick", 110.0, "0.0100"),
                                           ("viem-fast", 120.0, "0.1000"), ("viem-eco", 105.0, "1.0000"),
                                           ("viem-strong", 90.0, "9.0000")):
            rows.append({"instance": "m", "machine": "lvl2-block", "mapper": mapper,
                         "objective": objective, "median_seconds": seconds, "seconds": seconds})
        with tempfile.TemporaryDirectory() as d:
            args = type("Args", (), {"out": d, "reps": 1})()
            gb.write_speed_md(args, rows)
            row = [l for l in open(os.path.join(d, "graph_speed.md")) if l.startswith("| m ")][0]
            cells = [c.strip() for c in row.strip().strip("|").split("|")]
            # Against fast the quick run is as good and faster; against eco
            # the shortest budget's is the fastest as good; strong is better
            # than all four.
            self.assertEqual(cells[-3:], ["10.0x quick", "33.3x 0.03 s", "worse (1.1111)"])


if __name__ == "__main__":
    unittest.main()
