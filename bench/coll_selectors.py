#!/usr/bin/env python3
"""Table for bench/coll_selectors.sh: rankshape's collectives against every
SMPI built-in selector, with the link bound of the platform.

  coll_selectors.py OUT_CSV OUT_MD HEADER_MD NAME=DIR ...

NAME: the run's title (platform, layout, ranks); DIR holds coll_latency's
CSV for each selector (SELECTOR.csv, native rows) and for rankshape
(rankshape.csv), platform.xml (the SimGrid platform it ran on) and ranks
(the rank count); SELECTOR.deadlocks and SELECTOR.crashes, where present,
list the collectives and sizes at which that selector's own algorithm
deadlocked or crashed in SimGrid (shown as "deadlock" or "crash", left
out of the best built-in).

The link bound is the time the busiest shared link needs for the bytes
that must cross it whatever the algorithm (full-duplex node links,
backbones and rack uplinks shared by both directions, as SimGrid's
cluster defaults are); latency is left out. Per collective, m bytes per
message (bcast, reduce, allreduce) or per block (allgather), N nodes of
c ranks, K nodes per rack:
  bcast, reduce: every node but the root's receives (sends) m: m / node
    link; a backbone carries that for each node it serves but the root's;
    every rack but the root's receives m over its uplink.
  allreduce: every node sends at least 2 (N - 1) / N m (Patarasuk and
    Yuan); a backbone carries that for each of its nodes; a rack's uplink
    carries m each way (each side must learn the other's sum).
  allgather: every node receives (p - c) m; a backbone carries that for
    each of its nodes; a rack's uplink carries the rest of the job's
    blocks in and its own out.

The log-depth latency model (issue 28's goal 4: barrier and allreduce of
small messages within 2x of it) is the time of a dissemination through
the machine's levels, one message per round: ceil(log2 c) rounds inside a
node, ceil(log2 K) between the nodes of a rack, ceil(log2 R) between R
racks (c, K, R: what the job's ranks fill in blocks), each round one
message's latency over its route: loopback inside a node, node link +
backbone + node link between nodes, and through both racks' backbones and
uplinks between racks. SMPI multiplies the latency of a message under 257 B
by its lat-factor, 2.01467 by default (1 with --flat-factors, the run's
file `factors`); the model does too, and is shown for barrier and
allreduce up to 256 B.
"""
import csv
import os
import re
import sys
import xml.etree.ElementTree as ET

from coll_report import size_name

SELECTORS = ["ompi", "mpich", "mvapich2", "impi"]
# SMPI 3.32's default smpi/lat-factor for messages under 257 B.
SMALL_LAT_FACTOR = 2.01467
SMALL = 256  # bytes: the latency model's rows (barrier counts as 0 B)
GOAL_SLOWDOWN = 1.05
BIG = 64 << 10  # below, latency (left out of the bound) dominates: no bound shown


def rate(text):
    """SimGrid bandwidth ("10Gbps", "100MBps", ...) in bytes per second."""
    m = re.fullmatch(r"([0-9.eE+-]+)\s*([kKMGT]?)(bps|Bps)", text.strip())
    if not m:
        raise ValueError(f"unknown bandwidth '{text}'")
    scale = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}[m.group(2)]
    return float(m.group(1)) * scale / (8 if m.group(3) == "bps" else 1)


