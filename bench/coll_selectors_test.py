#!/usr/bin/env python3
"""Tests of bench/coll_selectors.py on hand-made platforms and results.

  /usr/bin/python3 bench/coll_selectors_test.py

The bounds worked out by hand, 1 MiB (m = 1,048,576 B):
  2 levels, 4 nodes of 2 cores, 8 Gb/s node links (1 GB/s), 16 Gb/s
  backbone (2 GB/s):
    bcast: max(m / 1e9, 3 m / 2e9) = 1.5 m / 1e9 = 1572.864 us
    allreduce: per node 2 * 3/4 m = 1.5 m; max(1.5 m / 1e9, 4 * 1.5 m / 2e9)
      = 3 m / 1e9 = 3145.728 us
    allgather (1 MiB blocks, 8 ranks): per node (8 - 2) m = 6 m;
      max(6 m / 1e9, 4 * 6 m / 2e9) = 12 m / 1e9 = 12582.912 us
  3 levels, 2 racks of 2 nodes of 2 cores, node links 1 GB/s, rack
  backbones 4 GB/s, uplinks 0.5 GB/s:
    bcast: max(m / 1e9, 2 m / 4e9, m / 0.5e9) = 2 m / 1e9 = 2097.152 us
    allreduce: max(1.5 m / 1e9, 2 * 1.5 m / 4e9, 2 m / 0.5e9) = 4 m / 1e9
"""
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "coll_selectors.py")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

spec = importlib.util.spec_from_file_location("coll_selectors", SCRIPT)
cs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cs)

M = 1 << 20

TWO_LEVELS = """<?xml version='1.0'?>
<platform version="4.1"><zone id="world" routing="Full">
  <cluster id="c" prefix="n" suffix="" radical="0-3" speed="1Gf" core="2"
           bw="8Gbps" lat="2us" bb_bw="16Gbps" bb_lat="1us"/>
</zone></platform>
"""

THREE_LEVELS = """<?xml version='1.0'?>
<platform version="4.1"><zone id="world" routing="Full">
  <cluster id="rack0" prefix="r0n" suffix="" radical="0-1" speed="1Gf" core="2"
           bw="1GBps" lat="2us" bb_bw="4GBps" bb_lat="1us" router_id="rack0-router"/>
  <cluster id="rack1" prefix="r1n" suffix="" radical="0-1" speed="1Gf" core="2"
           bw="1GBps" lat="2us" bb_bw="4GBps" bb_lat="1us" router_id="rack1-router"/>
  <link id="uplink0" bandwidth="500MBps" latency="5us"/>
  <link id="uplink1" bandwidth="500MBps" latency="5us"/>
</zone></platform>
"""


def two_level_run(d):
    """A run folder under d: the 2-level platform, 8 ranks."""
    run = os.path.join(d, "run")
    os.mkdir(run)
    write(os.path.join(run, "platform.xml"), TWO_LEVELS)
    write(os.path.join(run, "ranks"), "8\n")
    return run


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def read(path):
    with open(path) as f:
        return f.read()


class BoundTest(unittest.TestCase):
    def platform(self, text):
        with tempfile.TemporaryDirectory() as d:
            write(os.path.join(d, "p.xml"), text)
            return cs.Platform(os.path.join(d, "p.xml"))

    def test_two_levels(self):
        p = self.platform(TWO_LEVELS)
        self.assertEqual((p.racks, p.nodes, p.cores), (1, 4, 2))
        self.assertAlmostEqual(p.bound("bcast", M, 8), 1.5 * M / 1e9)
        self.assertAlmostEqual(p.bound("reduce", M, 8), 1.5 * M / 1e9)
        self.assertAlmostEqual(p.bound("allreduce", M, 8), 3 * M / 1e9)
        self.assertAlmostEqual(p.bound("allgather", M, 8), 12 * M / 1e9)
        self.assertIsNone(p.bound("alltoall", M, 8))

    def test_three_levels(self):
        p = self.platform(THREE_LEVELS)
        self.assertEqual((p.racks, p.nodes_per_rack), (2, 2))
        self.assertAlmostEqual(p.bound("bcast", M, 8), 2 * M / 1e9)
        self.assertAlmostEqual(p.bound("allreduce", M, 8), 4 * M / 1e9)

    def test_latency_model(self):
        # 2 levels, 8 ranks: 1 round inside a node (no loopback latency:
        # 0), 2 between 4 nodes at 2 + 1 + 2 us.
        p = self.platform(TWO_LEVELS)
        self.assertAlmostEqual(p.latency_model(8, 1.0), 10e-6)
        self.assertAlmostEqual(p.latency_model(8, 2.0), 20e-6)
        self.assertAlmostEqual(p.latency_model(2, 1.0), 0.0)  # one node
        self.assertAlmostEqual(p.latency_model(5, 1.0), 10e-6)  # 3 nodes: 2 rounds
        # 3 levels: 1 round between the 2 nodes of a rack (5 us), 1 between
        # the racks: 2 (2 + 1 + 5) us.
        p = self.platform(THREE_LEVELS)
        self.assertAlmostEqual(p.latency_model(8, 1.0), 21e-6)
        self.assertAlmostEqual(p.latency_model(4, 1.0), 5e-6)  # one rack

    def test_bad_latency_is_named(self):
        with self.assertRaisesRegex(ValueError, "2 hours"):
            cs.duration("2 hours")

    def test_bad_bandwidth_is_named(self):
        with self.assertRaisesRegex(ValueError, "12Xbps"):
            cs.rate("12Xbps")


