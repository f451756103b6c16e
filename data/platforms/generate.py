#!/usr/bin/env python3
"""Writes the generated SimGrid platforms and rank placements of data/platforms.

  generate.py [--dir DIR]          (re)write everything into DIR
  generate.py --check [--dir DIR]  regenerate into a temporary directory and
                                   compare with DIR; exit 1 naming differences

DIR defaults to the directory of this script. What it writes:

* The fat-tree, torus and dragonfly platforms (FAMILIES below), each at 64,
  256, 1,024 and 4,096 ranks: 16 hosts of 4 cores, 64 hosts of 4 cores,
  128 hosts of 8 cores and 256 hosts of 16 cores. The core counts grow with
  the rank count so that the host counts, hence the simulated networks, stay
  small enough for SMPI to simulate in reasonable time.
* For every generated platform and every hand-written one in EXISTING, three
  placements of hosts x cores ranks (rank r runs on the r-th slot):
    NAME.hostfile         block: rank r on host r / cores ("host:cores" lines)
    NAME-rr.hostfile      round-robin: rank r on host r mod hosts ("host:1")
    NAME-random.hostfile  a seeded random permutation of the block slots
  The hand-written platforms' XML files are only read, never written, and
  their NAME.hostfile is written only if it is a block placement (PLANTED
  lists the scrambled ones the measurement tests depend on, which are kept).

Standard library only; the output depends on nothing but this file and the
hand-written XML files, so regeneration is byte-identical.
"""

import argparse
import filecmp
import os
import random
import re
import sys
import tempfile
import textwrap
import xml.etree.ElementTree as ET

# Hand-written platforms that have a NAME.hostfile (ci-cluster and flat-1024
# have none: their users run one rank per host without a hostfile).
EXISTING = [
    "lvl2-node16-core4",
    "lvl2-node32-core8",
    "lvl2-node64-core16",
    "lvl2-node128-core32",
    "lvl3-rack4-node4-core4",
    "lvl3-rack4-node8-core8",
    "lvl3-rack5-node5-core40",
    "lvl3-rack8-node8-core16",
    "lvl3-rack8-node16-core32",
    "node8-core4",
    "rack2-node4-core4",
]

# Their NAME.hostfile is a scrambled placement whose true costs are planted
# in NAME.costs, so it must stay as it is rather than become a block one.
PLANTED = {"node8-core4", "rack2-node4-core4"}

# Hosts and cores per host at each size (ranks = hosts x cores).
SIZES = [(16, 4), (64, 4), (128, 8), (256, 16)]

# Every link outside a host, as in the hand-written platforms.
BW, LAT = "10Gbps", "2us"
LOOPBACK_BW, LOOPBACK_LAT = "100Gbps", "0.2us"

HEADER = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
"""

CLUSTER = """<platform version="4.1">
  <zone id="world" routing="Full">
    <cluster id="{cid}" prefix="n" suffix="" radical="0-{last}" speed="1Gf" core="{cores}"
             bw="{bw}" lat="{lat}" loopback_bw="{lbw}" loopback_lat="{llat}"
             topology="{topology}" topo_parameters="{params}"/>
  </zone>
</platform>
"""

PLACEMENTS = (
    "{name}.hostfile places ranks in blocks of {cores} per host (rank r on host"
    " n(r / {cores})), {name}-rr.hostfile round-robin (rank r on host"
    " n(r mod {hosts})) and {name}-random.hostfile in a fixed random order of"
    " the same slots; generate.py writes all three.")


def comment(text):
    """An XML comment wrapped like the hand-written platforms' ones."""
    # NUL glues a number to its unit so that no line starts with "us".
    glued = re.sub(r" (us|Gb/s)\b", "\0\\1", text)
    wrapped = textwrap.fill(glued, width=76, initial_indent="<!-- ",
                            subsequent_indent="     ", break_on_hyphens=False)
    return wrapped.replace("\0", " ") + " -->\n"


