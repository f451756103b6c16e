#!/usr/bin/env python3
"""Halo exchange: rankshape's stencil labellings against every other ordering.

Run through bench/stencil_bench.sh, which builds the tools and passes
--bin (relabel, evaluate, synth) and --smpi-bin (halo_bench, measure built
for SMPI). See that script for what is measured; this file holds the cases,
runs them and writes the tables.
"""
import argparse
import collections
import csv
import json
import math
import os
import subprocess
import sys
import time

from harness_plot import spearman  # Spearman's rho, average ranks for ties

# name, grid, stencil, synth arguments (racks, nodes per rack, sockets,
# cores per socket), placement, what it shows. A "torus" machine has no
# racks: its nodes sit on a 2-D torus (written by torus_costs()).
QUALITY_CASES = [
    ("demo-8x8x16", "8x8x16", "stencil", (4, 8, 2, 16), "random",
     "the demo machine (issue's figures: 1,280 pairs across nodes for fibres, 704 for 2x4x4 boxes)"),
    ("demo-8x8x16-block", "8x8x16", "stencil", (4, 8, 2, 16), "block", "the same, block placement"),
    ("2d-60x60-36", "60x60", "stencil", (4, 25, 2, 18), "random", "36-core nodes, 6x6 boxes tile"),
    ("2d-60x60-36-periodic", "60x60", "stencil:periodic", (4, 25, 2, 18), "block", "the same, periodic"),
    ("2d-12x12-8", "12x12", "stencil", (2, 9, 2, 4), "random", "8-core nodes, 2x4 boxes tile"),
    ("2d-100x100-40", "100x100", "stencil", (10, 25, 2, 20), "random",
     "40-core nodes: the compact 5x8 does not tile, 4x10 does"),
    ("2d-13x64-64-prime", "13x64", "stencil", (1, 13, 2, 32), "random", "a prime dimension"),
    ("2d-32x32-rr", "32x32", "stencil:periodic", (4, 8, 2, 16), "round-robin",
     "round-robin placement"),
    ("2d-48x48-9point", "48x48", "stencil:points=9", (4, 16, 2, 18), "random",
     "a 9-point stencil, 36-core nodes"),
    ("2d-16x16-torus", "16x16", "stencil:periodic", "torus", "random",
     "a 4x4 torus of 16-core nodes, no hierarchy"),
    ("3d-10x10x10-40", "10x10x10", "stencil", (5, 5, 2, 20), "random",
     "40-core nodes on 10x10x10: only 10x2x2 boxes tile"),
    ("3d-10x10x10-40-flat", "10x10x10", "stencil", (1, 25, 2, 20), "random",
     "the same nodes in one rack: the nodes alone decide"),
    ("3d-16x16x16-32-periodic", "16x16x16", "stencil:periodic", (8, 16, 2, 16), "block",
     "32-core nodes, 4x4x2 boxes tile"),
    ("3d-30x30x30-40", "30x30x30", "stencil", (15, 45, 2, 20), "random",
     "27,000 ranks on 40-core nodes: only 2x2x10 boxes tile"),
    ("2d-256x256-64", "256x256", "stencil:periodic", (16, 64, 2, 32), "random", "65,536 ranks"),
    ("3d-64x32x32-128", "64x32x32", "stencil:periodic", (16, 32, 2, 64), "random",
     "65,536 ranks, 128-core nodes"),
]

# Simulated platforms for the time part: name, ranks, 2-D grid, 3-D grid.
TIME_PLATFORMS = [
    ("lvl2-node64-core16", 1024, "32x32", "16x8x8"),
    ("lvl3-rack8-node8-core16", 1024, "32x32", "16x8x8"),
    ("lvl3-rack5-node5-core40", 1000, "40x25", "10x10x10"),
    ("lvl2-node128-core32", 4096, "64x64", "16x16x16"),
    ("lvl3-rack8-node16-core32", 4096, "64x64", "16x16x16"),
]
TIME_BYTES = [65536, 1048576]
SMPI_FLAGS = ["--cfg=smpi/host-speed:1Gf", "--cfg=smpi/simulate-computation:no",
              "--cfg=smpi/shared-malloc:global", "--cfg=smpi/coll-selector:mpich",
              "--cfg=smpi/bcast:binomial_tree", "--cfg=smpi/allreduce:rdb",
              "--log=root.thresh:warning", "--log=smpi_config.thresh:warning"]

PEERS = ["nodecart", "strips", "hyperplane", "kd-tree", "scotch"]
# Simulated times closer than this (relative) are too close to order: the
# second Spearman column counts them as ties.
TIME_RESOLUTION = 0.001
ORDERINGS = ["identity", "nodecart-style"] + PEERS + ["rankshape-fibres", "rankshape-stencil"]


def run(cmd, log=None, check=True):
    started = time.time()
    with open(log, "w") if log else open(os.devnull, "w") as out:
        status = subprocess.call(cmd, stdout=out, stderr=subprocess.STDOUT)
    if check and status != 0:
        sys.exit("stencil_bench: failed (status %d): %s%s" % (
            status, " ".join(cmd), "; see " + log if log else ""))
    return status, time.time() - started


def dims_of(grid):
    return [int(x) for x in grid.split("x")]


