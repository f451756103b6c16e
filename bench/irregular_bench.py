#!/usr/bin/env python3
"""Relabelling on irregular machines: rankshape's auto against the peers.

Run through bench/irregular_bench.sh, which builds the tools and passes
--bin (relabel, evaluate, synth). See that script for what is measured;
this file holds the instances, runs them and writes the tables.
"""
import argparse
import json
import os
import sys
import time

import stencil_bench as sb

# Level costs of every instance (synth's defaults): 1 inside a socket,
# 2 between sockets, 10 between nodes of an island (one torus hop), 40
# between islands.
COST_CORE, COST_ISLAND, COST_NETWORK = 1, 10, 40

# name, grid, pattern, synth arguments (after --node-ranks), what it shows.
INSTANCES = [
    ("uneven-63", "7x9", "fibres", ["16*3,15", "--order", "random"],
     "63 ranks on 16-core nodes (one short), odd grid"),
    ("uneven-100-48", "10x10", "fibres", ["48*2,4", "--order", "random"],
     "100 ranks on 48-core nodes: 48, 48, 4"),
    ("uneven-100-48-block", "10x10", "fibres", ["48*2,4"],
     "the same in the job's block order"),
    ("islands-180", "12x15", "fibres", ["12*15", "--islands", "5,5,5", "--order", "random"],
     "3 islands of 5 nodes of 12 cores, scattered (issue 26's first case)"),
    ("islands-uneven-180", "12x15", "fibres", ["12*15", "--islands", "7,5,3", "--order", "random"],
     "islands of 7, 5 and 3 nodes"),
    ("lvl2-216", "6x6x6", "fibres", ["24*9", "--order", "random"],
     "9 nodes of 24 cores (issue 26's second case)"),
    ("prime-221", "13x17", "fibres", ["16*13,13", "--order", "random"],
     "13x17 (both prime) on 16-core nodes, the last one short"),
    ("torus-256", "16x16", "fibres", ["16*16", "--torus", "4x4", "--order", "random"],
     "a 4x4 torus of 16-core nodes, no hierarchy"),
    ("slow-256", "16x16", "fibres", ["16*16", "--slow-nodes", "4", "--slow-factor", "3",
                                     "--order", "random"],
     "16 nodes of 16, 4 of them with links 3x dearer"),
    ("noisy-256", "16x16", "fibres", ["16*16", "--noise", "0.2", "--order", "random"],
     "16 nodes of 16, every cost within 20%"),
    ("torus-512-3d", "8x8x8", "fibres", ["16*32", "--torus", "4x4x2", "--order", "random"],
     "a 4x4x2 torus of 16-core nodes"),
    ("round-robin-600", "20x30", "fibres", ["36*16,24", "--order", "round-robin"],
     "600 ranks dealt round-robin over 36-core nodes, the last one 24"),
    ("islands-1000-40", "10x10x10", "fibres", ["40*25", "--islands", "8,8,9", "--order", "random"],
     "25 nodes of 40 in islands of 8, 8 and 9"),
    ("uneven-1000-48", "10x10x10", "fibres", ["48*20,40", "--order", "random"],
     "1,000 ranks on 48-core nodes: 20 full, one of 40"),
    ("torus-1024", "32x32", "fibres", ["16*64", "--torus", "8x8", "--order", "random"],
     "an 8x8 torus of 16-core nodes"),
    ("islands-noise-1024", "32x32", "fibres",
     ["16*64", "--islands", "20,20,24", "--noise", "0.1", "--order", "random"],
     "islands of 20, 20 and 24 nodes, 10% noise"),
    ("slow-1024-3d", "16x8x8", "fibres", ["32*32", "--slow-nodes", "4", "--slow-factor", "3",
                                          "--sockets", "2", "--order", "random"],
     "32 nodes of 2 sockets x 16, 4 slow"),
    ("uneven-2000", "40x50", "fibres", ["64*31,16", "--order", "random"],
     "2,000 ranks on 64-core nodes, the last 16"),
    ("slow-noise-2048", "32x64", "fibres", ["32*64", "--islands", "16*4", "--slow-nodes", "8",
                                            "--noise", "0.1", "--order", "random"],
     "4 islands of 16 nodes of 32, 8 slow nodes, 10% noise"),
    ("torus-4096", "64x64", "fibres", ["16*256", "--torus", "16x16", "--order", "random"],
     "a 16x16 torus of 16-core nodes"),
    ("islands-4096", "16x16x16", "fibres", ["32*128", "--islands", "40,40,48", "--order", "random"],
     "128 nodes of 32 in islands of 40, 40 and 48"),
    ("uneven-4000", "50x80", "fibres", ["48*83,16", "--order", "random"],
     "4,000 ranks on 48-core nodes, the last 16"),
    ("prime-4087", "61x67", "fibres", ["64*63,55", "--order", "random"],
     "61x67 (both prime) on 64-core nodes, the last 55"),
    ("stencil-uneven-1000", "10x10x10", "stencil", ["48*20,40", "--order", "random"],
     "a 3-D halo on 1,000 ranks of 48-core nodes"),
    ("stencil-torus-1024", "32x32", "stencil:periodic", ["16*64", "--torus", "8x8", "--order", "random"],
     "a periodic 2-D halo on a torus of nodes"),
]

