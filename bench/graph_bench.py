#!/usr/bin/env python3
"""Traffic graphs: rankshape's mapping against the peers, side by side.

Run through bench/graph_bench.sh, which builds the tools and passes --bin
(relabel, evaluate, synth) and --smpi-bin (traffic_replay, measure built
for SMPI). See that script for what is measured; this file holds the
instances and machines, runs them and writes the tables.
"""
import argparse
import csv
import json
import math
import os
import random
import subprocess
import sys
import time

import stencil_bench as sb
from harness_plot import spearman

# Synthetic instances: name, ranks, generator, what it is.
SYNTHETIC = [
    ("mesh2d-1024", 1024, "mesh:32x32", "2-D 5-point mesh, row-major ranks"),
    ("mesh3d-1024", 1024, "mesh:16x8x8", "3-D 7-point mesh, row-major ranks"),
    ("rgg-1024", 1024, "rgg", "random geometric graph (unit square, mean degree 8), ranks at random"),
    ("powerlaw-1024", 1024, "powerlaw", "preferential attachment (2 edges per new vertex), ranks in arrival order"),
    ("mesh2d-4096", 4096, "mesh:64x64", "2-D 5-point mesh"),
    ("rgg-4096", 4096, "rgg", "random geometric graph, ranks at random"),
]
# Profiled programs (data/traffic): quality at the largest size, time at 64.
APPS_QUALITY = ["cg-256", "ft-256", "hpcg-256", "lulesh-216", "minife-256",
                "cg-64", "ft-64", "hpcg-64", "lulesh-64", "minife-64"]
APPS_TIME = ["cg-64", "ft-64", "hpcg-64", "lulesh-64", "minife-64"]
# Machines for the quality part: kind, placement.
MACHINES = [("lvl2", "block"), ("lvl3", "block"), ("lvl3", "scattered"), ("torus", "scattered")]
# Simulated platforms for the time part: name, ranks, instances.
TIME_PLATFORMS = [
    ("lvl2-node16-core4", 64, APPS_TIME),
    ("lvl3-rack4-node4-core4", 64, APPS_TIME),
    ("lvl2-node64-core16", 1024, ["mesh2d-1024", "rgg-1024", "powerlaw-1024"]),
    ("lvl3-rack8-node8-core16", 1024, ["mesh2d-1024", "rgg-1024", "powerlaw-1024"]),
]
OURS = "rankshape"
PEERS = ["scotch", "metis", "viem", "treematch"]
ORDERINGS = ["identity"] + PEERS + [OURS]
# Level costs of the synthetic machines (synth's: same socket, same rack,
# across racks); VieM and TreeMatch get the same numbers.
COST_NODE, COST_RACK, COST_NETWORK = 1, 10, 40


def write_traffic(path, p, pairs):
    """pairs: {(a, b): (bytes, messages)}, a < b; both directions written."""
    with open(path, "w") as f:
        f.write("rankshape-traffic 1\nranks %d\n" % p)
        for (a, b), (nbytes, messages) in sorted(pairs.items()):
            f.write("%d %d %d %d\n%d %d %d %d\n" % (a, b, nbytes, messages, b, a, nbytes, messages))


