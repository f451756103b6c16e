#!/usr/bin/env python3
"""Tests of bench/stencil_bench.py's own logic: the nodecart-style baseline,
Spearman's correlation, the peers' stencil, the periods of a pattern, the
time tables rebuilt from earlier runs' outputs and the racks part's
regrouping of a peer's node boxes."""
import csv
import json
import os
import sys
import tempfile
import types
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


class TablePart(unittest.TestCase):
    def write_run(self, base, config, shape, seconds, missing=None, commit=None):
        d = os.path.join(base, "stencil", "time", config, shape)
        os.makedirs(d)
        with open(os.path.join(d, "halo.csv"), "w") as f:
            f.write("labelling,bytes,seconds,messages\n")
            for name, t in seconds.items():
                f.write("%s,65536,%s,4\n" % (name, t))
        labellings = [{"name": "/x/%s.perm" % n, "objective": i + 1.0,
                       "stencil": {"levels": [{"crossing_pairs": 10 * i, "busiest_pairs": i}]}}
                      for i, n in enumerate(seconds)]
        json.dump({"labellings": labellings}, open(os.path.join(d, "evaluate.json"), "w"))
        # As the kept outputs: no .perm files.
        if commit:
            open(os.path.join(base, "stencil", "time", config, "commit.txt"), "w").write(commit + "\n")
        if missing:
            open(os.path.join(d, missing + ".log"), "w").write("error: ignores --dims\n")

    def test_rows_from_two_runs_and_the_missing_peers(self):
        with tempfile.TemporaryDirectory() as tmp:
            one, two, out = (os.path.join(tmp, n) for n in ("one", "two", "out"))
            self.write_run(one, "lvl2-node64-core16-block", "2d-5point",
                           {"identity": 0.004, "rankshape-stencil": 0.002}, missing="nodecart",
                           commit="abc1234")
            self.write_run(two, "lvl2-node128-core32-scattered", "3d-7point",
                           {"identity": 0.009, "hyperplane": 0.003, "rankshape-stencil": 0.003})
            os.makedirs(out)
            a = types.SimpleNamespace(out=out, reps=2, sources=[one, two])
            rows = sb.table_part(a)
            timed = [r for r in rows if r["bytes"]]
            self.assertEqual(len(timed), 5)
            self.assertEqual({r["ranks"] for r in timed}, {1024, 4096})
            mine = [r for r in timed if r["ordering"] == "rankshape-stencil" and r["ranks"] == 1024][0]
            self.assertEqual((mine["seconds"], mine["objective"], mine["node_pairs"]), ("0.002", 2.0, 10))
            na = [r for r in rows if r["ordering"] == "nodecart" and r["ranks"] == 1024]
            self.assertEqual(na[0]["busiest_node"], "n/a: error: ignores --dims")
            # A timed ordering is not also listed as having no labelling.
            self.assertEqual([r for r in rows if not r["bytes"] and r["ordering"] == "hyperplane"
                              and r["ranks"] == 4096], [])
            self.assertEqual({r["run"] for r in rows if r["ranks"] == 1024}, {"abc1234"})
            self.assertEqual({r["run"] for r in rows if r["ranks"] == 4096}, {"not recorded"})
            written = list(csv.DictReader(open(os.path.join(out, "stencil_time.csv"))))
            self.assertEqual(len(written), len(rows))
            md = open(os.path.join(out, "stencil_time.md")).read()
            self.assertIn("| lvl2-node128-core32 | 4096 | scattered | 3d-7point 16x16x16 |", md)
            self.assertIn("- abc1234: lvl2-node64-core16 block", md)
            self.assertIn("- not recorded: lvl2-node128-core32 scattered", md)

    def test_no_outputs_is_an_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            a = types.SimpleNamespace(out=tmp, reps=2, sources=[os.path.join(tmp, "none")])
            with self.assertRaises(SystemExit) as e:
                sb.table_part(a)
            self.assertIn("found no time outputs", str(e.exception))



class RackRegrouping(unittest.TestCase):
    def test_neighbours_with_and_without_periods(self):
        self.assertEqual(sb.stencil_neighbours([2, 3], [0, 0])[0], [3, 1])
        self.assertEqual(sorted(sb.stencil_neighbours([2, 3], [0, 1])[0]), [1, 2, 3])
        self.assertEqual(sum(len(ns) for ns in sb.stencil_neighbours([4, 4], [1, 1])), 64)

    def test_boxes_move_whole_and_racks_get_neighbouring_boxes(self):
        # 1x8 grid, 8 nodes of 1 rank, 2 racks of 4; the peer put the nodes
        # on the grid alternating between the racks: 7 pairs cross racks.
        node_of = list(range(8))
        rack_of_node = {n: n // 4 for n in range(8)}
        perm = [0, 4, 1, 5, 2, 6, 3, 7]
        out = sb.regroup_into_racks(perm, node_of, rack_of_node,
                                    sb.stencil_neighbours([1, 8], [0, 0]), starts=5)
        self.assertEqual(sorted(out), list(range(8)))
        racks = [rack_of_node[node_of[r]] for r in out]
        crossing = sum(racks[x] != racks[x + 1] for x in range(7))
        self.assertEqual(crossing, 1)  # two halves of 4

    def test_nodes_of_unequal_size_are_refused(self):
        with self.assertRaises(SystemExit) as e:
            sb.regroup_into_racks([0, 1, 2], [0, 0, 1], {0: 0, 1: 1},
                                  sb.stencil_neighbours([1, 3], [0, 0]))
        self.assertIn("nodes of one size", str(e.exception))

    def test_a_box_keeps_its_positions_together(self):
        # 2x4 grid, 4 nodes of 2 ranks (columns as boxes), 2 racks of 2 nodes.
        node_of = [r // 2 for r in range(8)]
        rack_of_node = {n: n // 2 for n in range(4)}
        perm = [0, 2, 4, 6, 1, 3, 5, 7]  # column k holds node k's two ranks
        out = sb.regroup_into_racks(perm, node_of, rack_of_node,
                                    sb.stencil_neighbours([2, 4], [0, 0]), starts=5)
        for col in range(4):
            self.assertEqual(node_of[out[col]], node_of[out[4 + col]])
        racks = [rack_of_node[node_of[out[c]]] for c in range(4)]
        self.assertEqual(sum(racks[c] != racks[c + 1] for c in range(3)), 1)

if __name__ == "__main__":
    unittest.main()
