#!/usr/bin/env python3
"""Tests of bench/harness_plot.py on small synthetic results folders.

  /usr/bin/python3 bench/harness_plot_test.py

The Spearman values below are worked out by hand (average ranks for ties,
then the Pearson correlation of the ranks):

Folder "ties": objectives identity 10, random 10, node-aware 5 (metis
skipped), so the objective ranks are 2.5, 2.5, 1 (deviations .5, .5, -1,
sum of squares 1.5).
  allreduce native     2, 3, 1 ms   ranks 2, 3, 1     (0, 1, -1)  1.5/sqrt(1.5*2)  =  0.866
  allreduce rankshape  2, 2, 1 ms   ranks 2.5, 2.5, 1 (the same)                   =  1
  bcast native         100, 102, 101 us  ranks 1, 3, 2 (-1, 1, 0)  0/...           =  0
  bcast rankshape      100, 200, 300 us  ranks 1, 2, 3 (-1, 0, 1) -1.5/sqrt(3)     = -0.866
  mm3d rankshape       3, 2, 1 s    ranks 3, 2, 1     (1, 0, -1)  1.5/sqrt(3)      =  0.866
Folder "plain": objectives identity 10, round-robin 20, node-aware 5, kl 8,
ranks 3, 4, 1, 2, no ties, so rho = 1 - 6 sum(d^2) / (n (n^2 - 1)).
  allreduce native     ranks 3, 4, 2, 1   sum d^2 = 2   1 - 12/60 = 0.8
  allreduce rankshape  ranks 3, 4, 1, 2   = 1
  bcast native         identity and node-aware only: n = 2
  bcast rankshape      ranks 3, 4, 1, 2 within 5%: rho 1 (with a caveat)
  summa rankshape      rho 1, but summary.json claims 0.25
"""
import importlib.util
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "harness_plot.py")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
PNGS = ["time_per_ordering.png", "predicted_vs_measured.png", "speedup.png"]
OUTPUTS = PNGS + ["report.md"]

ORDERINGS_HEADER = ("ordering,algorithm,status,objective,objective_vs_identity,"
                    "relabel_seconds,time_limited")
KERNELS_HEADER = "ordering,kernel,impl,dim,bytes,seconds,speedup_vs_identity"