def fat_tree(hosts, cores):
    """A 2-level leaf-spine fat tree, 2:1 oversubscribed at the leaves."""
    per_leaf = {16: 4, 64: 8, 128: 8, 256: 16}[hosts]
    leaves = hosts // per_leaf
    # One cable from each leaf to each spine; half as many spines as hosts
    # per leaf makes every leaf 2:1 oversubscribed, so placement matters.
    spines = per_leaf // 2
    name = "fattree-leaf%d-node%d-core%d" % (leaves, per_leaf, cores)
    # SimGrid's "h; m_1..m_h; w_1..w_h; p_1..p_h": m = children per switch,
    # w = parents per node of the level below, p = parallel cables.
    params = "2;%d,%d;1,%d;1,1" % (per_leaf, leaves, spines)
    text = (
        "A 2-level fat tree (leaf-spine; SimGrid FAT_TREE, topo_parameters"
        " \"{params}\") for the ordering comparison harness: {leaves} leaf"
        " switches of {per_leaf} hosts of {cores} cores, {ranks} ranks, under"
        " {spines} spine switches. Inside a host: loopback, 0.2 us, 100 Gb/s"
        " (shared memory). Every cable (host-leaf and leaf-spine) is a 2 us,"
        " 10 Gb/s link; each leaf has one cable to each spine, so its"
        " {per_leaf} host links share {spines} uplinks (2:1 oversubscribed)."
        " Same leaf: 2 hops (4 us); other leaf: 4 hops (8 us), the spine"
        " chosen by destination mod k. Host n<i> is on leaf i / {per_leaf}."
    ).format(params=params, leaves=leaves, per_leaf=per_leaf, cores=cores,
             ranks=hosts * cores, spines=spines)
    return name, "fattree", "FAT_TREE", params, text