def duration(text):
    """SimGrid latency ("2us", "0.2us", "1ms", "0") in seconds."""
    m = re.fullmatch(r"([0-9.eE+-]+)\s*(s|ms|us|ns|ps)?", text.strip())
    if not m:
        raise ValueError(f"unknown latency '{text}'")
    scale = {None: 1, "s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12}[m.group(2)]
    return float(m.group(1)) * scale


def ceil_log2(n):
    return max(0, (n - 1).bit_length())


def radical_count(text):
    n = 0
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return n


class Platform:
    """Racks (clusters) of nodes: the node link, the backbone and, with
    several clusters, each one's uplink to the spine."""

    def __init__(self, path):
        with open(path) as f:
            # SimGrid accepts "--" inside comments, XML (and ElementTree) not.
            root = ET.fromstring(re.sub(r"<!--.*?-->", "", f.read(), flags=re.S))
        clusters = list(root.iter("cluster"))
        if not clusters:
            raise ValueError(f"{path}: no <cluster>: the bound needs a cluster platform")
        first = clusters[0].attrib
        self.racks = len(clusters)
        self.nodes_per_rack = radical_count(first["radical"])
        self.cores = int(first.get("core", "1"))
        self.node_bw = rate(first["bw"])
        self.backbone_bw = rate(first["bb_bw"]) if "bb_bw" in first else None
        links = [l.attrib for l in root.iter("link")]
        uplinks = [rate(l["bandwidth"]) for l in links if l["id"].startswith("uplink")]
        self.uplink_bw = min(uplinks) if self.racks > 1 and uplinks else None
        self.loopback_lat = duration(first.get("loopback_lat", "0"))
        self.node_lat = duration(first.get("lat", "0"))
        self.backbone_lat = duration(first.get("bb_lat", "0"))
        uplink_lats = [duration(l.get("latency", "0")) for l in links
                       if l["id"].startswith("uplink")]
        self.uplink_lat = max(uplink_lats) if uplink_lats else 0.0

    @property
    def nodes(self):
        return self.racks * self.nodes_per_rack

    def bound(self, collective, m, ranks):
        n, k = self.nodes, self.nodes_per_rack
        times = []
        if collective in ("bcast", "reduce"):
            times.append(m / self.node_bw)
            if self.backbone_bw:
                times.append((k if self.racks > 1 else k - 1) * m / self.backbone_bw)
            if self.uplink_bw:
                times.append(m / self.uplink_bw)
        elif collective == "allreduce":
            per_node = 2 * (n - 1) / n * m
            times.append(per_node / self.node_bw)
            if self.backbone_bw:
                times.append(k * per_node / self.backbone_bw)
            if self.uplink_bw:
                times.append(2 * m / self.uplink_bw)
        elif collective == "allgather":
            per_node = (ranks - ranks / n) * m
            times.append(per_node / self.node_bw)
            if self.backbone_bw:
                times.append(k * per_node / self.backbone_bw)
            if self.uplink_bw:
                times.append(ranks * m / self.uplink_bw)
        else:
            return None
        return max(times)


    def latency_model(self, ranks, factor):
        """Seconds of the log-depth latency model (the module's doc) for
        `ranks` placed in blocks; factor: SMPI's latency factor."""
        c = min(self.cores, ranks)
        nodes = -(-ranks // c)
        k = min(self.nodes_per_rack, nodes)
        racks = -(-nodes // k)
        node_hop = 2 * self.node_lat + self.backbone_lat
        rack_hop = 2 * (self.node_lat + self.backbone_lat + self.uplink_lat)
        return factor * (ceil_log2(c) * self.loopback_lat + ceil_log2(k) * node_hop +
                         ceil_log2(racks) * rack_hop)


def read_run(directory):
    """{(collective, bytes): {column: (seconds, choice, first call's
    seconds or None, the model's prediction of the choice or None)}} from
    SELECTOR.csv and rankshape.csv."""
    rows = {}
    for column in SELECTORS + ["rankshape"]:
        path = os.path.join(directory, column + ".csv")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for r in csv.DictReader(f):
                if (r["mode"] == "native") != (column != "rankshape"):
                    continue  # e.g. a rankshape row in a selector's file
                key = (r["collective"], int(r["bytes"]))
                first = r.get("first_seconds") or None  # absent before trials
                predicted = r.get("predicted_seconds") or None  # absent before 2026-11-28
                if predicted is not None and float(predicted) < 0:
                    predicted = None  # not decided
                rows.setdefault(key, {})[column] = (float(r["seconds"]), r.get("choice", ""),
                                                    float(first) if first else None,
                                                    float(predicted) if predicted else None)
    return rows


def read_deadlocks(directory):
    """{(collective, bytes): {selector: "deadlock" or "crash"}} from
    SELECTOR.deadlocks and SELECTOR.crashes (written by coll_selectors.sh
    where SimGrid found the selector's own algorithm deadlocked, or
    crashed)."""
    out = {}
    for s in SELECTORS:
        for suffix, what in ((".deadlocks", "deadlock"), (".crashes", "crash")):
            path = os.path.join(directory, s + suffix)
            if os.path.exists(path):
                for line in open(path):
                    if line.strip():
                        c, b = line.strip().split(",")
                        out.setdefault((c, int(b)), {})[s] = what
    return out


def main(argv):
    if len(argv) < 5:
        sys.exit(__doc__)
    out_csv, out_md, header_md, runs = argv[1], argv[2], argv[3], argv[4:]
    with open(header_md) as h:
        lines = [h.read().rstrip("\n"), ""]
    summary = ["## Summary", "",
               "Goals (issue 28): rankshape never more than 5% slower than the best built-in; "
               "bcast and reduce from 1 MiB at least 2x faster than `ompi` and at 50% of the "
               "link bound or more; allreduce no slower than rankshape's own reduce then bcast, "
               "nor than its reduce_scatter then allgather (where the run measured them).",
               "",
               "| run | (collective, size) | rankshape / best built-in: worst | over 1.05 | "
               "bcast, reduce >= 1 MiB: speedup over ompi, % of bound (best built-in's) | "
               "allreduce slower than its compositions | "
               "barrier, allreduce <= 256 B: rankshape (best built-in) / latency model |",
               "|---|---:|---|---:|---|---|---|"]
    details = []
    with open(out_csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["run", "collective", "bytes"] + [f"{s}_s" for s in SELECTORS] +
                   ["best_builtin", "rankshape_s", "choice", "ratio_vs_best", "speedup_vs_ompi",
                    "bound_s", "rankshape_first_s", "rankshape_predicted_s",
                    "latency_model_s"])
        for spec in runs:
            name, _, directory = spec.partition("=")
            for needed in ("platform.xml", "ranks"):
                if not os.path.exists(os.path.join(directory, needed)):
                    sys.exit(f"coll_selectors.py: {directory}: no {needed}")
            platform = Platform(os.path.join(directory, "platform.xml"))
            with open(os.path.join(directory, "ranks")) as r:
                ranks = int(r.read())
            rows = read_run(directory)
            deadlocks = read_deadlocks(directory)
            flat = os.path.exists(os.path.join(directory, "factors"))
            model = platform.latency_model(ranks, 1.0 if flat else SMALL_LAT_FACTOR)
            latency = []  # "barrier 1.23 (1.10)", ...
            details += [f"### {name}", "",
                        "| collective | size | " + " | ".join(f"{s} us" for s in SELECTORS) +
                        " | best | rankshape us | rankshape / best | speedup vs ompi | bound us | "
                        "% of bound | chosen | first call us | predicted us |",
                        "|---|---:|" + "---:|" * len(SELECTORS) +
                        "---|---:|---:|---:|---:|---:|---|---:|---:|"]
            worst, over, measured, large, accuracy = (0, ""), 0, 0, [], []
            for (collective, b), cols in sorted(rows.items()):
                builtin = {s: cols[s][0] for s in SELECTORS if s in cols}
                if not builtin or "rankshape" not in cols:
                    continue
                measured += 1
                best = min(builtin, key=builtin.get)
                ours, choice, first, predicted = cols["rankshape"]
                if predicted:
                    accuracy.append(ours / predicted)
                ratio = ours / builtin[best]
                # None where the run has no ompi column (a partial run).
                speedup = builtin["ompi"] / ours if "ompi" in builtin else None
                bound = platform.bound(collective, b, ranks)
                what = f"{collective} {size_name(b)}"
                # No model where no latency is known (a platform without one).
                modelled = collective in ("barrier", "allreduce") and b <= SMALL and model > 0
                if modelled:
                    latency.append(f"{collective if collective == 'barrier' else what} "
                                   f"{ours / model:.2f} ({builtin[best] / model:.2f})")
                if ratio > worst[0]:
                    worst = (ratio, what)
                over += ratio > GOAL_SLOWDOWN
                if collective in ("bcast", "reduce") and b >= 1 << 20:
                    large.append(f"{what} {speedup:.2f}x, " if speedup is not None else f"{what} ")
                    large[-1] += (f"{100 * bound / ours:.0f}% "
                                 f"({100 * bound / builtin[best]:.0f}%)")
                w.writerow([name, collective, b] + [builtin.get(s, "") for s in SELECTORS] +
                           [best, ours, choice, f"{ratio:.4f}",
                            f"{speedup:.4f}" if speedup is not None else "",
                            f"{bound:.9f}" if bound else "", first if first is not None else "",
                            predicted if predicted is not None else "",
                            f"{model:.9f}" if modelled else ""])
                details.append(
                    f"| {collective} | {size_name(b)} | " +
                    " | ".join(f"{builtin[s] * 1e6:.1f}" if s in builtin else
                               deadlocks.get((collective, b), {}).get(s, "")
                               for s in SELECTORS) +
                    f" | {best} | {ours * 1e6:.1f} | {ratio:.2f} | " +
                    (f"{speedup:.2f}" if speedup is not None else "") + " | " +
                    (f"{bound * 1e6:.1f} | {100 * bound / ours:.0f}%" if bound and b >= BIG
                     else " | ") +
                    f" | {choice or 'native'} | " +
                    (f"{first * 1e6:.1f}" if first is not None else "") + " | " +
                    (f"{predicted * 1e6:.1f}" if predicted is not None else "") + " |")
            details.append("")
            if latency:
                details += [f"Log-depth latency model: {model * 1e6:.1f} us "
                            f"({'flat factors' if flat else 'SMPI lat-factor 2.01467'}); "
                            f"rankshape (best built-in) / model: {', '.join(latency)}.", ""]
            if accuracy:
                accuracy.sort()
                details += [f"Measured over predicted (the cost model's price of the choice): "
                            f"median {accuracy[len(accuracy) // 2]:.2f}, {accuracy[0]:.2f} to "
                            f"{accuracy[-1]:.2f} over {len(accuracy)} "
                            f"row{'' if len(accuracy) == 1 else 's'}.", ""]
            # Self-consistency (Traff, Gropp and Thakur): allreduce against
            # rankshape's own reduce followed by its bcast, and against its
            # reduce_scatter_block followed by its allgather of the blocks
            # (m / p bytes each), where the run measured them.
            inconsistent, compared = [], 0
            for (collective, b), cols in sorted(rows.items()):
                if collective != "allreduce" or "rankshape" not in cols:
                    continue
                compositions = [("reduce + bcast", [(c, b) for c in ("reduce", "bcast")])]
                if b % (4 * ranks) == 0:  # whole int blocks
                    compositions.append(("reduce_scatter + allgather",
                                         [(c, b // ranks) for c in
                                          ("reduce_scatter_block", "allgather")]))
                for label, keys in compositions:
                    parts = [rows.get(k, {}).get("rankshape") for k in keys]
                    if not all(parts):
                        continue
                    compared += 1
                    both = parts[0][0] + parts[1][0]
                    if cols["rankshape"][0] > both:
                        inconsistent.append(f"{size_name(b)} ({cols['rankshape'][0] / both:.2f}x "
                                            f"{label})")
            summary.append(f"| {name} | {measured} | {worst[0]:.2f} ({worst[1]}) | {over} | "
                           f"{'; '.join(large) or '-'} | {', '.join(inconsistent) or 'none'} "
                           f"({compared} compared) | {'; '.join(latency) or '-'} |")
    with open(out_md, "w") as f:
        f.write("\n".join(lines + summary + ["", "## Tables", ""] + details) + "\n")


if __name__ == "__main__":
    main(sys.argv)