def synthetic(name, p, kind, path, seed=1):
    rng = random.Random(seed)
    pairs = {}
    if kind.startswith("mesh:"):
        dims = [int(x) for x in kind[5:].split("x")]
        for x in range(p):
            c, r = [], x
            for d in reversed(dims):
                c.append(r % d)
                r //= d
            c.reverse()
            for k in range(len(dims)):
                if c[k] + 1 < dims[k]:
                    y = x + math.prod(dims[k + 1:])
                    pairs[(x, y)] = (65536 * 10, 10)
    elif kind == "rgg":
        radius = math.sqrt(8 / (math.pi * p))
        points = [(rng.random(), rng.random()) for _ in range(p)]
        cell = {}
        for i, (px, py) in enumerate(points):
            cell.setdefault((int(px / radius), int(py / radius)), []).append(i)
        for i, (px, py) in enumerate(points):
            cx, cy = int(px / radius), int(py / radius)
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    for j in cell.get((cx + dx, cy + dy), []):
                        if j > i:
                            d = math.hypot(px - points[j][0], py - points[j][1])
                            if d < radius:
                                pairs[(i, j)] = (int(1024 + 65536 * (1 - d / radius)), 1)
    elif kind == "powerlaw":
        targets = [0, 1]
        pairs[(0, 1)] = (65536, 1)
        for v in range(2, p):
            chosen = set()
            while len(chosen) < min(2, v):
                chosen.add(targets[rng.randrange(len(targets))])
            for u in chosen:
                pairs[(u, v)] = (1024 * rng.randint(1, 64), 1)
                targets += [u, v]
    else:
        raise ValueError(kind)
    write_traffic(path, p, pairs)