def load_module():
    spec = importlib.util.spec_from_file_location("harness_plot", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hp = load_module()


def kernel_lines(rows, blank_speedup=()):
    """rows: [(kernel, impl, dim, bytes, {ordering: seconds})] in CSV lines,
    speed-ups computed from identity's seconds (left empty for the
    (kernel, impl, ordering) in blank_speedup)."""
    out = [KERNELS_HEADER]
    for kernel, impl, dim, size, secs in rows:
        for name, s in secs.items():
            speedup = "" if (kernel, impl, name) in blank_speedup else \
                "%.6g" % (secs["identity"] / s)
            out.append("%s,%s,%s,%d,%d,%.9g,%s" % (name, kernel, impl, dim, size, s,
                                                    speedup))
    return out


def correlation(kernel, impl, dim, size, rho, n, best_measured="", best_objective=""):
    return {"kernel": kernel, "impl": impl, "dim": dim, "bytes": size,
            "spearman": rho, "orderings": n, "best_measured": best_measured,
            "best_objective": best_objective}


def summary(correlations, **extra):
    doc = {"testbed": "synthetic 2x2 nodes", "ranks": 8, "grid": [2, 2, 2],
           "cost_source": "model: loaded bandwidth", "measure_seconds": 12.5,
           "wall_seconds": 40.25, "correlations": correlations,
           "unknown_key": {"ignored": True}}
    doc.update(extra)
    return doc


TIES = {
    "orderings": [
        ORDERINGS_HEADER,
        "identity,identity,ok,10,1,0.001,0",
        "random,random(seed 7),ok,10,1,0.002,0",
        "node-aware,node-aware,ok,5,0.5,0.0125,1",
        "metis,metis,skipped: not built with METIS,,,,",
    ],
    "kernels": kernel_lines([
        ("allreduce", "native", 0, 1 << 20,
         {"identity": 2e-3, "random": 3e-3, "node-aware": 1e-3}),
        ("allreduce", "rankshape", 0, 1 << 20,
         {"identity": 2e-3, "random": 2e-3, "node-aware": 1e-3}),
        ("bcast", "native", 1, 4096,
         {"identity": 100e-6, "random": 102e-6, "node-aware": 101e-6}),
        ("bcast", "rankshape", 1, 4096,
         {"identity": 100e-6, "random": 200e-6, "node-aware": 300e-6}),
        ("mm3d", "rankshape", -1, 512,
         {"identity": 3.0, "random": 2.0, "node-aware": 1.0}),
    ], blank_speedup={("mm3d", "rankshape", "random")}),
    "summary": summary([
        correlation("allreduce", "native", 0, 1 << 20, 0.8660254, 3,
                    "node-aware", "node-aware"),
        correlation("allreduce", "rankshape", 0, 1 << 20, 1.0, 3,
                    "node-aware", "node-aware"),
        correlation("bcast", "native", 1, 4096, None, 3, "identity", "node-aware"),
        correlation("bcast", "rankshape", 1, 4096, -0.8660254, 3,
                    "identity", "node-aware"),
        # mm3d: no entry, the script computes it.
    ]),
}

PLAIN = {
    "orderings": [
        ORDERINGS_HEADER,
        "identity,identity,ok,10,1,0.001,0",
        "round-robin,round-robin,ok,20,2,0.001,0",
        "node-aware,node-aware,ok,5,0.5,0.01,0",
        "kl,kl,ok,8,0.8,0.5,1",
    ],
    "kernels": kernel_lines([
        ("allreduce", "native", 0, 65536,
         {"identity": 3e-4, "round-robin": 4e-4, "node-aware": 2e-4, "kl": 1e-4}),
        ("allreduce", "rankshape", 0, 65536,
         {"identity": 3e-4, "round-robin": 4e-4, "node-aware": 1e-4, "kl": 2e-4}),
        ("bcast", "native", 0, 65536, {"identity": 2e-4, "node-aware": 1e-4}),
        ("bcast", "rankshape", 0, 65536,
         {"identity": 103e-6, "round-robin": 104e-6, "node-aware": 100e-6,
          "kl": 101e-6}),
        ("summa", "rankshape", -1, 256,
         {"identity": 3.0, "round-robin": 4.0, "node-aware": 1.0, "kl": 2.0}),
    ]),
    "summary": summary([
        correlation("bcast", "native", 0, 65536, None, 2),
        correlation("summa", "rankshape", -1, 256, 0.25, 4),
        correlation("allreduce", "native", 1, 1 << 20, 0.95, 4),  # no CSV rows
    ]),
}


def write_folder(directory, data):
    import json
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "orderings.csv"), "w") as f:
        f.write("\n".join(data["orderings"]) + "\n")
    with open(os.path.join(directory, "kernels.csv"), "w") as f:
        f.write("\n".join(data["kernels"]) + "\n")
    with open(os.path.join(directory, "summary.json"), "w") as f:
        json.dump(data["summary"], f, indent=1)


def run(directory):
    return subprocess.run([PYTHON, SCRIPT, directory], capture_output=True,
                          text=True, timeout=300)