def stencil_periods(pattern, ndims):
    if "periodic" not in pattern:
        return [0] * ndims
    for option in pattern.split(":", 1)[1].split(","):
        if option.startswith("periodic="):
            return [int(x) for x in option.split("=")[1].split("x")]
    return [1] * ndims


def peer_stencil(pattern, ndims):
    """The offsets a peer driver takes ('@'-separated), for stencils with
    diagonals; None for the faces-only default, which the peers share."""
    if "points=9" not in pattern and "points=27" not in pattern and "diagonals" not in pattern:
        return None
    offsets = []
    for i in range(3 ** ndims):
        delta = [(i // 3 ** (ndims - 1 - k)) % 3 - 1 for k in range(ndims)]
        if any(delta):
            offsets.extend(delta)
    return "@".join(str(x) for x in offsets)


def write_perm(path, perm, comment):
    with open(path, "w") as f:
        f.write("# %s\n" % comment)
        f.write("".join("%d\n" % r for r in perm))


def prime_factors(n):
    out, f = [], 2
    while f * f <= n:
        while n % f == 0:
            out.append(f)
            n //= f
        f += 1
    if n > 1:
        out.append(n)
    return out


def nodecart_style(dims, node_of):
    """Gropp's node-aware blocking (EuroMPI 2018), as published: the ranks
    per node factored into primes, largest first, each given to the
    dimension with the smallest block so far that it still divides; every
    node fills one box, nodes in row-major order of the node grid (ordered
    by their lowest rank), ranks of a node in rank order filling the box
    row-major. None when nodes differ in size or no box fits."""
    groups = {}
    for r, n in enumerate(node_of):
        groups.setdefault(n, []).append(r)
    nodes = sorted(groups.values())
    ppn = len(nodes[0])
    if any(len(m) != ppn for m in nodes):
        return None
    box = [1] * len(dims)
    for f in sorted(prime_factors(ppn), reverse=True):
        fits = [k for k in range(len(dims)) if dims[k] % (box[k] * f) == 0]
        if not fits:
            return None
        k = min(fits, key=lambda j: (box[j], j))
        box[k] *= f
    node_grid = [d // b for d, b in zip(dims, box)]
    p = len(node_of)
    perm = [0] * p

    def row_major(coords, shape):
        i = 0
        for c, q in zip(coords, shape):
            i = i * q + c
        return i

    def coords_of(i, shape):
        out = []
        for q in reversed(shape):
            out.append(i % q)
            i //= q
        return out[::-1]

    for x in range(p):
        c = coords_of(x, dims)
        nc = [ci // bi for ci, bi in zip(c, box)]
        lc = [ci % bi for ci, bi in zip(c, box)]
        perm[x] = nodes[row_major(nc, node_grid)][row_major(lc, box)]
    return perm


def torus_costs(path, side, cores, seed):
    """A structured cost file: side x side nodes on a 2-D torus (cost 10 per
    hop between nodes, 1 inside), ranks placed at random."""
    import random
    nodes = side * side
    rng = random.Random(seed)
    slots = [(n, c) for n in range(nodes) for c in range(cores)]
    rng.shuffle(slots)

    def hops(a, b):
        dx, dy = abs(a // side - b // side), abs(a % side - b % side)
        return min(dx, side - dx) + min(dy, side - dy)

    with open(path, "w") as f:
        f.write("rankshape-structured 1\ncores-per-node %d\nnodes %d\nranks %d\n" % (
            cores, nodes, nodes * cores))
        f.write("core-costs\n")
        for a in range(cores):
            f.write(" ".join("0" if a == b else "1" for b in range(cores)) + "\n")
        f.write("node-costs\n")
        for a in range(nodes):
            f.write(" ".join(str(10 * hops(a, b)) for b in range(nodes)) + "\n")
        f.write("rank-locations list\n")
        for n, c in slots:
            f.write("%d %d\n" % (n, c))
    return [n for n, _ in slots]


def node_file_from_placement(placement, path):
    """Node index of every rank from a placement file (rank host core)."""
    hosts, node_of = {}, []
    for line in open(placement):
        if not line.strip() or line.startswith("#"):
            continue
        _, host, _ = line.split()
        node_of.append(hosts.setdefault(host, len(hosts)))
    with open(path, "w") as f:
        f.write("".join("%d\n" % n for n in node_of))
    return node_of


def orderings_for(a, d, grid, pattern, costs, node_file, node_of):
    """Writes every ordering's labelling into d; returns {name: (path or
    None, seconds, note)}."""
    out = {}
    dims = dims_of(grid)
    periods = stencil_periods(pattern, len(dims))
    p = math.prod(dims)
    path = os.path.join(d, "identity.perm")
    write_perm(path, range(p), "identity")
    out["identity"] = (path, 0.0, "")
    started = time.time()
    perm = nodecart_style(dims, node_of)
    path = os.path.join(d, "nodecart-style.perm")
    if perm is None:
        out["nodecart-style"] = (None, 0.0, "no box of a node's size tiles the grid")
    else:
        write_perm(path, perm, "nodecart-style")
        out["nodecart-style"] = (path, time.time() - started, "")
    xdims, xperiods = "x".join(map(str, dims)), "x".join(map(str, periods))
    extra = peer_stencil(pattern, len(dims))
    for name in PEERS:
        if name == "scotch":  # Debian's Scotch, through relabel
            path = os.path.join(d, name + ".perm")
            report = os.path.join(d, name + ".json")
            run([os.path.join(a.bin, "relabel"), "--costs", costs, "--grid", grid, "--pattern",
                 pattern, "--algorithm", "scotch", "--time-limit", "300", "--perm", path,
                 "--report", report, "--quiet"], os.path.join(d, name + ".log"))
            r = json.load(open(report))
            if r["time_limited"]:
                out[name] = (None, r["seconds"], "stopped at the time limit (300 s)")
            else:
                out[name] = (path, r["seconds"], "")
            continue
        if not a.peers:
            continue
        path = os.path.join(d, name + ".perm")
        if name == "nodecart":
            cmd = [os.path.join(a.peers, "nodecart_driver"), "--dims", xdims, "--periods", xperiods,
                   "--nodes", node_file, "--out", path]
        else:
            alg = {"strips": "STENCIL_STRIPS", "hyperplane": "HYPERPLANE", "kd-tree": "KD_TREE"}[name]
            cmd = [os.path.join(a.peers, "mpicartreorder_driver"), "--dims", xdims, "--periods",
                   xperiods, "--alg", alg, "--nodes", node_file, "--out", path]
            if extra:
                cmd += ["--stencil", extra]
        status, seconds = run(cmd, os.path.join(d, name + ".log"), check=False)
        if status == 0:
            out[name] = (path, seconds, "")
        elif status == 3:
            note = open(os.path.join(d, name + ".log")).read().strip().splitlines()
            out[name] = (None, seconds, note[-1] if note else "no labelling for this input")
        else:
            sys.exit("stencil_bench: %s failed (status %d); see %s.log" % (name, status, name))
    for name, pat in (("rankshape-fibres", "fibres"), ("rankshape-stencil", pattern)):
        path = os.path.join(d, name + ".perm")
        report = os.path.join(d, name + ".json")
        run([os.path.join(a.bin, "relabel"), "--costs", costs, "--grid", grid, "--pattern", pat,
             "--perm", path, "--report", report, "--quiet"], os.path.join(d, name + ".log"))
        out[name] = (path, json.load(open(report))["seconds"], "")
    return out


def evaluate_all(a, d, grid, pattern, costs, orderings, order=ORDERINGS):
    """{name: evaluation} under the case's stencil, from evaluate's JSON, for
    the orderings named in `order` that have a labelling."""
    names = [n for n in order if n in orderings and orderings[n][0] and n != "identity"]
    cmd = [os.path.join(a.bin, "evaluate"), "--costs", costs, "--grid", grid, "--pattern", pattern,
           "--json", os.path.join(d, "evaluate.json")]
    for n in names:
        cmd += ["--perm", orderings[n][0]]
    run(cmd, os.path.join(d, "evaluate.log"))
    labellings = json.load(open(os.path.join(d, "evaluate.json")))["labellings"]
    result = {"identity": labellings[0]}
    for n, e in zip(names, labellings[1:]):
        result[n] = e
    return result


def level(e, i, key):
    levels = e["stencil"]["levels"]
    return levels[i][key] if i < len(levels) else ""


def quality(a):
    rows = []
    cases = [c for c in QUALITY_CASES if not a.cases or c[0] in a.cases]
    for name, grid, pattern, machine, order, what in cases:
        d = os.path.join(a.out, "stencil", "quality", name)
        os.makedirs(d, exist_ok=True)
        costs = os.path.join(d, "machine.costs")
        node_file = os.path.join(d, "nodes.txt")
        if machine == "torus":
            node_of = torus_costs(costs, 4, 16, 1)
            with open(node_file, "w") as f:
                f.write("".join("%d\n" % n for n in node_of))
        else:
            racks, nodes, sockets, cores = machine
            placement = os.path.join(d, "machine.placement")
            run([os.path.join(a.bin, "synth"), "--racks", str(racks), "--nodes", str(nodes),
                 "--sockets", str(sockets), "--cores", str(cores), "--order", order, "--seed", "1",
                 "--costs", costs, "--placement", placement], os.path.join(d, "synth.log"))
            node_of = node_file_from_placement(placement, node_file)
        print("quality %s: %s, %s, %d ranks" % (name, grid, pattern, len(node_of)), flush=True)
        orderings = orderings_for(a, d, grid, pattern, costs, node_file, node_of)
        evals = evaluate_all(a, d, grid, pattern, costs, orderings)
        for o in ORDERINGS:
            if o not in orderings:
                continue
            path, seconds, note = orderings[o]
            e = evals.get(o)
            rows.append({
                "case": name, "grid": grid, "pattern": pattern, "ranks": len(node_of),
                "placement": order, "ordering": o, "seconds": "%.3f" % seconds,
                "objective": e["objective"] if e else "", "total": e["total"] if e else "",
                "node_pairs": level(e, 0, "crossing_pairs") if e else "",
                "busiest_node": level(e, 0, "busiest_pairs") if e else "",
                "rack_pairs": level(e, 1, "crossing_pairs") if e else "",
                "busiest_rack": level(e, 1, "busiest_pairs") if e else "",
                "note": note, "what": what})
    write_csv(os.path.join(a.out, "stencil_quality.csv"), rows)
    write_quality_md(a, rows)
    return rows


def write_lines(path, lines):
    """Writes lines to path, atomically (a copy renamed into place)."""
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(path + ".tmp", path)


def write_csv(path, rows):
    with open(path + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    os.replace(path + ".tmp", path)


def num(x):
    return float(x) if x not in ("", None) else None


def write_quality_md(a, rows):
    lines = ["# Stencil labellings: quality", "",
             "Written by `bench/stencil_bench.sh --parts quality` (%s)." % time.strftime("%Y-%m-%d"),
             "Machines from `synth` (1 inside a socket, 2 inside a node, 10 inside a rack, 40 across",
             "racks; `2d-16x16-torus`: a 4x4 torus of nodes, 10 per hop). Every ordering is scored",
             "by `evaluate` under the case's stencil: the step objective, and the neighbour pairs",
             "that cross nodes (and racks), in all and from the busiest node. Peers: nodecart",
             "(Gropp, BaseEnv: its `MPI_Cart_create` picks its own dims; \"n/a\" where they are",
             "not the requested grid), mpicartreorderlib's STENCIL_STRIPS, HYPERPLANE and KD_TREE,",
             "Scotch (Debian's, through `relabel --algorithm scotch`: the stencil graph mapped onto",
             "the machine's tree); nodecart-style: the published node-box rule, implemented here.", "",
             "| case | ranks | ordering | objective | node pairs | busiest node | rack pairs | busiest rack | s |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if r["objective"] == "":
            cells = ["n/a: " + r["note"], "", "", "", "", ""]
        else:
            cells = ["%.6g" % float(r["objective"]), str(r["node_pairs"]), str(r["busiest_node"]),
                     str(r["rack_pairs"]), str(r["busiest_rack"]), r["seconds"]]
        lines.append("| %s | %s | %s | %s |" % (r["case"], r["ranks"], r["ordering"], " | ".join(cells)))
    lines += ["", "## Goal: the stencil labelling against the best peer", "",
              "| case | best peer node pairs | rankshape | best peer busiest node | rankshape | verdict |",
              "|---|---:|---:|---:|---:|---|"]
    for case in dict.fromkeys(r["case"] for r in rows):
        rs = [r for r in rows if r["case"] == case and r["objective"] != ""]
        peers = [r for r in rs if r["ordering"] in PEERS + ["nodecart-style"]]
        mine = [r for r in rs if r["ordering"] == "rankshape-stencil"][0]
        if not peers:
            lines.append("| %s | - | %s | - | %s | no peer |" % (case, mine["node_pairs"], mine["busiest_node"]))
            continue
        bp = min(num(r["node_pairs"]) for r in peers)
        bb = min(num(r["busiest_node"]) for r in peers)
        mp, mb = num(mine["node_pairs"]), num(mine["busiest_node"])
        verdict = ("better" if mp < bp and mb <= bb else "better (pairs)" if mp < bp and mb > bb
                   else "equal" if mp == bp and mb == bb else "no worse" if mp <= bp and mb <= bb
                   else "worse")
        lines.append("| %s | %g | %g | %g | %g | %s |" % (case, bp, mp, bb, mb, verdict))
    path = os.path.join(a.out, "stencil_quality.md")
    write_lines(path, lines)


def smpi(a, platform, hostfile, np_, cmd, log):
    full = ["smpirun", "-np", str(np_), "-platform", "data/platforms/%s.xml" % platform,
            "-hostfile", "data/platforms/%s" % hostfile] + SMPI_FLAGS + cmd
    status, seconds = run(full, log)
    return seconds


def measure_costs(a, platform, hostfile, np_, d):
    """Measures the platform's costs in the simulation into d/measured (or
    keeps an earlier measurement there with --reuse-measured); returns the
    cost file and the seconds taken (None when kept)."""
    measured = os.path.join(d, "measured")
    costs = os.path.join(measured, "costs.txt")
    if a.reuse_measured and os.path.exists(costs):
        return costs, None
    seconds = smpi(a, platform, hostfile, np_,
                   [os.path.join(a.smpi_bin, "measure"), "--out", measured, "--mode",
                    "hierarchical", "--sizes", "8,65536", "--reps", "3"],
                   os.path.join(d, "measure.log"))
    return costs, seconds


def time_halo(a, platform, hostfile, np_, grid, pattern, labellings, d):
    """Times one halo step of every (name, perm file) in one simulation,
    faces of TIME_BYTES, into d/halo.csv; returns the seconds taken."""
    cmd = [os.path.join(a.smpi_bin, "halo_bench"), "--grid", grid, "--pattern", pattern,
           "--bytes", ",".join(map(str, TIME_BYTES)), "--reps", str(a.reps), "--warmup", "1",
           "--out", os.path.join(d, "halo.csv")]
    for name, path in labellings:
        cmd += ["--labelling", "%s=%s" % (name, path)]
    return smpi(a, platform, hostfile, np_, cmd, os.path.join(d, "halo.log"))


def check_map_count(a):
    """SMPI's shared malloc maps every face buffer of every simulated rank
    (two per neighbour, one mapping per MiB): 4,096 ranks of a 7-point
    stencil need more than Linux's default vm.max_map_count (65,530)."""
    ranks = max(np_ for platform, np_, _, _ in TIME_PLATFORMS
                if not a.configs or any(c.startswith(platform + "-") for c in a.configs))
    need = ranks * 2 * 6 * (max(TIME_BYTES) // 1048576) + 16384
    try:
        have = int(open("/proc/sys/vm/max_map_count").read())
    except (OSError, ValueError):
        return
    if have < need:
        sys.exit("stencil_bench: the time part needs vm.max_map_count >= %d (it is %d; SimGrid's "
                 "shared malloc maps every simulated rank's buffers): sysctl -w "
                 "vm.max_map_count=%d" % (need, have, need))


def time_part(a):
    check_map_count(a)
    rows = []
    for platform, np_, grid2, grid3 in TIME_PLATFORMS:
        for placement, hostfile in (("block", platform + ".hostfile"),
                                    ("scattered", platform + "-random.hostfile")):
            config = "%s-%s" % (platform, placement)
            if a.configs and config not in a.configs:
                continue
            d = os.path.join(a.out, "stencil", "time", config)
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "commit.txt"), "w") as f:
                f.write(source_commit() + "\n")
            with open(os.path.join(d, "reps.txt"), "w") as f:
                f.write("%d\n" % a.reps)
            costs, seconds = measure_costs(a, platform, hostfile, np_, d)
            measured = os.path.dirname(costs)
            if seconds is None:
                print("time %s: costs from an earlier measurement in %s" % (config, measured),
                      flush=True)
            else:
                print("time %s: costs measured in %.0f s" % (config, seconds), flush=True)
            node_file = os.path.join(d, "nodes.txt")
            node_of = node_file_from_placement(os.path.join(measured, "placement.txt"), node_file)
            for shape, grid in (("2d-5point", grid2), ("3d-7point", grid3)):
                if a.stencils and shape not in a.stencils:
                    continue
                sd = os.path.join(d, shape)
                os.makedirs(sd, exist_ok=True)
                pattern = "stencil:periodic"
                orderings = orderings_for(a, sd, grid, pattern, costs, node_file, node_of)
                evaluate_all(a, sd, grid, pattern, costs, orderings)
                timed = [n for n in ORDERINGS if n in orderings and orderings[n][0]]
                seconds = time_halo(a, platform, hostfile, np_, grid, pattern,
                                    [(n, orderings[n][0]) for n in timed], sd)
                print("time %s %s: %d orderings simulated in %.0f s" % (config, shape, len(timed), seconds),
                      flush=True)
            rows += config_rows(d, platform, np_, placement, grid2, grid3)
    if rows:
        write_csv(os.path.join(a.out, "stencil_time.csv"), rows)
        write_time_md(a, rows)
    return rows


# The rack trade-off (--parts racks): the quality case 3d-10x10x10-40 on
# the simulated machine of its shape, its stencil not periodic as there.
RACKS_PLATFORM = ("lvl3-rack5-node5-core40", 1000, "10x10x10", "stencil")
# Peers whose labellings are node boxes; the racks part also times each with
# its boxes regrouped into racks.
NODE_BOX_PEERS = ["nodecart-style", "hyperplane", "kd-tree"]


def stencil_neighbours(dims, periods):
    """For every grid position (row-major), its face neighbours."""
    p = math.prod(dims)
    strides = [math.prod(dims[k + 1:]) for k in range(len(dims))]
    out = []
    for x in range(p):
        c = [(x // strides[k]) % dims[k] for k in range(len(dims))]
        ns = []
        for k in range(len(dims)):
            for step in (-1, 1):
                v = c[k] + step
                if 0 <= v < dims[k] or periods[k]:
                    ns.append(x + ((v % dims[k]) - c[k]) * strides[k])
        out.append(ns)
    return out


def regroup_into_racks(perm, node_of, rack_of_node, neighbours, seed=1, starts=200):
    """perm with its node boxes (the grid positions on one node) moved
    whole onto the nodes of racks chosen so that the busiest rack sends the
    fewest neighbour messages out (then the fewest in all): best of `starts`
    local searches that swap boxes between racks. What a node-aware peer
    would give if it also knew the racks; each box's positions take its new
    node's ranks in rank order. Nodes must be of one size."""
    import random
    if len(set(collections.Counter(node_of).values())) != 1:
        sys.exit("stencil_bench: regrouping boxes into racks needs nodes of one size")
    boxes = sorted(set(node_of[r] for r in perm))
    box_at = [node_of[r] for r in perm]
    weight = {}
    for x, ns in enumerate(neighbours):
        for y in ns:
            if box_at[x] != box_at[y]:
                key = (box_at[x], box_at[y])
                weight[key] = weight.get(key, 0) + 1
    racks = sorted(set(rack_of_node.values()))
    nodes_in = {k: sorted(n for n in boxes if rack_of_node[n] == k) for k in racks}

    def score(rack):
        load = dict.fromkeys(racks, 0)
        for (u, v), w in weight.items():
            if rack[u] != rack[v]:
                load[rack[u]] += w
        return max(load.values()), sum(load.values())

    rng = random.Random(seed)
    best = None
    for _ in range(starts):
        slots = [k for k in racks for _ in nodes_in[k]]
        rng.shuffle(slots)
        rack = dict(zip(boxes, slots))
        current = score(rack)
        improved = True
        while improved:
            improved = False
            for i, u in enumerate(boxes):
                for v in boxes[i + 1:]:
                    if rack[u] == rack[v]:
                        continue
                    rack[u], rack[v] = rack[v], rack[u]
                    trial = score(rack)
                    if trial < current:
                        current, improved = trial, True
                    else:
                        rack[u], rack[v] = rack[v], rack[u]
        if best is None or current < best[0]:
            best = (current, dict(rack))
    rack = best[1]
    free = {k: list(nodes_in[k]) for k in racks}
    target = {}
    for u in boxes:
        target[u] = free[rack[u]].pop(0)
    ranks_on = {}
    for r, n in enumerate(node_of):
        ranks_on.setdefault(n, []).append(r)
    taken = dict.fromkeys(boxes, 0)
    out = []
    for u in box_at:
        out.append(ranks_on[target[u]][taken[u]])
        taken[u] += 1
    return out


def racks_part(a):
    """The rack trade-off of 3d-10x10x10-40 in simulated time: every
    ordering of the time part, and the node-box peers' labellings with their
    boxes regrouped into racks, on lvl3-rack5-node5-core40 (block), the
    stencil not periodic."""
    platform, np_, grid, pattern = RACKS_PLATFORM
    hostfile = platform + ".hostfile"
    d = os.path.join(a.out, "stencil", "racks")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "commit.txt"), "w") as f:
        f.write(source_commit() + "\n")
    costs, seconds = measure_costs(a, platform, hostfile, np_, d)
    measured = os.path.dirname(costs)
    if seconds is not None:
        print("racks: costs measured in %.0f s" % seconds, flush=True)
    node_file = os.path.join(d, "nodes.txt")
    node_of = node_file_from_placement(os.path.join(measured, "placement.txt"), node_file)
    # Hosts of the platform are r<rack>n<node>.
    rack_of_node = {}
    for line in open(os.path.join(measured, "placement.txt")):
        if line.strip() and not line.startswith("#"):
            rank, host, _ = line.split()
            rack_of_node[node_of[int(rank)]] = int(host[1:host.index("n")])
    orderings = orderings_for(a, d, grid, pattern, costs, node_file, node_of)
    dims = dims_of(grid)
    neighbours = stencil_neighbours(dims, stencil_periods(pattern, len(dims)))
    names = [n for n in ORDERINGS if n in orderings and orderings[n][0]]
    for n in NODE_BOX_PEERS:
        if n not in names:
            continue
        perm = [int(x) for x in open(orderings[n][0]) if not x.startswith("#")]
        path = os.path.join(d, n + "+racks.perm")
        write_perm(path, regroup_into_racks(perm, node_of, rack_of_node, neighbours),
                   n + ", node boxes regrouped into racks")
        names.append(n + "+racks")
        orderings[n + "+racks"] = (path, 0.0, "")
    evals = evaluate_all(a, d, grid, pattern, costs, orderings, names)
    seconds = time_halo(a, platform, hostfile, np_, grid, pattern,
                        [(n, orderings[n][0]) for n in names], d)
    print("racks: %d orderings simulated in %.0f s" % (len(names), seconds), flush=True)
    times = {}
    for r in csv.DictReader(open(os.path.join(d, "halo.csv"))):
        times[(r["labelling"], r["bytes"])] = float(r["seconds"])
    commit = open(os.path.join(d, "commit.txt")).read().strip()
    rows = []
    for n in names:
        e = evals[n]
        rows.append({"ordering": n, "objective": e["objective"],
                     "node_pairs": level(e, 0, "crossing_pairs"),
                     "busiest_node": level(e, 0, "busiest_pairs"),
                     "rack_pairs": level(e, 1, "crossing_pairs"),
                     "busiest_rack": level(e, 1, "busiest_pairs"),
                     "seconds_64k": times[(n, "65536")], "seconds_1m": times[(n, "1048576")],
                     "run": commit})
    write_csv(os.path.join(a.out, "stencil_racks.csv"), rows)
    mine = rows[names.index("rankshape-stencil")]
    lines = ["# The rack trade-off in simulated time", "",
             "Written by `bench/stencil_bench.sh --parts racks` (%s, tools built at %s), "
             "SimGrid %s." % (time.strftime("%Y-%m-%d"), commit, smpi_version()),
             "The quality case 3d-10x10x10-40 (`stencil_quality.md`: 5 racks of 5 nodes of 40,",
             "10x10x10, stencil not periodic) on the simulated machine of its shape,",
             "`%s` with block placement (%d ranks): costs measured in the simulation," % (
                 platform, np_),
             "every ordering computed from them, all timed in one simulation (one halo step,",
             "slowest rank's mean over %d steps after one untimed, in simulated ms)." % a.reps,
             "`+racks`: the peer's node boxes moved whole onto the nodes of racks chosen so that",
             "the busiest rack sends the fewest neighbour messages out (best of 200 local",
             "searches), which the peers, knowing nodes only, cannot do themselves.", "",
             "| ordering | objective | node pairs | busiest node | rack pairs | busiest rack | "
             "64 KiB | 1 MiB | time / rankshape (1 MiB) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append("| %s | %.4g | %s | %s | %s | %s | %.4g | %.4g | %.2f |" % (
            r["ordering"], r["objective"], r["node_pairs"], r["busiest_node"], r["rack_pairs"],
            r["busiest_rack"], 1e3 * r["seconds_64k"], 1e3 * r["seconds_1m"],
            r["seconds_1m"] / mine["seconds_1m"]))
    objectives = [r["objective"] for r in rows]
    rhos = [spearman(objectives, [r[k] for r in rows]) for k in ("seconds_64k", "seconds_1m")]
    rhos = ["%.3f" % rho if rho is not None else "-" for rho in rhos]  # None: a constant side
    lines += ["", "Spearman between the objective and the time: %s (64 KiB), %s (1 MiB)." % tuple(rhos)]
    missing = ["%s (%s)" % (n, orderings[n][2]) for n in ORDERINGS
               if n in orderings and not orderings[n][0]]
    if missing:
        lines += ["", "No labelling: " + "; ".join(missing) + "."]
    write_lines(os.path.join(a.out, "stencil_racks.md"), lines)


def source_commit():
    """The commit the tools were built from (with '+' for uncommitted
    changes), for the tables' provenance."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        commit = subprocess.check_output(["git", "-C", here, "rev-parse", "--short", "HEAD"],
                                         text=True, stderr=subprocess.DEVNULL).strip()
        dirty = subprocess.call(["git", "-C", here, "diff", "--quiet", "HEAD", "--", "lib", "cmd",
                                 "bench"], stderr=subprocess.DEVNULL) != 0
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("+" if dirty else "")


def config_rows(d, platform, np_, placement, grid2, grid3):
    """The rows of one time configuration from the outputs its run left in d
    (halo.csv, evaluate.json, the orderings' .log files, commit.txt); none
    for a configuration not run there."""
    commit = os.path.join(d, "commit.txt")
    run = open(commit).read().strip() if os.path.exists(commit) else "not recorded"
    reps = os.path.join(d, "reps.txt")
    if os.path.exists(reps):  # older runs: 2 timed steps, not recorded
        run += ", %s timed steps" % open(reps).read().strip()
    rows = []
    for shape, grid in (("2d-5point", grid2), ("3d-7point", grid3)):
        sd = os.path.join(d, shape)
        if not os.path.exists(os.path.join(sd, "halo.csv")):
            continue
        evals = {}
        for e in json.load(open(os.path.join(sd, "evaluate.json")))["labellings"]:
            evals[os.path.basename(e["name"]).replace(".perm", "")] = e
        timed = set()
        for r in csv.DictReader(open(os.path.join(sd, "halo.csv"))):
            e = evals[r["labelling"]]
            timed.add(r["labelling"])
            rows.append({"platform": platform, "ranks": np_, "placement": placement,
                         "stencil": shape, "grid": grid, "bytes": r["bytes"],
                         "ordering": r["labelling"], "seconds": r["seconds"],
                         "objective": e["objective"],
                         "node_pairs": level(e, 0, "crossing_pairs"),
                         "busiest_node": level(e, 0, "busiest_pairs"), "run": run})
        # An ordering that was not timed had no labelling; its log says why
        # (kept outputs have no .perm files).
        for n in ORDERINGS:
            if n in timed:
                continue
            log = os.path.join(sd, n + ".log")
            note = open(log).read().strip().splitlines() if os.path.exists(log) else []
            rows.append({"platform": platform, "ranks": np_, "placement": placement,
                         "stencil": shape, "grid": grid, "bytes": "", "ordering": n,
                         "seconds": "", "objective": "", "node_pairs": "",
                         "busiest_node": "n/a: " + (note[-1] if note else
                                                    "no labelling for this input"),
                         "run": run})
    return rows


def table_part(a):
    """Rebuilds stencil_time.{csv,md} in --out from the outputs that earlier
    time runs left under each --from folder's stencil/time/ (halo.csv,
    evaluate.json, the orderings' .perm and .log files), without simulating:
    for tables assembled from several --configs runs."""
    rows = []
    for base in a.sources:
        for platform, np_, grid2, grid3 in TIME_PLATFORMS:
            for placement in ("block", "scattered"):
                d = os.path.join(base, "stencil", "time", "%s-%s" % (platform, placement))
                rows += config_rows(d, platform, np_, placement, grid2, grid3)
    if not rows:
        sys.exit("stencil_bench: --parts table found no time outputs under %s" % ", ".join(a.sources))
    write_csv(os.path.join(a.out, "stencil_time.csv"), rows)
    write_time_md(a, rows)
    return rows


def write_time_md(a, rows):
    lines = ["# Halo exchange on simulated clusters", "",
             "Written by `bench/stencil_bench.sh --parts time` (%s), SimGrid %s." % (
                 time.strftime("%Y-%m-%d"), smpi_version()),
             "One step of a periodic halo exchange (`bench/halo_bench.cc`: every rank sends a face",
             "to each neighbour and receives one from each, nonblocking), slowest rank's mean over",
             "%d steps after one untimed (where the run list below gives no other count), in" % a.reps,
             "simulated ms. Costs measured in the simulation",
             "(`measure --mode hierarchical`, 64 KiB message time, with the fabrics it finds);",
             "every ordering computed from them offline. Scattered: the platform's",
             "`-random.hostfile`. Spearman: between the stencil objective and the time across the",
             "orderings; in the last column times less than %g%% apart count as ties (orderings" %
             (100 * TIME_RESOLUTION),
             "whose link loads are the same can differ by a few microseconds in when their",
             "flows start, which no objective of the pattern sees).", ""]
    groups = {}
    for r in rows:
        if r["bytes"] == "":
            continue
        groups.setdefault((r["platform"], r["ranks"], r["placement"], r["stencil"], r["grid"],
                           r["bytes"]), []).append(r)
    lines += ["| platform | ranks | placement | stencil | face | " +
              " | ".join(ORDERINGS) +
              " | stencil / best peer | identity / stencil | Spearman | Spearman, %g%% ties |" %
              (100 * TIME_RESOLUTION),
              "|---|---:|---|---|---:|" + "---:|" * len(ORDERINGS) + "---:|---:|---:|---:|"]
    for key, rs in groups.items():
        by = {r["ordering"]: float(r["seconds"]) for r in rs}
        cells = ["%.4g" % (1e3 * by[o]) if o in by else "n/a" for o in ORDERINGS]
        peers = [by[o] for o in PEERS + ["nodecart-style"] if o in by]
        mine = by.get("rankshape-stencil")
        vs_peer = "%.3f" % (mine / min(peers)) if peers and mine else "-"
        vs_id = "%.2fx" % (by["identity"] / mine) if mine else "-"
        objectives = [float(r["objective"]) for r in rs]
        seconds = [float(r["seconds"]) for r in rs]
        rhos = [spearman(objectives, seconds, tolerance) for tolerance in (0.0, TIME_RESOLUTION)]
        rhos = ["%.3f" % rho if rho is not None else "-" for rho in rhos]  # None: a constant side
        lines.append("| %s | %d | %s | %s %s | %s | %s | %s | %s | %s | %s |" % (
            key[0], key[1], key[2], key[3], key[4], "64 KiB" if key[5] == "65536" else "1 MiB",
            " | ".join(cells), vs_peer, vs_id, rhos[0], rhos[1]))
    # Which commit each configuration was simulated at (tables assembled by
    # --parts table can mix runs).
    runs = {}
    for r in rows:
        runs.setdefault(r.get("run", "not recorded"), []).append("%s %s" % (r["platform"],
                                                                          r["placement"]))
    lines += ["", "Runs, by the commit the tools were built from:"]
    for run, configs in runs.items():
        lines.append("- %s: %s" % (run, ", ".join(dict.fromkeys(configs))))
    path = os.path.join(a.out, "stencil_time.md")
    write_lines(path, lines)


def smpi_version():
    try:
        out = subprocess.run(["smpirun", "-version"], capture_output=True, text=True).stdout
        return out.split()[2] if out else "?"
    except OSError:
        return "?"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", required=True, help="folder with relabel, evaluate, synth")
    p.add_argument("--smpi-bin", required=True, help="folder with halo_bench, measure (SMPI)")
    p.add_argument("--peers", help="folder with mpicartreorder_driver and nodecart_driver")
    p.add_argument("--out", default="bench/results")
    p.add_argument("--parts", default="quality,time",
                   help="quality, time, racks (the rack trade-off in simulated time), or table "
                        "(rebuild the time tables from --from)")
    p.add_argument("--from", dest="sources", default="",
                   help="with --parts table: output folders of earlier time runs (default --out)")
    p.add_argument("--cases", default="", help="quality cases to run (default all)")
    p.add_argument("--configs", default="", help="time configurations PLATFORM-PLACEMENT (default all)")
    p.add_argument("--stencils", default="",
                   help="time stencils, 2d-5point and/or 3d-7point (default both): one simulation "
                        "each, so a long configuration can run as two processes with their own --out")
    p.add_argument("--reps", type=int, default=2, help="timed halo steps")
    p.add_argument("--reuse-measured", action="store_true",
                   help="time: keep the costs an earlier run measured under --out (measured/costs.txt) "
                        "instead of measuring again, e.g. for the second stencil of a configuration")
    a = p.parse_args()
    a.cases = [c for c in a.cases.split(",") if c]
    a.configs = [c for c in a.configs.split(",") if c]
    a.stencils = [s for s in a.stencils.split(",") if s]
    unknown = set(a.stencils) - {"2d-5point", "3d-7point"}
    if unknown:
        sys.exit("stencil_bench: --stencils: unknown %s (2d-5point, 3d-7point)" % ", ".join(sorted(unknown)))
    parts = a.parts.split(",")
    for part in parts:
        if part not in ("quality", "time", "racks", "table"):
            sys.exit("stencil_bench: --parts takes quality, time, racks and table, got '%s'" % part)
    if a.peers:
        for tool in ("mpicartreorder_driver", "nodecart_driver"):
            if not os.access(os.path.join(a.peers, tool), os.X_OK):
                sys.exit("stencil_bench: --peers %s has no %s (see bench/stencil_bench.sh)" % (a.peers, tool))
    if a.reps < 1:
        sys.exit("stencil_bench: --reps must be >= 1")
    os.makedirs(a.out, exist_ok=True)
    if "quality" in parts:
        quality(a)
    if "time" in parts:
        time_part(a)
    if "racks" in parts:
        racks_part(a)
    if "table" in parts:
        a.sources = [d for d in a.sources.split(",") if d] or [a.out]
        table_part(a)


if __name__ == "__main__":
    main()
