#!/usr/bin/env python3
"""Checks a measure output folder against the hosts its ranks ran on.

  separation.py DIR                      every intra-node pair cheaper than
                                         every inter-node pair (dense or
                                         structured costs.txt)
  separation.py DIR --fibres PERM Q      the labelling PERM (perm[new] = old)
                                         of a grid whose last dimension is Q
                                         keeps each fibre along it on one host,
                                         or is no worse by relabel's objective
                                         (sum-max) than a labelling that does

Prints one line and exits 0 when it holds, 1 when it does not.
"""
import sys


def hosts_of(folder):
    hosts = {}
    for line in open(folder + "/placement.txt"):
        if line.strip() and not line.startswith("#"):
            rank, host, _core = line.split()
            hosts[int(rank)] = host
    return hosts


def cost_function(folder, p):
    text = [l.split() for l in open(folder + "/costs.txt") if l.strip() and not l.startswith("#")]
    if text and text[0][0] not in ("cores-per-node",) and all(len(r) == p for r in text):
        rows = [list(map(float, r)) for r in text]
        return lambda a, b: rows[a][b]
    # Structured: core-costs and node-costs blocks and rank locations.
    i = cores = nodes = 0
    core, node, loc = [], [], []
    while i < len(text):
        key = text[i][0]
        if key == "cores-per-node":
            cores = int(text[i][1])
        elif key == "nodes":
            nodes = int(text[i][1])
        elif key == "core-costs":
            core = [list(map(float, r)) for r in text[i + 1:i + 1 + cores]]
            i += cores
        elif key == "node-costs":
            node = [list(map(float, r)) for r in text[i + 1:i + 1 + nodes]]
            i += nodes
        elif key == "rank-locations":
            if text[i][1] == "list":
                loc = [tuple(map(int, r)) for r in text[i + 1:i + 1 + p]]
                i += p
            else:
                loc = [(r // cores, r % cores) for r in range(p)]
        i += 1

    def cost(a, b):
        (na, ca), (nb, cb) = loc[a], loc[b]
        return core[ca][cb] if na == nb else node[na][nb]

    return cost


def sum_max(perm, q, cost):
    """relabel's sum-max objective of labelling perm on a (p / q) x q grid."""
    p = len(perm)
    rows = [[perm[k + i] for i in range(q)] for k in range(0, p, q)]
    columns = [[perm[j + q * i] for i in range(p // q)] for j in range(q)]
    def dearest(fibres):
        return max(sum(cost(a, b) for x, a in enumerate(f) for b in f[x + 1:]) for f in fibres)
    return dearest(rows) + dearest(columns)


def main(argv):
    folder = argv[1]
    hosts = hosts_of(folder)
    p = len(hosts)
    if len(argv) not in (2, 5) or (len(argv) == 5 and argv[2] != "--fibres"):
        print(__doc__, file=sys.stderr)
        return 2
    if len(argv) == 5:
        perm = [int(l) for l in open(argv[3]) if l.strip() and not l.startswith("#")]
        q = int(argv[4])
        if q < 1 or p % q != 0 or len(perm) != p:
            print(f"separation.py: a labelling of {len(perm)} ranks, fibres of {q}, "
                  f"for {p} ranks", file=sys.stderr)
            return 2
        split = [k for k in range(0, p, q) if len({hosts[perm[k + i]] for i in range(q)}) > 1]
        if not split:
            print(f"all {p // q} fibres on one node")
            return 0
        # Measured costs are uneven, so a labelling that splits fibres may
        # still be as good by relabel's objective (sum over both dimensions
        # of the dearest fibre), e.g. a square grid's other dimension on the
        # nodes. It must not be worse than every fibre on one node.
        cost = cost_function(folder, p)
        by_host = {}
        for r in range(p):
            by_host.setdefault(hosts[r], []).append(r)
        aligned = [r for h in sorted(by_host) for r in by_host[h]]
        if any(len(ranks) != q for ranks in by_host.values()):
            print(f"{len(split)} of {p // q} fibres split across nodes (nodes of other sizes than {q})")
            return 1
        got, want = sum_max(perm, q, cost), sum_max(aligned, q, cost)
        verdict = "no worse than" if got <= want * (1 + 1e-9) else "worse than"
        print(f"{len(split)} of {p // q} fibres split across nodes, objective {got:.6g} {verdict} "
              f"{want:.6g} with every fibre on one node")
        return 0 if verdict == "no worse than" else 1
    cost = cost_function(folder, p)
    intra = [cost(a, b) for a in range(p) for b in range(a + 1, p) if hosts[a] == hosts[b]]
    inter = [cost(a, b) for a in range(p) for b in range(a + 1, p) if hosts[a] != hosts[b]]
    if not intra or not inter:
        print("nothing to compare (one node, or one rank per node)")
        return 0
    ok = max(intra) < min(inter)
    print(f"intra {min(intra) * 1e6:.1f}..{max(intra) * 1e6:.1f} us, "
          f"inter {min(inter) * 1e6:.1f}..{max(inter) * 1e6:.1f} us, "
          + ("separated" if ok else "NOT separated"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