def png_size(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "%s: not a PNG signature" % path
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13, "%s: no IHDR first" % path
    width, height = struct.unpack(">II", data[16:24])
    assert data[-8:-4] == b"IEND", "%s: no IEND at the end" % path
    return len(data), width, height


def spearman_rows(report):
    """{(kernel, impl, dim, size): [cells]} from the report's Spearman table."""
    lines = report.split("\n")
    start = lines.index("## Predicted against measured")
    rows = {}
    header = None
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if header is None:
            header = cells
            continue
        if set(line) <= set("|-"):
            continue
        row = dict(zip(header, cells))
        rows[(row["kernel"], row["impl"], row["dim"], row["size"])] = row
    return rows


class SpearmanTest(unittest.TestCase):
    def test_average_ranks(self):
        self.assertEqual(hp.average_ranks([10, 10, 5]), [2.5, 2.5, 1.0])
        self.assertEqual(hp.average_ranks([3, 1, 3, 3, 0]), [4.0, 2.0, 4.0, 4.0, 1.0])

    def test_hand_computed(self):
        self.assertAlmostEqual(hp.spearman([1, 2, 3], [10, 20, 30]), 1.0)
        self.assertAlmostEqual(hp.spearman([1, 2, 3], [30, 20, 10]), -1.0)
        self.assertAlmostEqual(hp.spearman([10, 20, 5, 8], [3, 4, 2, 1]), 0.8)
        self.assertAlmostEqual(hp.spearman([10, 10, 5], [2, 3, 1]), 1.5 / 3 ** 0.5)
        self.assertAlmostEqual(hp.spearman([10, 10, 5], [1, 3, 2]), 0.0)
        self.assertAlmostEqual(hp.spearman([10, 10, 5], [2, 2, 1]), 1.0)
        # Times within the tolerance tie: 9.4252 and 9.4273 differ by 0.02%.
        self.assertLess(hp.spearman([1, 1, 2], [9.4273, 9.4252, 10.9]), 1.0)
        self.assertAlmostEqual(hp.spearman([1, 1, 2], [9.4273, 9.4252, 10.9], 0.001), 1.0)
        self.assertEqual(hp.average_ranks([1.0, 1.0005, 1.0015, 5], 0.001), [1.5, 1.5, 3, 4])
        # Ties on both sides: ranks (1.5, 1.5, 3, 4) and (1, 2.5, 2.5, 4):
        # deviations (-1, -1, .5, 1.5), (-1.5, 0, 0, 1.5): 3.75 / sqrt(4.5 * 4.5).
        self.assertAlmostEqual(hp.spearman([1, 1, 2, 3], [1, 2, 2, 3]), 3.75 / 4.5)

    def test_undefined(self):
        self.assertIsNone(hp.spearman([1], [1]))
        self.assertIsNone(hp.spearman([5, 5, 5], [1, 2, 3]))
        self.assertIsNone(hp.spearman([1, 2, 3], [4, 4, 4]))

    def test_formats(self):
        self.assertEqual(hp.fmt_bytes(1 << 20), "1 MiB")
        self.assertEqual(hp.fmt_bytes(1536), "1.5 KiB")
        self.assertEqual(hp.fmt_bytes(100), "100 B")
        self.assertEqual(hp.row_title(("allreduce", 1, 1 << 20), False),
                         "allreduce dim 1, 1 MiB")
        self.assertEqual(hp.row_title(("mm3d", "rankshape", -1, 512), False),
                         "mm3d n=512")
        self.assertEqual(hp.fmt_rho(-1e-17), "0.000")


class ReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="harness_plot_test.")
        cls.results = {}
        for name, data in (("ties", TIES), ("plain", PLAIN)):
            directory = os.path.join(cls.tmp, name)
            write_folder(directory, data)
            if name == "ties":  # an existing heat map gets linked
                shutil.copyfile(os.path.join(cls.tmp, name, "summary.json"),
                                os.path.join(directory, "heatmap-node-aware.png"))
            cls.results[name] = run(directory)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def report(self, name):
        result = self.results[name]
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(self.tmp, name, "report.md"), encoding="utf-8") as f:
            return f.read()

    def test_pngs(self):
        for name in ("ties", "plain"):
            self.assertEqual(self.results[name].returncode, 0, self.results[name].stderr)
            for png in PNGS:
                path = os.path.join(self.tmp, name, png)
                size, width, height = png_size(path)
                self.assertGreater(size, 1000, path)
                self.assertTrue(300 <= width <= 6000, (path, width))
                self.assertTrue(150 <= height <= 6000, (path, height))

    def test_no_temporaries(self):
        for name in ("ties", "plain"):
            left = [f for f in os.listdir(os.path.join(self.tmp, name))
                    if f.endswith(".tmp")]
            self.assertEqual(left, [])

    def test_report_header_and_orderings(self):
        report = self.report("ties")
        for text in ("synthetic 2x2 nodes", "| Ranks | 8 |", "2 x 2 x 2",
                     "model: loaded bandwidth", "12.5 s", "40.2 s",
                     "random(seed 7)", "skipped: not built with METIS",
                     "### allreduce dim 0, 1 MiB", "### bcast dim 1, 4 KiB",
                     "### mm3d n=512", "](time_per_ordering.png)",
                     "](predicted_vs_measured.png)", "](speedup.png)",
                     "](heatmap-node-aware.png)"):
            self.assertIn(text, report)
        for name in ("identity", "random", "node-aware", "metis"):
            self.assertIn("| %s |" % name, report)
        self.assertIn("| node-aware | node-aware | ok | 5 | 0.500 | 12.5 ms | yes |",
                      report)
        for name in ("identity", "round-robin", "node-aware", "kl"):
            self.assertIn("| %s |" % name, self.report("plain"))

    def test_kernel_tables(self):
        report = self.report("ties")
        # allreduce dim 0: node-aware fastest in both columns, speed-up 2.
        self.assertIn("| node-aware | **1 ms** | 2.00× | **1 ms** | 2.00× |", report)
        # mm3d's random speed-up is empty in the CSV: computed as 3 / 2.
        self.assertIn("| random | 2 s | 1.50× |", report)
        self.assertIn("| metis | skipped |", report)

    def test_spearman_ties(self):
        rows = spearman_rows(self.report("ties"))
        expect = {
            ("allreduce", "native", "0", "1 MiB"): ("0.866", "0.866"),
            ("allreduce", "rankshape", "0", "1 MiB"): ("1.000", "1.000"),
            ("bcast", "native", "1", "4 KiB"): ("0.000", "0.000"),
            ("bcast", "rankshape", "1", "4 KiB"): ("-0.866", "-0.866"),
            ("mm3d", "rankshape", "—", "n=512"): ("0.866", "0.866"),
        }
        self.assertEqual(set(rows), set(expect))
        for key, (rho, recomputed) in expect.items():
            self.assertEqual((rows[key]["rho"], rows[key]["recomputed"]),
                             (rho, recomputed), key)
            self.assertEqual(rows[key]["orderings"], "3", key)
        v = {k: r["verdict"] for k, r in rows.items()}
        self.assertEqual(v[("allreduce", "native", "0", "1 MiB")],
                         "does not agree: objective ties: identity = random")
        self.assertEqual(v[("allreduce", "rankshape", "0", "1 MiB")], "agrees")
        bcast_native = v[("bcast", "native", "1", "4 KiB")]
        self.assertTrue(bcast_native.startswith("does not agree: measured times "
                                                "within 5% of each other (spread 2.0%)"),
                        bcast_native)
        self.assertIn("objective ties: identity = random", bcast_native)
        self.assertEqual(v[("bcast", "rankshape", "1", "4 KiB")],
                         "does not agree: objective ties: identity = random; "
                         "the fastest measured, identity, is predicted 2 of 3")
        self.assertEqual(rows[("mm3d", "rankshape", "—", "n=512")]["best measured"],
                         "node-aware")
        self.assertNotIn("note:", self.report("ties"))

    def test_spearman_plain(self):
        rows = spearman_rows(self.report("plain"))
        v = {k: (r["rho"], r["recomputed"], r["orderings"], r["verdict"])
             for k, r in rows.items()}
        self.assertEqual(v[("allreduce", "native", "0", "64 KiB")],
                         ("0.800", "0.800", "4", "does not agree: the fastest measured, kl, "
                          "is predicted 2 of 4"))
        self.assertEqual(v[("allreduce", "rankshape", "0", "64 KiB")],
                         ("1.000", "1.000", "4", "agrees"))
        self.assertEqual(v[("bcast", "native", "0", "64 KiB")],
                         ("1.000", "1.000", "2",
                          "does not agree: fewer than 3 orderings (2)"))
        rho, _, _, verdict = v[("bcast", "rankshape", "0", "64 KiB")]
        self.assertEqual(rho, "1.000")
        self.assertTrue(verdict.startswith("agrees (caveat: measured times within 5%"),
                        verdict)
        # summary.json's rho is shown (and judged), the mismatch noted.
        self.assertEqual(v[("summa", "rankshape", "—", "n=256")],
                         ("0.250", "1.000", "4",
                          "does not agree (note: summary.json says rho 0.250, "
                          "recomputed 1.000)"))
        self.assertEqual(v[("allreduce", "native", "1", "1 MiB")],
                         ("0.950", "—", "4", "agrees (note: not in kernels.csv)"))
        stderr = self.results["plain"].stderr
        self.assertIn("summary.json's spearman 0.250, recomputed from the CSVs 1.000",
                      stderr)
        self.assertIn("no rows in kernels.csv", stderr)