def machine_shape(p):
    """(cores per node, nodes per rack, racks) for p ranks: nodes of 16
    cores (8, 9, 5, 4 when 16 does not divide p), racks of about 8 nodes."""
    cores = next(c for c in (16, 8, 9, 5, 4, 3, 2, 1) if p % c == 0)
    nodes = p // cores
    racks = next((r for r in range(max(1, nodes // 8), nodes + 1) if nodes % r == 0 and r > 1), 1)
    return cores, nodes // racks, racks


def make_machine(a, d, p, kind, placement):
    """Writes the machine's costs; returns (costs path, slot of every rank or
    None, hierarchy (cores, nodes per rack, racks) or None for the torus)."""
    cores, per_rack, racks = machine_shape(p)
    costs = os.path.join(d, "machine.costs")
    if kind == "torus":
        side = int(round(math.sqrt(p // cores)))
        if side * side * cores != p:
            return None, None, None
        sb.torus_costs(costs, side, cores, 7)
        return costs, None, None
    args = [os.path.join(a.bin, "synth"), "--sockets", "1", "--cores", str(cores),
            "--cost-socket", str(COST_NODE), "--cost-rack", str(COST_RACK),
            "--cost-network", str(COST_NETWORK), "--costs", costs,
            "--order", "random" if placement == "scattered" else "block", "--seed", "7"]
    if kind == "lvl2":
        args += ["--racks", "1", "--nodes", str(p // cores)]
        shape = (cores, p // cores, 1)
    else:
        args += ["--racks", str(racks), "--nodes", str(per_rack)]
        shape = (cores, per_rack, racks)
    sb.run(args)
    return costs, slots_of(costs, p, cores), shape


def slots_of(costs, p, cores):
    """Machine slot (node * cores + core: the numbering of VieM's and
    TreeMatch's processing elements) of every old rank of a structured file."""
    lines = [l.split("#")[0].strip() for l in open(costs)]
    lines = [l for l in lines if l]
    at = next(i for i, l in enumerate(lines) if l.startswith("rank-locations"))
    if lines[at].split()[1] == "block":
        return list(range(p))
    out = []
    for l in lines[at + 1:at + 1 + p]:
        node, core = map(int, l.split())
        out.append(node * cores + core)
    return out


def metis_graph(traffic, path, bytes_per_message=4096):
    """The traffic in METIS graph format (1-based, edge weights scaled to at
    most 1,000, each at least 1), for VieM: its objective is a 32-bit sum,
    which weights of 10^6 overflow (it then prints a negative objective and
    runs for minutes)."""
    p, weight = None, {}
    for line in open(traffic):
        line = line.split("#")[0].strip()
        if not line or line.startswith("rankshape-traffic"):
            continue
        if line.startswith("ranks"):
            p = int(line.split()[1])
            continue
        f, t, nbytes, messages = line.split()
        a, b = sorted((int(f), int(t)))
        if a != b:
            weight[(a, b)] = weight.get((a, b), 0) + float(nbytes) + bytes_per_message * float(messages)
    heaviest = max(weight.values()) if weight else 1
    adjacency = [[] for _ in range(p)]
    for (a, b), w in weight.items():
        scaled = max(1, int(round(w * 1000 / heaviest)))
        adjacency[a].append((b, scaled))
        adjacency[b].append((a, scaled))
    with open(path, "w") as f:
        f.write("%d %d 1\n" % (p, len(weight)))
        for row in adjacency:
            f.write(" ".join("%d %d" % (b + 1, w) for b, w in sorted(row)) + "\n")


def perm_from_slots(pe_of_vertex, slots, path, comment):
    """A labelling (line i: old rank of vertex i) from the processing element
    of every vertex and the slot of every old rank."""
    rank_at = {s: r for r, s in enumerate(slots)}
    sb.write_perm(path, [rank_at[pe] for pe in pe_of_vertex], comment)


def tree_levels(shape):
    """(group size, cost) per level of a machine's tree, innermost first."""
    cores, per_rack, racks = shape
    return [(cores, COST_NODE), (per_rack, COST_RACK)] + ([(racks, COST_NETWORK)] if racks > 1 else [])


def viem_command(viem, graph, levels, result, preset=None):
    """VieM on graph (METIS format) given the tree levels; its output, line
    i the PE of vertex i, goes to result."""
    cmd = [viem, graph, "--hierarchy_parameter_string=" + ":".join(str(n) for n, _ in levels),
           "--distance_parameter_string=" + ":".join(str(c) for _, c in levels),
           "--output_filename=" + result]
    return cmd + (["--preconfiguration_mapping=" + preset] if preset else [])


def orderings_for(a, d, traffic, costs, slots, shape, placement_file=None):
    """Writes every ordering's labelling into d; returns {name: (path or
    None, seconds, note)}."""
    out = {"identity": ("", 0.0, "")}
    base = [os.path.join(a.bin, "relabel"), "--costs", costs, "--traffic", traffic, "--quiet"]
    if placement_file:
        base += ["--placement", placement_file]
    for name, algorithm in ((OURS, "auto"), ("scotch", "scotch"), ("metis", "metis")):
        perm = os.path.join(d, name + ".perm")
        status, seconds = sb.run(base + ["--algorithm", algorithm, "--perm", perm,
                                         "--time-limit", "60"],
                                 os.path.join(d, name + ".log"), check=False)
        out[name] = (perm, seconds, "") if status == 0 else (None, seconds, "failed: see %s.log" % name)
    levels = tree_levels(shape) if shape else None
    # VieM: the hierarchy innermost first; output line i = PE of vertex i.
    if not a.viem:
        out["viem"] = (None, 0, "not given (--viem)")
    elif not shape:
        out["viem"] = (None, 0, "n/a: no hierarchy (torus)")
    else:
        graph = os.path.join(d, "traffic.graph")
        metis_graph(traffic, graph)
        result = os.path.join(d, "viem.out")
        cmd = viem_command(a.viem, graph, levels, result)
        status, seconds = sb.run(cmd, os.path.join(d, "viem.log"), check=False)
        if status == 0 and os.path.exists(result):
            pes = [int(l) for l in open(result) if l.strip()]
            perm_from_slots(pes, slots, os.path.join(d, "viem.perm"), "VieM " + " ".join(cmd[2:4]))
            out["viem"] = (os.path.join(d, "viem.perm"), seconds, "")
        else:
            out["viem"] = (None, seconds, "failed: see viem.log")
    # TreeMatch (--optimize: its strongest setting, binary levels): the tree
    # top level first; output line i = core of process i.
    if not a.treematch:
        out["treematch"] = (None, 0, "not given (--treematch)")
    elif not shape:
        out["treematch"] = (None, 0, "n/a: no hierarchy (torus)")
    else:
        result = os.path.join(d, "treematch.out")
        top_first = list(reversed(levels))
        cmd = [a.treematch, traffic, "--arity", ",".join(str(n) for n, _ in top_first),
               "--cost", ",".join(str(c) for _, c in top_first), "--bytes-per-message", "4096",
               "--optimize", "-q", "-o", result]
        status, seconds = sb.run(cmd, os.path.join(d, "treematch.log"), check=False)
        if status == 0 and os.path.exists(result):
            pes = [int(l) for l in open(result) if l.strip()]
            perm_from_slots(pes, slots, os.path.join(d, "treematch.perm"), "TreeMatch")
            out["treematch"] = (os.path.join(d, "treematch.perm"), seconds, "")
        else:
            out["treematch"] = (None, seconds, "failed: see treematch.log")
    return out


def evaluate_all(a, d, traffic, costs, orderings):
    """Every ordering's figures from one `evaluate --traffic` run: {name:
    labelling json}."""
    names = [n for n in orderings if n != "identity" and orderings[n][0]]
    out = os.path.join(d, "evaluate.json")
    cmd = [os.path.join(a.bin, "evaluate"), "--costs", costs, "--traffic", traffic, "--json", out]
    for n in names:
        cmd += ["--perm", orderings[n][0]]
    sb.run(cmd, os.path.join(d, "evaluate.log"))
    labellings = json.load(open(out))["labellings"]
    result = {"identity": labellings[0]}
    for n, l in zip(names, labellings[1:]):
        result[n] = l
    return result


def level(e, i, key):
    levels = e["graph"]["levels"]
    return levels[i][key] if i < len(levels) else ""


def quality(a):
    rows = []
    instances = [(n, p, kind, what) for n, p, kind, what in SYNTHETIC] + \
        [(n, int(n.split("-")[1]), "app", "profiled: data/traffic/%s.traffic" % n) for n in APPS_QUALITY]
    for name, p, kind, what in instances:
        if a.instances and name not in a.instances:
            continue
        for mkind, placement in MACHINES:
            config = "%s-%s" % (mkind, placement)
            d = os.path.join(a.out, "graph", "quality", name, config)
            os.makedirs(d, exist_ok=True)
            traffic = os.path.join("data", "traffic", name + ".traffic") if kind == "app" else \
                os.path.join(d, "traffic.traffic")
            if kind != "app":
                synthetic(name, p, kind, traffic)
            costs, slots, shape = make_machine(a, d, p, mkind, placement)
            if not costs:
                continue
            orderings = orderings_for(a, d, traffic, costs, slots, shape)
            evals = evaluate_all(a, d, traffic, costs, orderings)
            for n in ORDERINGS:
                path, seconds, note = orderings.get(n, (None, 0, "not run"))
                e = evals.get(n)
                rows.append({"instance": name, "ranks": p, "machine": config, "ordering": n,
                             "objective": e["objective"] if e else "",
                             "communication": e["graph"]["communication"] if e else "",
                             "node_edges": level(e, 0, "crossing_edges") if e else "",
                             "busiest_node_load": level(e, 0, "busiest_load") if e else "",
                             "seconds": "%.3f" % seconds if e and n != "identity" else "",
                             "note": note})
            print("quality %s %s: %s" % (name, config, ", ".join(
                "%s %.4g" % (n, evals[n]["objective"]) for n in ORDERINGS if n in evals)), flush=True)
    if rows:
        sb.write_csv(os.path.join(a.out, "graph_quality.csv"), rows)
        write_quality_md(a, rows)
    return rows


def by_case(rows, key):
    cases = {}
    for r in rows:
        cases.setdefault(tuple(r[k] for k in key), {})[r["ordering"]] = r
    return cases


def write_quality_md(a, rows):
    cases = by_case(rows, ("instance", "machine"))
    lines = ["# Traffic graphs: quality", "",
             "Written by `bench/graph_bench.sh --parts quality` (%s). Objective: `cost` "
             "(communication cost plus the busiest node's and rack's link load; lower is "
             "better), every ordering evaluated by `evaluate --traffic`. Seconds: wall time of "
             "each mapper's process (file reading included)." % time.strftime("%Y-%m-%d"), "",
             "| instance | machine | identity | scotch | metis | viem | treematch | rankshape | "
             "rankshape / best peer | seconds: rankshape, viem, treematch |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    worse, within, total = 0, 0, 0
    for (inst, config), o in cases.items():
        def obj(n):
            return sb.num(o[n]["objective"]) if n in o else None
        peers = [obj(n) for n in PEERS if obj(n) is not None]
        ours = obj(OURS)
        ratio = ours / min(peers) if peers and ours is not None and min(peers) > 0 else None
        if ratio is not None:
            total += 1
            worse += ratio > 1 + 1e-9
            within += ratio <= 1.02
        cells = ["%.4g" % obj(n) if obj(n) is not None else o.get(n, {}).get("note", "") or "n/a"
                 for n in ["identity"] + PEERS + [OURS]]
        secs = ", ".join(o[n]["seconds"] or "-" if n in o else "-" for n in (OURS, "viem", "treematch"))
        lines.append("| %s | %s | %s | %s | %s |" % (inst, config, " | ".join(cells),
                                                   "%.4f" % ratio if ratio else "", secs))
    lines += ["", "rankshape's objective is no worse than the best peer's in %d of %d cases "
              "(%.0f%%), and within 2%% of it in %d." % (total - worse, total,
                                                         100.0 * (total - worse) / max(total, 1), within)]
    path = os.path.join(a.out, "graph_quality.md")
    sb.write_lines(path, lines)


# The speed part: rankshape's mapping time against VieM's three presets at
# 1,024 ranks, on the machines with a hierarchy (VieM needs one). rankshape
# runs five ways: with its full budget, with three short ones
# (SHORT_BUDGETS: the grouping, the fast start and whatever else fits),
# and with none (--time-limit 0: the grouping alone, its parts refined by
# swaps and placed by the objective, no METIS;
# QUICK).
QUICK = OURS + "-quick"
SHORT_BUDGETS = ["0.1", "0.03", "0.01"]
BUDGETS = {OURS: "60", **{OURS + "-" + b + "s": b for b in SHORT_BUDGETS}, QUICK: "0"}
RANKSHAPE_SPEEDS = list(BUDGETS)
SPEED_INSTANCES = ["mesh2d-1024", "mesh3d-1024", "rgg-1024", "powerlaw-1024"]
SPEED_MACHINES = [("lvl2", "block"), ("lvl3", "block"), ("lvl3", "scattered")]
VIEM_PRESETS = ["fast", "eco", "strong"]


def speed_part(a):
    """Each mapper --reps times per case (median wall time of its process,
    files read and written included); each mapping's objective."""
    if not a.viem:
        sys.exit("graph_bench: --parts speed needs --viem")
    rows = []
    for name, p, kind, _ in SYNTHETIC:
        if name not in SPEED_INSTANCES or (a.instances and name not in a.instances):
            continue
        for mkind, placement in SPEED_MACHINES:
            config = "%s-%s" % (mkind, placement)
            d = os.path.join(a.out, "graph", "speed", name, config)
            os.makedirs(d, exist_ok=True)
            traffic = os.path.join(d, "traffic.traffic")
            synthetic(name, p, kind, traffic)
            costs, slots, shape = make_machine(a, d, p, mkind, placement)
            levels = tree_levels(shape)
            graph = os.path.join(d, "traffic.graph")
            metis_graph(traffic, graph)
            mappers = {}
            for n, budget in BUDGETS.items():
                mappers[n] = [os.path.join(a.bin, "relabel"), "--costs", costs, "--traffic", traffic,
                              "--quiet", "--algorithm", "auto", "--time-limit", budget,
                              "--perm", os.path.join(d, n + ".perm")]
            for preset in VIEM_PRESETS:
                mappers["viem-" + preset] = viem_command(
                    a.viem, graph, levels, os.path.join(d, "viem-%s.out" % preset), preset)
            seconds = {n: [] for n in mappers}
            for _ in range(a.reps):  # the mappers in turn, so that all see the same machine
                for n, cmd in mappers.items():
                    status, t = sb.run(cmd, os.path.join(d, n + ".log"), check=False)
                    if status != 0:
                        sys.exit("graph_bench: %s failed on %s %s: see %s" % (n, name, config,
                                                                              os.path.join(d, n + ".log")))
                    seconds[n].append(t)
            orderings = {n: (os.path.join(d, n + ".perm"), 0, "") for n in RANKSHAPE_SPEEDS}
            for preset in VIEM_PRESETS:
                pes = [int(l) for l in open(os.path.join(d, "viem-%s.out" % preset)) if l.strip()]
                perm = os.path.join(d, "viem-%s.perm" % preset)
                perm_from_slots(pes, slots, perm, "VieM " + preset)
                orderings["viem-" + preset] = (perm, 0, "")
            evals = evaluate_all(a, d, traffic, costs, orderings)
            for n in mappers:
                rows.append({"instance": name, "machine": config, "mapper": n,
                             "objective": evals[n]["objective"],
                             "median_seconds": "%.4f" % sorted(seconds[n])[len(seconds[n]) // 2],
                             "seconds": " ".join("%.4f" % t for t in seconds[n])})
            print("speed %s %s: %s" % (name, config, ", ".join(
                "%s %.4g in %.3f s" % (r["mapper"], r["objective"], float(r["median_seconds"]))
                for r in rows[-len(mappers):])), flush=True)
    if rows:
        sb.write_csv(os.path.join(a.out, "graph_speed.csv"), rows)
        write_speed_md(a, rows)
    return rows


def speed_mark(mapper):
    """How a speedup names the rankshape run it comes from: nothing for the
    full budget, else the budget."""
    if mapper == OURS:
        return ""
    return " quick" if mapper == QUICK else " %s s" % BUDGETS[mapper]


def write_speed_md(a, rows):
    cases = {}
    for r in rows:
        cases.setdefault((r["instance"], r["machine"]), {})[r["mapper"]] = r
    names = RANKSHAPE_SPEEDS + ["viem-" + p for p in VIEM_PRESETS]
    lines = ["# Traffic graphs: mapping time against VieM", "",
             "Written by `bench/graph_bench.sh --parts speed --reps %d` (%s). Each mapper's process "
             "runs %d times per case, the mappers in turn; seconds: the median wall time (files "
             "read and written included). rankshape runs with its budget (60 s), with short "
             "ones (%s) and with none (`--time-limit 0`: quick). Objective: `cost`, "
             "lower is better. speedup: the VieM preset's time over that of the fastest rankshape "
             "run whose objective is equal or better (marked with that run's budget when it is "
             "not the full one; else the best rankshape objective's ratio to the preset's, marked "
             "worse)." % (a.reps, time.strftime("%Y-%m-%d"), a.reps,
                          ", ".join("`--time-limit %s`" % b for b in SHORT_BUDGETS)),
             "",
             "| instance | machine | " + " | ".join("%s: objective, s" % n for n in names) +
             " | " + " | ".join("vs %s" % n for n in names[len(RANKSHAPE_SPEEDS):]) + " |",
             "|---|---|" + "---|" * (2 * len(names) - len(RANKSHAPE_SPEEDS))]
    for (inst, config), o in cases.items():
        ours = [o[n] for n in RANKSHAPE_SPEEDS if n in o]
        cells = ["%.4g, %s" % (float(o[n]["objective"]), o[n]["median_seconds"]) if n in o else "-"
                 for n in names]
        versus = []
        for n in names[len(RANKSHAPE_SPEEDS):]:
            peer = float(o[n]["objective"])
            good = [r for r in ours if float(r["objective"]) <= peer * (1 + 1e-9)]
            if good:
                fastest = min(good, key=lambda r: float(r["median_seconds"]))
                mark = speed_mark(fastest["mapper"])
                versus.append("%.1fx%s" % (float(o[n]["median_seconds"]) /
                                           float(fastest["median_seconds"]), mark))
            else:
                versus.append("worse (%.4f)" % (min(float(r["objective"]) for r in ours) / peer))
        lines.append("| %s | %s | %s | %s |" % (inst, config, " | ".join(cells), " | ".join(versus)))
    path = os.path.join(a.out, "graph_speed.md")
    sb.write_lines(path, lines)


def platform_shape(platform):
    """(cores, nodes per rack, racks) from a platform's name."""
    parts = dict((p.rstrip("0123456789"), int(p[len(p.rstrip("0123456789")):]))
                 for p in platform.split("-")[1:])
    cores = parts["core"]
    if platform.startswith("lvl2"):
        return cores, parts["node"], 1
    return cores, parts["node"], parts["rack"]


def time_part(a):
    rows = []
    for platform, np_, instances in TIME_PLATFORMS:
        for placement, hostfile in (("block", platform + ".hostfile"),
                                    ("scattered", platform + "-random.hostfile")):
            config = "%s-%s" % (platform, placement)
            if a.configs and config not in a.configs:
                continue
            d = os.path.join(a.out, "graph", "time", config)
            os.makedirs(d, exist_ok=True)
            measured = os.path.join(d, "measured")
            seconds = sb.smpi(a, platform, hostfile, np_,
                              [os.path.join(a.smpi_bin, "measure"), "--out", measured, "--mode",
                               "hierarchical", "--sizes", "8,65536", "--reps", "3"],
                              os.path.join(d, "measure.log"))
            print("time %s: costs measured in %.0f s" % (config, seconds), flush=True)
            costs = os.path.join(measured, "costs.txt")
            placement_file = os.path.join(measured, "placement.txt")
            shape = platform_shape(platform)
            slots = platform_slots(placement_file, os.path.join("data", "platforms",
                                                                platform + ".hostfile"), shape[0])
            for name in instances:
                if a.instances and name not in a.instances:
                    continue
                sd = os.path.join(d, name)
                os.makedirs(sd, exist_ok=True)
                traffic = os.path.join("data", "traffic", name + ".traffic")
                if not os.path.exists(traffic):
                    traffic = os.path.join(sd, "traffic.traffic")
                    n, p, kind, _ = next(s for s in SYNTHETIC if s[0] == name)
                    synthetic(n, p, kind, traffic)
                orderings = orderings_for(a, sd, traffic, costs, slots, shape, placement_file)
                evals = evaluate_all(a, sd, traffic, costs, orderings)
                timed = [n for n in ORDERINGS if n in orderings and orderings[n][0] is not None]
                cmd = [os.path.join(a.smpi_bin, "traffic_replay"), "--traffic", traffic,
                       "--reps", str(a.reps), "--warmup", "1", "--out", os.path.join(sd, "replay.csv")]
                for n in timed:
                    cmd += ["--labelling", "identity" if n == "identity" else "%s=%s" % (n, orderings[n][0])]
                seconds = sb.smpi(a, platform, hostfile, np_, cmd, os.path.join(sd, "replay.log"))
                print("time %s %s: %d orderings simulated in %.0f s" % (config, name, len(timed), seconds),
                      flush=True)
                for r in csv.DictReader(open(os.path.join(sd, "replay.csv"))):
                    e = evals[r["labelling"]]
                    rows.append({"platform": platform, "ranks": np_, "placement": placement,
                                 "instance": name, "ordering": r["labelling"], "seconds": r["seconds"],
                                 "objective": e["objective"],
                                 "communication": e["graph"]["communication"],
                                 "node_edges": level(e, 0, "crossing_edges"),
                                 "mapping_seconds": "%.3f" % orderings[r["labelling"]][1]})
    if rows:
        sb.write_csv(os.path.join(a.out, "graph_time.csv"), rows)
        write_time_md(a, rows)
    return rows


def platform_slots(placement_file, block_hostfile, cores):
    """Slot (node * cores + index on the node) of every rank of a measured
    placement, nodes in the order of the platform's block hostfile (racks
    contiguous), ranks of a node in rank order."""
    order = []
    for line in open(block_hostfile):
        host = line.split(":")[0].strip()
        if host and host not in order:
            order.append(host)
    index = {h: i for i, h in enumerate(order)}
    seen, slots = {}, []
    for line in open(placement_file):
        if not line.strip() or line.startswith("#"):
            continue
        _, host, _ = line.split()
        k = seen.get(host, 0)
        seen[host] = k + 1
        slots.append(index[host] * cores + k)
    return slots


def write_time_md(a, rows):
    cases = by_case(rows, ("platform", "placement", "instance"))
    lines = ["# Traffic graphs: simulated time", "",
             "Written by `bench/graph_bench.sh --parts time` (%s). One replay step: every pair "
             "of the traffic trades its weight, scaled so that the heaviest pair sends 1 MiB, "
             "all at once (`bench/traffic_replay.cc`), under SimGrid %s; costs measured in the "
             "simulation (`measure --mode hierarchical`), every ordering computed offline. "
             "Simulated times are deterministic. Spearman: objective vs simulated time across "
             "the orderings." % (time.strftime("%Y-%m-%d"), sb.smpi_version()), "",
             "| platform | placement | instance | identity | scotch | metis | viem | treematch | "
             "rankshape | rankshape / best peer | identity / rankshape | Spearman |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (platform, placement, inst), o in cases.items():
        def t(n):
            return sb.num(o[n]["seconds"]) if n in o else None
        peers = [t(n) for n in PEERS if t(n) is not None]
        ours = t(OURS)
        names = [n for n in ORDERINGS if n in o]
        rho = spearman([float(o[n]["objective"]) for n in names], [float(o[n]["seconds"]) for n in names]) \
            if len(names) > 2 else None
        cells = ["%.4g ms" % (1e3 * t(n)) if t(n) is not None else "n/a" for n in ORDERINGS]
        lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            platform, placement, inst, " | ".join(cells),
            "%.3f" % (ours / min(peers)) if peers and ours else "",
            "%.2fx" % (t("identity") / ours) if ours and t("identity") else "",
            "%.3f" % rho if rho is not None else ""))
    path = os.path.join(a.out, "graph_time.md")
    sb.write_lines(path, lines)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--bin", required=True)
    p.add_argument("--smpi-bin", required=True)
    p.add_argument("--viem", default="")
    p.add_argument("--treematch", default="")
    p.add_argument("--out", default="bench/results")
    p.add_argument("--parts", default="quality,time")
    p.add_argument("--instances", default="")
    p.add_argument("--configs", default="")
    p.add_argument("--reps", type=int, default=3)
    a = p.parse_args()
    a.instances = [x for x in a.instances.split(",") if x]
    a.configs = [x for x in a.configs.split(",") if x]
    parts = a.parts.split(",")
    unknown = [x for x in parts if x not in ("quality", "time", "speed")]
    if unknown:
        sys.exit("graph_bench: unknown part(s) %s: expected quality, time, speed" % ",".join(unknown))
    if "quality" in parts:
        quality(a)
    if "time" in parts:
        time_part(a)
    if "speed" in parts:
        speed_part(a)


if __name__ == "__main__":
    main()