ORDERINGS = ["identity", "natural", "metis", "scotch", "viem", "auto"]
# What each instance shows, by name.
WHAT = {i[0]: i[4] for i in INSTANCES}

# The curve part: auto's objective against its budget on the largest
# instances (fibres, where auto reports a lower bound).
CURVE_INSTANCES = ["torus-4096", "islands-4096", "uneven-4000", "prime-4087"]
CURVE_BUDGETS = [0, 0.1, 0.3, 1, 3, 10, 30]


def option(args, name):
    return args[args.index(name) + 1] if name in args else None


def count_list(text):
    """synth's count list: '48*2,4' -> [48, 48, 4]."""
    out = []
    for item in text.split(","):
        n, _, k = item.partition("*")
        out += [int(n)] * (int(k) if k else 1)
    return out


def machine_of(args):
    """(node ranks, islands as node counts, sockets, torus or None) from
    synth's arguments."""
    nodes = count_list(args[0])
    islands = count_list(option(args, "--islands")) if "--islands" in args else [len(nodes)]
    return nodes, islands, int(option(args, "--sockets") or 1), option(args, "--torus")


def neighbours(grid, pattern):
    """Pairs (a, b), a < b, of positions that talk: every pair of a fibre for
    fibres, the face neighbours for a stencil (periodic where asked)."""
    dims = sb.dims_of(grid)
    periods = sb.stencil_periods(pattern, len(dims)) if pattern != "fibres" else None
    p = 1
    for d in dims:
        p *= d
    strides = [1] * len(dims)
    for k in range(len(dims) - 2, -1, -1):
        strides[k] = strides[k + 1] * dims[k + 1]
    pairs = set()
    for x in range(p):
        for k, d in enumerate(dims):
            c = (x // strides[k]) % d
            if periods is None:
                for c2 in range(c + 1, d):
                    pairs.add((x, x + (c2 - c) * strides[k]))
            elif c + 1 < d or (periods[k] and d > 2):
                y = x + ((c + 1) % d - c) * strides[k]
                pairs.add((min(x, y), max(x, y)))
    return p, sorted(pairs)


def viem_hierarchy(nodes, islands):
    """VieM's processing elements: a regular tree of cores per node, nodes
    per island and islands, each as large as the largest. Returns (levels as
    (size, cost) innermost first, PE of every machine slot (node, core))."""
    cores, per_island = max(nodes), max(islands)
    pe_of = {}
    node = 0
    for i, size in enumerate(islands):
        for j in range(size):
            for c in range(nodes[node]):
                pe_of[(node, c)] = (i * per_island + j) * cores + c
            node += 1
    levels = [(cores, COST_CORE), (per_island, COST_ISLAND)]
    if len(islands) > 1:
        levels.append((len(islands), COST_NETWORK))
    return levels, pe_of


def write_viem_graph(path, p, pairs, pes):
    """The guest graph in METIS format (1-based, unit weights), padded with
    isolated vertices to one per processing element, as VieM needs."""
    adjacency = [[] for _ in range(pes)]
    for a, b in pairs:
        adjacency[a].append(b + 1)
        adjacency[b].append(a + 1)
    with open(path, "w") as f:
        f.write("%d %d\n" % (pes, len(pairs)))
        for row in adjacency:
            f.write(" ".join(map(str, row)) + "\n")


def perm_from_viem(pe_of_vertex, p, rank_at_pe, cores):
    """Old rank of every position from VieM's PE per vertex (first p are the
    grid's). A position VieM put on a PE the machine lacks (padding) moves to
    a free slot: on the same node if one is free, else the nearest by PE
    number. Returns (perm, positions moved)."""
    free = set(rank_at_pe) - {pe for pe in pe_of_vertex[:p] if pe in rank_at_pe}
    perm, moved = [None] * p, 0
    displaced = []
    for x in range(p):
        pe = pe_of_vertex[x]
        if pe in rank_at_pe:
            perm[x] = rank_at_pe[pe]
        else:
            displaced.append(x)
    for x in displaced:
        pe = pe_of_vertex[x]
        best = min(free, key=lambda f: (f // cores != pe // cores, abs(f - pe), f))
        free.remove(best)
        perm[x] = rank_at_pe[best]
        moved += 1
    return perm, moved


def locations(costs):
    """(node, core) of every old rank of a structured cost file."""
    lines = [l.split("#")[0].strip() for l in open(costs)]
    lines = [l for l in lines if l]
    p = int(next(l.split()[1] for l in lines if l.startswith("ranks ")))
    cores = int(next(l.split()[1] for l in lines if l.startswith("cores-per-node ")))
    at = next(i for i, l in enumerate(lines) if l.startswith("rank-locations"))
    if lines[at].split()[1] == "block":  # rank r on node r / cores, core r % cores
        return [(r // cores, r % cores) for r in range(p)]
    return [tuple(map(int, l.split())) for l in lines[at + 1:at + 1 + p]]


def make_machine(a, d, args):
    """synth's machine for an instance in folder d: (costs, natural.perm)."""
    os.makedirs(d, exist_ok=True)
    costs = os.path.join(d, "machine.costs")
    natural = os.path.join(d, "natural.perm")
    sb.run([os.path.join(a.bin, "synth"), "--node-ranks"] + args + ["--seed", "1", "--costs", costs,
                                                                   "--planted", natural],
           os.path.join(d, "synth.log"))
    return costs, natural


def run_instance(a, name, grid, pattern, args):
    d = os.path.join(a.out, "irregular", name)
    costs, natural = make_machine(a, d, args)
    out = {"identity": (None, 0.0, ""), "natural": (natural, 0.0, "")}
    reports = {}
    for o, algorithm, limit in (("auto", "auto", a.budget), ("metis", "metis", 300),
                                ("scotch", "scotch", 300)):
        perm, report = os.path.join(d, o + ".perm"), os.path.join(d, o + ".json")
        status, seconds = sb.run([os.path.join(a.bin, "relabel"), "--costs", costs, "--grid", grid,
                                  "--pattern", pattern, "--algorithm", algorithm, "--time-limit",
                                  str(limit), "--perm", perm, "--report", report, "--quiet"],
                                 os.path.join(d, o + ".log"), check=False)
        if status != 0:
            log = open(os.path.join(d, o + ".log")).read().strip().splitlines()
            out[o] = (None, seconds, log[-1] if log else "failed")
            continue
        reports[o] = json.load(open(report))
        limited = reports[o]["time_limited"] and o != "auto"
        out[o] = (None if limited else perm, reports[o]["seconds"],
                  "stopped at the time limit (%d s)" % limit if limited else "")
    nodes, islands, _, torus = machine_of(args)
    if not a.viem:
        out["viem"] = (None, 0.0, "not given (--viem)")
    elif torus:
        out["viem"] = (None, 0.0, "n/a: no hierarchy (torus)")
    else:
        levels, pe_of_slot = viem_hierarchy(nodes, islands)
        pes = levels[0][0] * levels[1][0] * (levels[2][0] if len(levels) > 2 else 1)
        p, pairs = neighbours(grid, pattern)
        graph, result = os.path.join(d, "viem.graph"), os.path.join(d, "viem.out")
        write_viem_graph(graph, p, pairs, pes)
        cmd = [a.viem, graph, "--hierarchy_parameter_string=" + ":".join(str(n) for n, _ in levels),
               "--distance_parameter_string=" + ":".join(str(c) for _, c in levels),
               "--output_filename=" + result, "--preconfiguration_mapping=" + a.viem_preset]
        status, seconds = sb.run(cmd, os.path.join(d, "viem.log"), check=False)
        if status != 0:
            sys.exit("irregular_bench: VieM failed on %s; see %s" % (name, os.path.join(d, "viem.log")))
        rank_at_pe = {pe_of_slot[loc]: r for r, loc in enumerate(locations(costs))}
        pe_of_vertex = [int(l) for l in open(result) if l.strip()]
        perm, moved = perm_from_viem(pe_of_vertex, p, rank_at_pe, levels[0][0])
        path = os.path.join(d, "viem.perm")
        sb.write_perm(path, perm, "VieM %s, %d of %d positions moved off padding" % (
            a.viem_preset, moved, p))
        out["viem"] = (path, seconds, "%d positions moved off padding" % moved if moved else "")
    names = [o for o in ORDERINGS if o != "identity" and out.get(o, (None,))[0]]
    cmd = [os.path.join(a.bin, "evaluate"), "--costs", costs, "--grid", grid, "--pattern", pattern,
           "--json", os.path.join(d, "evaluate.json")]
    for o in names:
        cmd += ["--perm", out[o][0]]
    sb.run(cmd, os.path.join(d, "evaluate.log"))
    labellings = json.load(open(os.path.join(d, "evaluate.json")))["labellings"]
    evals = dict(zip(["identity"] + names, labellings))
    bound = reports.get("auto", {}).get("lower_bound")
    return out, evals, bound, reports.get("auto", {})


def curve_part(a, chosen):
    """auto at every budget of a.curve_budgets on the curve instances: its
    objective, wall time and gap to its lower bound."""
    rows = []
    for name, grid, pattern, args, _ in INSTANCES:
        if name not in (chosen or CURVE_INSTANCES):
            continue
        if pattern != "fibres":
            sys.exit("irregular_bench: the curve is for fibres (a lower bound): not %s" % name)
        d = os.path.join(a.out, "irregular_curve", name)
        costs, _ = make_machine(a, d, args)
        for budget in a.curve_budgets:
            report = os.path.join(d, "auto-%g.json" % budget)
            _, seconds = sb.run([os.path.join(a.bin, "relabel"), "--costs", costs, "--grid", grid,
                                 "--time-limit", "%g" % budget, "--perm", os.path.join(d, "auto.perm"),
                                 "--report", report, "--quiet"], os.path.join(d, "auto.log"))
            r = json.load(open(report))
            bound = r["lower_bound"]["primary"]
            rows.append({"instance": name, "ranks": r["p"], "budget": "%g" % budget,
                         "seconds": "%.3f" % seconds, "objective": "%.6g" % r["objective_after"],
                         "bound": "%.6g" % bound, "gap": "%.4f" % (r["objective_after"] / bound),
                         "algorithm_run": r["algorithm_run"]})
            print("curve %s: budget %g s, %.6g in %.2f s" % (name, budget, r["objective_after"], seconds),
                  flush=True)
    if rows:
        os.makedirs(a.out, exist_ok=True)
        sb.write_csv(os.path.join(a.out, "irregular_curve.csv"), rows)
        write_curve_md(a, rows)
        plot_curve(rows, os.path.join(a.out, "irregular_curve.png"))


def write_curve_md(a, rows):
    cases = {}
    for r in rows:
        cases.setdefault(r["instance"], []).append(r)
    lines = ["# auto's quality against its budget", "",
             "Written by `bench/irregular_bench.sh --parts curve` (%s). `relabel --time-limit B` "
             "(auto) at each budget B on the largest instances of the suite (see irregular.md); "
             "each cell: the objective (lower is better), its ratio to auto's lower bound, and "
             "the wall time of the process (files read and written included). A run may pass "
             "a tiny budget: its first candidate always finishes." % time.strftime("%Y-%m-%d"), "",
             "![auto's objective over its lower bound against wall time](irregular_curve.png)", "",
             "| instance | lower bound | " + " | ".join("B = %s s" % b for b in a.curve_budgets_text) +
             " |", "|---|---:|" + "---:|" * len(a.curve_budgets_text)]
    for name, got in cases.items():
        by_budget = {r["budget"]: r for r in got}
        cells = []
        for b in a.curve_budgets_text:
            r = by_budget.get(b)
            cells.append("%s (%s) in %s s" % (r["objective"], r["gap"], r["seconds"]) if r else "")
        lines.append("| %s: %s | %s | %s |" % (name, WHAT[name], got[0]["bound"], " | ".join(cells)))
    sb.write_lines(os.path.join(a.out, "irregular_curve.md"), lines)


def plot_curve(rows, path):
    """Objective over lower bound against wall time (log), a line per instance."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("irregular_bench: the curve's plot needs python3-matplotlib (tools/install-deps)")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name in dict.fromkeys(r["instance"] for r in rows):
        got = [r for r in rows if r["instance"] == name]
        ax.plot([float(r["seconds"]) for r in got], [float(r["gap"]) for r in got], marker="o",
                label="%s (%s ranks)" % (name, got[0]["ranks"]))
    ax.set_xscale("log")
    ax.set_xlabel("wall time of relabel, s (budgets %s s)" % ", ".join(
        dict.fromkeys(r["budget"] for r in rows)))
    ax.set_ylabel("objective / lower bound")
    ax.set_title("auto: quality against time")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    tmp = path + ".tmp"
    fig.savefig(tmp, format="png", dpi=100)
    plt.close(fig)
    os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--bin", required=True, help="folder with relabel, evaluate, synth")
    p.add_argument("--viem", default="", help="VieM's viem binary (see irregular_bench.sh)")
    p.add_argument("--viem-preset", default="eco", help="VieM's --preconfiguration_mapping")
    p.add_argument("--budget", type=float, default=10, help="auto's --time-limit, seconds")
    p.add_argument("--instances", default="", help="comma-separated names (default all)")
    p.add_argument("--out", default="bench/results")
    p.add_argument("--parts", default="table", help="table, curve or both (comma-separated)")
    p.add_argument("--curve-budgets", default=",".join("%g" % b for b in CURVE_BUDGETS),
                   help="the curve's budgets, seconds, comma-separated")
    a = p.parse_args()
    chosen = [n for n in a.instances.split(",") if n]
    unknown = set(chosen) - {i[0] for i in INSTANCES}
    if unknown:
        sys.exit("irregular_bench: unknown instance(s) %s" % ", ".join(sorted(unknown)))
    parts = [x for x in a.parts.split(",") if x]
    if not parts or set(parts) - {"table", "curve"}:
        sys.exit("irregular_bench: --parts takes table, curve or both, not '%s'" % a.parts)
    given = a.curve_budgets
    try:
        a.curve_budgets = [float(b) for b in given.split(",")]
    except ValueError:
        a.curve_budgets = []
    if not a.curve_budgets or min(a.curve_budgets) < 0:
        sys.exit("irregular_bench: --curve-budgets takes seconds >= 0, comma-separated, not '%s'"
                 % given)
    a.curve_budgets_text = ["%g" % b for b in a.curve_budgets]
    if "curve" in parts:
        curve_part(a, chosen)
    if "table" in parts:
        table_part(a, chosen)


def table_part(a, chosen):
    rows = []
    for name, grid, pattern, args, _ in INSTANCES:
        if chosen and name not in chosen:
            continue
        out, evals, bound, auto = run_instance(a, name, grid, pattern, args)
        for o in ORDERINGS:
            path, seconds, note = out.get(o, (None, 0.0, "not run"))
            e = evals.get(o)
            rows.append({"instance": name, "grid": grid, "pattern": pattern,
                         "ranks": sum(machine_of(args)[0]),
                         "ordering": o, "objective": e["objective"] if e else "",
                         "total": e["total"] if e else "", "seconds": "%.3f" % seconds,
                         "note": note,
                         "bound": "%.6g" % bound["primary"] if bound and o == "auto" else "",
                         "algorithm_run": auto.get("algorithm_run", "") if o == "auto" else ""})
        shown = ", ".join("%s %s" % (r["ordering"], r["objective"] or r["note"]) for r in rows[-len(ORDERINGS):])
        print("%s: %s" % (name, shown), flush=True)
    if rows:
        os.makedirs(a.out, exist_ok=True)
        sb.write_csv(os.path.join(a.out, "irregular.csv"), rows)
        write_md(a, rows)


def write_md(a, rows):
    cases = {}
    for r in rows:
        cases.setdefault(r["instance"], {})[r["ordering"]] = r
    lines = ["# Relabelling on irregular machines", "",
             "Written by `bench/irregular_bench.sh` (%s; auto's budget %g s; VieM %s). Machines from "
             "`synth --node-ranks` (costs: 1 inside a socket, 2 across sockets, %d between nodes "
             "of an island or per torus hop, %d between islands). Objective: relabel's default "
             "for the pattern, lower is better; also the lower bound auto reports (fibres and "
             "stencils) and auto's gap to it. best peer: the least of the job's order, the machine's "
             "natural node-by-node order, METIS, Scotch and VieM. Seconds in brackets: "
             "relabel's own report for METIS, Scotch and auto, the process's wall time for VieM "
             "(one run each on a shared machine: indicative)." % (
                 time.strftime("%Y-%m-%d"), a.budget, a.viem_preset if a.viem else "not run",
                 COST_ISLAND, COST_NETWORK),
             "",
             "| instance | ranks, grid | identity | natural | metis (s) | scotch (s) | viem (s) | auto (s) | auto / best peer | bound | auto / bound |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, c in cases.items():
        def cell(o):
            r = c.get(o)
            if not r:
                return ""
            if r["objective"] != "":
                timed = o in ("metis", "scotch", "viem", "auto")
                return "%.6g" % float(r["objective"]) + (" (%s)" % r["seconds"] if timed else "")
            return r["note"] if r["note"].startswith("n/a") else "n/a: " + r["note"]
        auto = c["auto"]
        peers = [float(c[o]["objective"]) for o in ORDERINGS[:-1] if o in c and c[o]["objective"] != ""]
        ratio = "%.3f" % (float(auto["objective"]) / min(peers)) if peers and auto["objective"] != "" else ""
        gap = ("%.3f" % (float(auto["objective"]) / float(auto["bound"]))
               if auto["bound"] and float(auto["bound"]) > 0 else "")
        lines.append("| %s (%s) | %s, %s %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, WHAT[name], auto["ranks"], auto["grid"], auto["pattern"], cell("identity"),
            cell("natural"), cell("metis"), cell("scotch"), cell("viem"), cell("auto"), ratio,
            auto["bound"], gap))
    sb.write_lines(os.path.join(a.out, "irregular.md"), lines)


if __name__ == "__main__":
    main()