LINKS = {
    "orderings": PLAIN["orderings"],
    # predicted ranks 3, 4, 1, 2 against times 4, 3, 2, 1: sum d^2 = 4,
    # rho 1 - 24/60 = 0.6; the link loads rank as the times (rho 1). In
    # the bcast row one ordering has no link load: no rho.
    "kernels": [
        KERNELS_HEADER + ",predicted,link_load",
        "identity,allreduce,native,0,65536,4e-4,1,10,4",
        "round-robin,allreduce,native,0,65536,3e-4,1.33,20,3",
        "node-aware,allreduce,native,0,65536,2e-4,2,5,2",
        "kl,allreduce,native,0,65536,1e-4,4,8,1",
        "identity,bcast,native,0,65536,4e-4,1,10,4",
        "round-robin,bcast,native,0,65536,3e-4,1.33,20,3",
        "node-aware,bcast,native,0,65536,2e-4,2,5,",
        "kl,bcast,native,0,65536,1e-4,4,8,1",
    ],
    "summary": summary([]),
}


class LinkLoadTest(unittest.TestCase):
    def test_link_load_rho_and_cause(self):
        tmp = tempfile.mkdtemp(prefix="harness_plot_test.")
        try:
            write_folder(tmp, LINKS)
            result = run(tmp)
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(os.path.join(tmp, "report.md"), encoding="utf-8") as f:
                rows = spearman_rows(f.read())
        finally:
            shutil.rmtree(tmp)
        allreduce = rows[("allreduce", "native", "0", "64 KiB")]
        self.assertEqual((allreduce["rho"], allreduce["link load rho"]), ("0.600", "1.000"))
        self.assertEqual(allreduce["verdict"],
                         "does not agree: the fastest measured, kl, is predicted 2 of 4; "
                         "the link load ranks them with rho 1.000: contention on links "
                         "that nodes or racks share, which pair costs do not see")
        bcast = rows[("bcast", "native", "0", "64 KiB")]
        self.assertEqual(bcast["link load rho"], "—")
        self.assertNotIn("link load ranks", bcast["verdict"])


class BadInputTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="harness_plot_test.")
        write_folder(self.dir, TIES)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def replace_line(self, name, line, text):
        path = os.path.join(self.dir, name)
        with open(path) as f:
            lines = f.read().split("\n")
        lines[line - 1] = text
        with open(path, "w") as f:
            f.write("\n".join(lines))

    def assert_fails(self, *needles):
        before = sorted(os.listdir(self.dir))
        result = run(self.dir)
        self.assertEqual(result.returncode, 1, result.stderr)
        for needle in needles:
            self.assertIn(needle, result.stderr)
        self.assertEqual(sorted(os.listdir(self.dir)), before)
        for name in OUTPUTS:
            self.assertFalse(os.path.exists(os.path.join(self.dir, name)), name)
        return result

    def test_non_numeric_seconds(self):
        self.replace_line("kernels.csv", 4,
                          "node-aware,allreduce,native,0,1048576,abc,2")
        self.assert_fails("kernels.csv:4:", "column 6 'seconds'", "'abc'")

    def test_missing_column(self):
        self.replace_line("orderings.csv", 1, ORDERINGS_HEADER.replace(
            ",relabel_seconds", ""))
        self.assert_fails("orderings.csv:1:", "missing column 'relabel_seconds'")

    def test_field_count(self):
        self.replace_line("orderings.csv", 3, "random,random,ok,10,1,0.002")
        self.assert_fails("orderings.csv:3:", "6 fields, the header has 7")

    def test_bad_time_limited(self):
        self.replace_line("orderings.csv", 2, "identity,identity,ok,10,1,0.001,yes")
        self.assert_fails("orderings.csv:2:", "'time_limited'")

    def test_unknown_ordering(self):
        self.replace_line("kernels.csv", 2,
                          "scotch,allreduce,native,0,1048576,0.002,1")
        self.assert_fails("kernels.csv:2:", "'scotch' is not in orderings.csv")

    def test_missing_file(self):
        os.unlink(os.path.join(self.dir, "kernels.csv"))
        self.assert_fails("kernels.csv: missing file")

    def test_bad_json(self):
        with open(os.path.join(self.dir, "summary.json"), "w") as f:
            f.write('{\n "testbed": "x",\n "ranks": 8,,\n}\n')
        self.assert_fails("summary.json:3:", "invalid JSON")

    def test_json_missing_key(self):
        import json
        doc = dict(TIES["summary"])
        del doc["wall_seconds"]
        with open(os.path.join(self.dir, "summary.json"), "w") as f:
            json.dump(doc, f)
        self.assert_fails("summary.json: missing key 'wall_seconds'")

    def test_old_outputs_kept(self):
        self.assertEqual(run(self.dir).returncode, 0)
        with open(os.path.join(self.dir, "report.md"), "rb") as f:
            old = f.read()
        before = sorted(os.listdir(self.dir))
        self.replace_line("kernels.csv", 3, "random,allreduce,native,0,1048576,,1")
        result = run(self.dir)
        self.assertEqual(result.returncode, 1)
        self.assertIn("kernels.csv:3:", result.stderr)
        self.assertEqual(sorted(os.listdir(self.dir)), before)
        with open(os.path.join(self.dir, "report.md"), "rb") as f:
            self.assertEqual(f.read(), old)


if __name__ == "__main__":
    unittest.main()
