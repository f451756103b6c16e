#!/usr/bin/env python3
"""Unit tests of irregular_bench.py's pure parts: synth's count lists, the
guest graphs, VieM's padded hierarchy and the repair of positions VieM
puts on padding."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import irregular_bench as ib  # noqa: E402


class ParsingTest(unittest.TestCase):
    def test_count_lists_expand_repeats(self):
        self.assertEqual(ib.count_list("48*2,4"), [48, 48, 4])
        nodes, islands, sockets, torus = ib.machine_of(["16*3,15", "--islands", "2,2", "--sockets", "2"])
        self.assertEqual((nodes, islands, sockets, torus), ([16, 16, 16, 15], [2, 2], 2, None))
        self.assertEqual(ib.machine_of(["4*4", "--torus", "2x2"])[3], "2x2")

    def test_every_instance_names_a_consistent_machine(self):
        names = set()
        for name, grid, pattern, args, _ in ib.INSTANCES:
            self.assertNotIn(name, names)
            names.add(name)
            nodes, islands, _, torus = ib.machine_of(args)
            size = 1
            for d in grid.split("x"):
                size *= int(d)
            self.assertEqual(size, sum(nodes), name)
            self.assertEqual(sum(islands), len(nodes), name)
            if torus:
                places = 1
                for d in torus.split("x"):
                    places *= int(d)
                self.assertEqual(places, len(nodes), name)
        self.assertGreaterEqual(len(ib.INSTANCES), 20)


class GraphTest(unittest.TestCase):
    def test_fibres_pair_every_two_ranks_of_a_row_or_column(self):
        p, pairs = ib.neighbours("2x3", "fibres")
        self.assertEqual(p, 6)
        # 2 rows of 3 (3 pairs each) and 3 columns of 2 (1 pair each).
        self.assertEqual(pairs, [(0, 1), (0, 2), (0, 3), (1, 2), (1, 4), (2, 5), (3, 4), (3, 5), (4, 5)])

    def test_stencils_pair_face_neighbours_and_wrap_when_periodic(self):
        _, open_pairs = ib.neighbours("3x3", "stencil")
        self.assertEqual(len(open_pairs), 12)
        _, periodic = ib.neighbours("3x3", "stencil:periodic")
        self.assertEqual(len(periodic), 18)
        self.assertIn((0, 2), periodic)
        self.assertNotIn((0, 2), open_pairs)


class VieMTest(unittest.TestCase):
    def test_hierarchy_is_padded_to_the_largest_node_and_island(self):
        levels, pe_of = ib.viem_hierarchy([3, 3, 2], [2, 1])
        self.assertEqual(levels, [(3, 1), (2, 10), (2, 40)])
        # Node 2 (island 1, its first node) starts at PE (1 * 2 + 0) * 3 = 6.
        self.assertEqual(pe_of[(2, 0)], 6)
        self.assertEqual(pe_of[(2, 1)], 7)
        self.assertNotIn((2, 2), pe_of)
        self.assertEqual(len(pe_of), 8)

    def test_positions_on_padding_move_to_a_free_core_of_their_node_first(self):
        # PEs 0-3 hold ranks 10-13 (two nodes of 2 cores); PE 4 is padding.
        rank_at_pe = {0: 10, 1: 11, 2: 12, 3: 13}
        # Positions 0-3 on PEs 0, 4, 2, 3: position 1 sits on padding, and
        # PE 1 (node 0, where PE 4 is not) is the free one.
        perm, moved = ib.perm_from_viem([0, 4, 2, 3, 1], 4, rank_at_pe, 2)
        self.assertEqual((perm, moved), ([10, 11, 12, 13], 1))
        perm, moved = ib.perm_from_viem([3, 2, 1, 0], 4, rank_at_pe, 2)
        self.assertEqual((perm, moved), ([13, 12, 11, 10], 0))


if __name__ == "__main__":
    unittest.main()