class ReportTest(unittest.TestCase):
    def test_table_compares_with_the_best_builtin(self):
        with tempfile.TemporaryDirectory() as d:
            run = two_level_run(d)
            times = {"ompi": 0.004, "mpich": 0.003, "mvapich2": 0.002, "impi": 0.005}
            for s, t in times.items():
                write(os.path.join(run, s + ".csv"),
                      "collective,bytes,mode,label,seconds,choice\n"
                      f"bcast,{M},native,{s},{t},\n")
            write(os.path.join(run, "rankshape.csv"),
                  "collective,bytes,mode,label,seconds,choice,first_seconds,predicted_seconds\n"
                  f'bcast,{M},rankshape,rankshape,0.0021,"hierarchical levels=native,chain",'
                  "0.0301,0.0014\n")
            header = os.path.join(d, "header.md")
            write(header, "# title\n")
            out_csv, out_md = os.path.join(d, "o.csv"), os.path.join(d, "o.md")
            subprocess.run([PYTHON, SCRIPT, out_csv, out_md, header, "tiny=" + run], check=True)
            rows = read(out_csv).splitlines()
            self.assertEqual(len(rows), 2)
            row = rows[1].split(",")
            self.assertEqual(row[7], "mvapich2")  # the best built-in
            self.assertIn("1.0500", rows[1])  # 2.1 ms / 2 ms
            self.assertIn("1.9048", rows[1])  # 4 ms / 2.1 ms
            md = read(out_md)
            # 1.05 is not over the goal; the bound is 1573 us, 75% of 2.1 ms
            # (79% of mvapich2's 2 ms).
            self.assertIn("| tiny | 1 | 1.05 (bcast 1 MiB) | 0 | bcast 1 MiB 1.90x, 75% (79%) |"
                          " none (0 compared) | - |", md)
            self.assertIn("1572.9 | 75%", md)
            # The first call (its trial included) is shown beside the choice.
            self.assertIn("| hierarchical levels=native,chain | 30100.0 | 1400.0 |", md)
            self.assertTrue(rows[1].endswith(",0.0301,0.0014,"))  # no latency model
            # 2.1 ms measured against 1.4 ms predicted.
            self.assertIn("median 1.50, 1.50 to 1.50 over 1 row.", md)

    def test_barrier_and_small_allreduce_against_the_latency_model(self):
        # The 2-level platform's model at 8 ranks: 10 us x 2.01467; with
        # flat factors (the run's file `factors`), 10 us.
        for flat, model in ((False, 20.1467e-6), (True, 10e-6)):
            with tempfile.TemporaryDirectory() as d:
                run = two_level_run(d)
                if flat:
                    write(os.path.join(run, "factors"), "flat\n")
                header = "collective,bytes,mode,label,seconds,choice\n"
                rows = [("barrier", 0, 40e-6, 30e-6), ("allreduce", 8, 50e-6, 60e-6),
                        ("allreduce", 1024, 90e-6, 80e-6)]  # over 256 B: not modelled
                write(os.path.join(run, "ompi.csv"), header + "".join(
                    f"{c},{b},native,ompi,{t},\n" for c, b, t, _ in rows))
                write(os.path.join(run, "rankshape.csv"), header + "".join(
                    f"{c},{b},rankshape,rankshape,{t},native\n" for c, b, _, t in rows))
                write(os.path.join(d, "h.md"), "# t\n")
                out_csv, out_md = os.path.join(d, "o.csv"), os.path.join(d, "o.md")
                subprocess.run([PYTHON, SCRIPT, out_csv, out_md, os.path.join(d, "h.md"),
                                "r=" + run], check=True)
                md = read(out_md)
                want = (f"allreduce 8 B {60e-6 / model:.2f} ({50e-6 / model:.2f}); "
                        f"barrier {30e-6 / model:.2f} ({40e-6 / model:.2f}) |")
                self.assertIn(want, md)
                self.assertIn(f"Log-depth latency model: {model * 1e6:.1f} us", md)
                lines = {r.split(",")[1] + r.split(",")[2]: r for r in read(out_csv).splitlines()}
                self.assertTrue(lines["barrier0"].endswith(f",{model:.9f}"))
                self.assertTrue(lines["allreduce1024"].endswith(","))

    def test_allreduce_slower_than_reduce_and_bcast_is_reported(self):
        with tempfile.TemporaryDirectory() as d:
            run = two_level_run(d)
            rows = {"bcast": 1.0, "reduce": 2.0, "allreduce": 3.5}
            header = "collective,bytes,mode,label,seconds,choice\n"
            write(os.path.join(run, "ompi.csv"), header + "".join(
                f"{c},1024,native,ompi,{t},\n" for c, t in rows.items()))
            write(os.path.join(run, "rankshape.csv"), header + "".join(
                f"{c},1024,rankshape,rankshape,{t},native\n" for c, t in rows.items()))
            write(os.path.join(d, "h.md"), "# t\n")
            out_md = os.path.join(d, "o.md")
            subprocess.run([PYTHON, SCRIPT, os.path.join(d, "o.csv"), out_md,
                            os.path.join(d, "h.md"), "r=" + run], check=True)
            self.assertIn("| 1 KiB (1.17x reduce + bcast) (1 compared) |", read(out_md))

    def test_allreduce_against_reduce_scatter_then_allgather(self):
        # 8 ranks: an allreduce of 1 KiB against blocks of 128 B.
        with tempfile.TemporaryDirectory() as d:
            run = two_level_run(d)
            rows = [("allreduce", 1024, 3.0), ("reduce", 1024, 2.0), ("bcast", 1024, 2.0),
                    ("reduce_scatter_block", 128, 1.0), ("allgather", 128, 1.5),
                    ("allreduce", 8, 1.0)]  # 8 B: no whole blocks, not compared
            header = "collective,bytes,mode,label,seconds,choice\n"
            write(os.path.join(run, "ompi.csv"), header + "".join(
                f"{c},{b},native,ompi,{t},\n" for c, b, t in rows))
            write(os.path.join(run, "rankshape.csv"), header + "".join(
                f"{c},{b},rankshape,rankshape,{t},native\n" for c, b, t in rows))
            write(os.path.join(d, "h.md"), "# t\n")
            out_md = os.path.join(d, "o.md")
            subprocess.run([PYTHON, SCRIPT, os.path.join(d, "o.csv"), out_md,
                            os.path.join(d, "h.md"), "r=" + run], check=True)
            self.assertIn("| 1 KiB (1.20x reduce_scatter + allgather) (2 compared) |", read(out_md))

    def test_a_selector_that_deadlocked_or_crashed_is_named_and_left_out(self):
        with tempfile.TemporaryDirectory() as d:
            run = two_level_run(d)
            header = "collective,bytes,mode,label,seconds,choice\n"
            write(os.path.join(run, "ompi.csv"), header + "reduce,1024,native,ompi,0.004,\n")
            write(os.path.join(run, "mvapich2.csv"), header)
            write(os.path.join(run, "mvapich2.deadlocks"), "reduce,1024\n")
            write(os.path.join(run, "impi.crashes"), "reduce,1024\n")
            write(os.path.join(run, "rankshape.csv"),
                  header + "reduce,1024,rankshape,rankshape,0.002,native\n")
            write(os.path.join(d, "h.md"), "# t\n")
            out_csv, out_md = os.path.join(d, "o.csv"), os.path.join(d, "o.md")
            subprocess.run([PYTHON, SCRIPT, out_csv, out_md, os.path.join(d, "h.md"), "r=" + run],
                           check=True)
            self.assertIn("| reduce | 1 KiB | 4000.0 |  | deadlock | crash | ompi | 2000.0 |",
                          read(out_md))
            self.assertEqual(read(out_csv).splitlines()[1].split(",")[7], "ompi")

    def test_missing_platform_fails(self):
        with tempfile.TemporaryDirectory() as d:
            header = os.path.join(d, "header.md")
            write(header, "# title\n")
            r = subprocess.run([PYTHON, SCRIPT, os.path.join(d, "o.csv"), os.path.join(d, "o.md"),
                                header, "x=" + d], capture_output=True, text=True)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("no platform.xml", r.stderr)


if __name__ == "__main__":
    unittest.main()