def torus(hosts, cores):
    """A 3-D torus, one router per host."""
    dims = {16: (4, 2, 2), 64: (4, 4, 4), 128: (8, 4, 4), 256: (8, 8, 4)}[hosts]
    shape = "x".join(str(d) for d in dims)
    name = "torus-%s-core%d" % (shape, cores)
    params = ",".join(str(d) for d in dims)
    x, y, _ = dims
    text = (
        "A 3-D torus (SimGrid TORUS, topo_parameters \"{params}\") for the"
        " ordering comparison harness: {shape} hosts of {cores} cores,"
        " {ranks} ranks. Inside a host: loopback, 0.2 us, 100 Gb/s (shared"
        " memory). Each host is a router with a 2 us, 10 Gb/s duplex link to"
        " its neighbour in each dimension (with wrap-around); messages go"
        " dimension by dimension, one link per hop, up to {maxhops} hops"
        " ({maxlat} us). Host n<i> is at (i mod {x}, (i / {x}) mod {y},"
        " i / {xy})."
    ).format(params=params, shape=shape, cores=cores, ranks=hosts * cores,
             maxhops=sum(d // 2 for d in dims),
             maxlat=2 * sum(d // 2 for d in dims), x=x, y=y, xy=x * y)
    return name, "torus", "TORUS", params, text


def dragonfly(hosts, cores):
    """A Cray Cascade style dragonfly with one cable per router pair."""
    groups, chassis, routers, per_router = {
        16: (2, 2, 2, 2), 64: (4, 2, 4, 2), 128: (4, 4, 4, 2),
        256: (8, 2, 8, 2)}[hosts]
    name = "dragonfly-group%d-chassis%d-router%d-node%d-core%d" % (
        groups, chassis, routers, per_router, cores)
    # "groups,cables; chassis,cables; routers,cables; hosts per router".
    # SimGrid hangs every group's cable to group g on its router g of
    # chassis 0, hence groups <= routers per chassis.
    params = "%d,1;%d,1;%d,1;%d" % (groups, chassis, routers, per_router)
    text = (
        "A dragonfly (Cray Cascade style; SimGrid DRAGONFLY, topo_parameters"
        " \"{params}\") for the ordering comparison harness: {groups} groups"
        " of {chassis} chassis of {routers} routers (blades) of {per_router}"
        " hosts of {cores} cores, {ranks} ranks. Inside a host: loopback,"
        " 0.2 us, 100 Gb/s (shared memory). Every link is 2 us, 10 Gb/s: host"
        " to router; green, all-to-all between the routers of a chassis;"
        " black, between the routers at the same place in the chassis of a"
        " group; blue, one cable between each pair of groups, the one to"
        " group g on router g of chassis 0 (the only links between groups,"
        " shared by all their traffic). Minimal routing: same router 2 hops"
        " (4 us), same"
        " chassis 3, same group up to 4, other group up to 7 (14 us). Host"
        " n<i> is in group i / {per_group}, chassis (i / {per_chassis}) mod"
        " {chassis}, router (i / {per_router}) mod {routers}."
    ).format(params=params, groups=groups, chassis=chassis, routers=routers,
             per_router=per_router, cores=cores, ranks=hosts * cores,
             per_group=chassis * routers * per_router,
             per_chassis=routers * per_router)
    return name, "dragonfly", "DRAGONFLY", params, text


FAMILIES = [fat_tree, torus, dragonfly]


def platform_xml(name, hosts, cores, cid, topology, params, text):
    placed = PLACEMENTS.format(name=name, cores=cores, hosts=hosts)
    return (HEADER + comment(text + " " + placed)
            + CLUSTER.format(cid=cid, last=hosts - 1, cores=cores, bw=BW,
                             lat=LAT, lbw=LOOPBACK_BW, llat=LOOPBACK_LAT,
                             topology=topology, params=params))


def expand_radical(radical):
    """SimGrid radicals: "0-3,7" (older files use ';' as the separator)."""
    numbers = []
    for part in re.split(r"[,;]", radical):
        part = part.strip()
        if "-" in part:
            lo, hi = part.split("-")
            numbers.extend(range(int(lo), int(hi) + 1))
        elif part:
            numbers.append(int(part))
    return numbers


def hosts_of(xml_text):
    """[(host, cores)] in document order: clusters expanded, plain hosts."""
    hosts = []
    for elem in ET.fromstring(xml_text).iter():
        if elem.tag == "cluster":
            cores = int(elem.get("core", "1"))
            for i in expand_radical(elem.get("radical")):
                hosts.append((elem.get("prefix", "") + str(i) + elem.get("suffix", ""), cores))
        elif elem.tag == "host":
            hosts.append((elem.get("id"), int(elem.get("core", "1"))))
    return hosts


def shuffled(name, items):
    """Fisher-Yates driven by random() alone: Python guarantees that a str
    seed and random() give the same sequence in every version, unlike
    shuffle() or randrange()."""
    rng = random.Random("rankshape-random-placement:" + name)
    items = list(items)
    for i in range(len(items) - 1, 0, -1):
        j = int(rng.random() * (i + 1))
        items[i], items[j] = items[j], items[i]
    return items


def placements(name, hosts):
    """{file name: text} of the three placements of NAME."""
    block = "".join("%s:%d\n" % (h, c) for h, c in hosts)
    slots = [h for h, c in hosts for _ in range(c)]
    names = [h for h, _ in hosts]
    rr = "".join("%s:1\n" % names[r % len(names)] for r in range(len(slots)))
    rand = "".join("%s:1\n" % h for h in shuffled(name, slots))
    files = {name + "-rr.hostfile": rr, name + "-random.hostfile": rand}
    if name not in PLANTED:
        files[name + ".hostfile"] = block
    return files


def generate(src, out):
    """Writes into OUT everything generated; hand-written XML read from SRC.
    Returns the file names written."""
    files = {}
    for family in FAMILIES:
        for hosts, cores in SIZES:
            name, cid, topology, params, text = family(hosts, cores)
            xml = platform_xml(name, hosts, cores, cid, topology, params, text)
            files[name + ".xml"] = xml
            files.update(placements(name, hosts_of(xml)))
    for name in EXISTING:
        with open(os.path.join(src, name + ".xml")) as f:
            files.update(placements(name, hosts_of(f.read())))
    for fname, text in files.items():
        with open(os.path.join(out, fname), "w") as f:
            f.write(text)
    return sorted(files)


def check(src):
    """Names every generated file that differs from or is missing in SRC, and
    every hostfile in SRC that nothing generates (a stale placement or a
    platform missing from EXISTING). Returns the number of problems."""
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        written = generate(src, tmp)
        for fname in written:
            committed = os.path.join(src, fname)
            if not os.path.exists(committed):
                problems.append("missing: " + fname)
            elif not filecmp.cmp(committed, os.path.join(tmp, fname), shallow=False):
                problems.append("differs: " + fname)
    kept = {p + ".hostfile" for p in PLANTED}
    for fname in sorted(os.listdir(src)):
        if fname.endswith(".hostfile") and fname not in written and fname not in kept:
            problems.append("not generated: " + fname)
    for p in problems:
        print("generate.py --check: " + p, file=sys.stderr)
    if problems:
        print("run python3 data/platforms/generate.py to regenerate", file=sys.stderr)
    else:
        print("generate.py --check: %d files up to date" % len(written))
    return len(problems)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed files instead of writing")
    parser.add_argument("--dir", default=os.path.dirname(os.path.abspath(__file__)),
                        help="the platforms directory (default: this script's)")
    args = parser.parse_args()
    if args.check:
        return 1 if check(args.dir) else 0
    written = generate(args.dir, args.dir)
    print("wrote %d files into %s" % (len(written), args.dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
