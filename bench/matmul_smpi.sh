#!/bin/bash
# Communication time of lib/matmul's 3D, SUMMA and HSUMMA on simulated
# 3-level machines (SimGrid SMPI) of 64 to 4,096 ranks, with the ranks
# placed three ways (identity: block order, node by node; scrambled: a fixed
# random permutation; relabelled: relabel_comm() with measured costs), and
# HSUMMA's best group count against the sqrt(p) prediction.
#   bench/matmul_smpi.sh [--platforms "NAME:RANKS:N ..."] [--out DIR] [--reuse]
#                        [--panel B] [--reps R] [--costs SOURCE] [--cost-file F]
#                        [--relabel-time S]
#                        [--selector ompi|mpich] [--full-sweep-max P] [--groups LIST]
#                        [--algorithms 3d,summa,hsumma] [--placements LIST]
#                        [--smpi-cfg "KEY:VALUE ..."] [--no-check]
# Platforms are data/platforms/NAME.{xml,hostfile}; N is the (square) matrix
# size simulated there.
# What is simulated: messages only. The runs use --no-compute (the local
# products are skipped, so no real time goes into them) and
# --cfg=smpi/simulate-computation:no (what computation remains, e.g.
# packing B's panels and relabelling, costs no simulated time): the times
# are simulated communication times, deterministic (the same on every run
# and machine). comm_seconds is the 3D algorithm's allgather plus
# reduce-scatter, SUMMA's and HSUMMA's broadcasts (dispatched: lib/coll
# picks hierarchical or native per call); median of --reps repetitions
# (after one warmup, which also builds the collectives' contexts) of the
# slowest rank. Correctness is checked once, before: every algorithm and
# placement with computation on the first platform at n = 256 (C's entries
# against recomputed ones; the script stops if any is wrong).
# Relabelled: relabel_comm() of the job's communicator onto each grid shape
# (2D and 3D), costs --costs (default hierarchical: node-to-node ping-pong
# by node leaders, core-to-core inside node 0; simulated), each rank
# searching at most --relabel-time seconds (real time: the ranks run one
# after another in the simulator, so this bounds the real time at p times
# as much; default 0.5).
# HSUMMA: every grouping IxJ of the 2D grid up to --full-sweep-max ranks
# (default 1,024), above that the balanced ones (I, J within 2x); --groups
# "IxJ,..." runs only those (and SUMMA), where a sweep would take hours;
# --algorithms a subset of 3d, summa and hsumma (all by default);
# --placements a subset of identity, scrambled and relabelled (all by default).
# --smpi-cfg: more SimGrid settings (each passed as --cfg=KEY:VALUE), e.g.
# "smpi/allreduce:rdb smpi/bcast:binomial_tree" at 4,096 ranks: SMPI 3.32's
# ompi choices for the world-wide allreduce and the broadcast inside
# MPI_Comm_split are slow to simulate there (a split of all ranks: 33 s of
# real time at 1,024 ranks, 0.6 s with the binomial broadcast; 335 s at
# 2,048). The 3D algorithm's timed collectives (allgather, reduce-scatter)
# do not use them; SUMMA's and HSUMMA's broadcasts do, so their times would
# change. Under SMPI, lib/mpi splits communicators without MPI_Comm_split
# (an allgather and MPI_Comm_create_group): SimGrid 3.32's own split took
# over an hour at 4,096 ranks.
# Collectives: --selector ompi (default, as bench/coll_smpi.sh: SMPI's copy
# of Open MPI's tuned decisions) or mpich (as tools/run_mpi.sh, with its
# SimGrid 3.32 work-arounds, among them --cfg=smpi/bcast:binomial_tree:
# MPICH's bcast selection can hang on split communicators).
# Writes DIR/matmul_smpi.{csv,md} (default bench/results) and each
# platform's raw outputs (CSV, log, real time and memory) under
# DIR/matmul_smpi/NAME-pRANKS-nN/; --reuse takes a platform's saved outputs
# instead of simulating it again. Memory: every simulated rank's blocks are
# real memory (3D: about 3 n^2 / p^(2/3) doubles per rank and more), hence
# n = 2,048 at 4,096 ranks.
set -euo pipefail
cd "$(dirname "$0")/.."
platforms="lvl3-rack4-node4-core4:64:4096 lvl3-rack4-node8-core8:256:4096
lvl3-rack8-node8-core16:1024:4096 lvl3-rack8-node16-core32:4096:2048"
out=bench/results
reuse=0
panel=64
reps=2
costs=hierarchical
cost_file=
relabel_time=0.5
selector=ompi
full_sweep_max=1024
groups=
algorithms=3d,summa,hsumma
placements=identity,scrambled,relabelled
smpi_cfg=
check=1
while [ $# -gt 0 ]; do
  case $1 in
    --platforms) platforms=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --reuse) reuse=1; shift ;;
    --panel) panel=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --costs) costs=$2; shift 2 ;;
    --cost-file) cost_file=$2; shift 2 ;;
    --relabel-time) relabel_time=$2; shift 2 ;;
    --selector) selector=$2; shift 2 ;;
    --full-sweep-max) full_sweep_max=$2; shift 2 ;;
    --groups) groups=$2; shift 2 ;;
    --algorithms) algorithms=$2; shift 2 ;;
    --placements) placements=$2; shift 2 ;;
    --smpi-cfg) smpi_cfg=$2; shift 2 ;;
    --no-check) check=0; shift ;;
    *) echo "matmul_smpi.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
case $selector in
  ompi) collectives=(--cfg=smpi/coll-selector:ompi) ;;
  mpich)
    collectives=(--cfg=smpi/coll-selector:mpich --cfg=smpi/alltoall:basic_linear
      --cfg=smpi/alltoallv:bruck --cfg=smpi/reduce:binomial --cfg=smpi/bcast:binomial_tree)
    ;;
  *) echo "matmul_smpi.sh: --selector must be ompi or mpich" >&2; exit 2 ;;
esac
for c in $smpi_cfg; do collectives+=("--cfg=$c"); done
for tool in smpirun python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "matmul_smpi.sh: needs $tool (tools/install-deps)" >&2; exit 1; }
done
bazel build --config=smpi --noshow_progress //bench:matmul_bench
bin=$(bazel info --config=smpi bazel-bin 2>/dev/null)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A copy: a later build in this tree must not change it during the runs.
cp "$bin/bench/matmul_bench" "$work/"
bench=$work/matmul_bench
mkdir -p "$out"
start=$(date +%s)
timing=$work/timing.txt
: >"$timing"

smpi() {  # NAME RANKS LOG ARGS... (appends a timing line to $dir/timing.txt)
  local name=$1 np=$2 log=$3
  shift 3
  local status=0
  /usr/bin/time -f "%e %M" -o "$work/time" \
    smpirun -np "$np" -platform "data/platforms/$name.xml" \
    -hostfile "data/platforms/$name.hostfile" --cfg=smpi/host-speed:1Gf \
    "${collectives[@]}" --cfg=smpi/simulate-computation:no \
    --log=root.thresh:warning --log=smpi_config.thresh:warning "$bench" "$@" >"$log" 2>&1 ||
    status=$?
  if [ "$status" -ne 0 ] || grep -q "Deadlock detected" "$log"; then
    grep -v '^\[' "$log" | tail -n 30 >&2
    echo "matmul_smpi.sh: failed on $name ($np ranks, status $status): $*" >&2
    exit 1
  fi
  local real rss
  read -r real rss <"$work/time"
  echo "$name $np $(basename "$log" .log) ${real}s $((rss / 1024))MiB" | tee -a "$dir/timing.txt"
}

first=1
runs=()
for spec in $platforms; do
  IFS=: read -r name np n <<<"$spec"
  [ -n "$n" ] || { echo "matmul_smpi.sh: platform '$spec' is not NAME:RANKS:N" >&2; exit 2; }
  id=$name-p$np-n$n
  saved=$out/matmul_smpi/$id
  if [ "$reuse" -eq 1 ] && [ -f "$saved/matmul.csv" ]; then
    echo "matmul_smpi.sh: $id: reusing $saved"
    cat "$saved/timing.txt" >>"$timing"
    runs+=("$name,$np,$n,$saved")
    first=0
    continue
  fi
  dir=$work/$id
  mkdir -p "$dir"
  : >"$dir/timing.txt"
  common=(--algorithms "$algorithms" --placement "$placements"
    --panel "$panel" --costs "$costs" --relabel-time "$relabel_time")
  [ -n "$cost_file" ] && common+=(--cost-file "$cost_file")
  if [ "$check" -eq 1 ] && [ "$first" -eq 1 ]; then
    smpi "$name" "$np" "$dir/check.log" --out "$dir/check.csv" "${common[@]}" \
      --sizes 256 --groups balanced --reps 1 --warmup 0
  fi
  first=0
  sweep=auto
  [ "$np" -gt "$full_sweep_max" ] && sweep=balanced
  [ -n "$groups" ] && sweep=$groups
  smpi "$name" "$np" "$dir/matmul.log" --out "$dir/matmul.csv" "${common[@]}" --no-compute \
    --sizes "$n" --groups "$sweep" --reps "$reps" --warmup 1
  # What this platform ran with: a later --reuse run reports it as it was.
  echo "$name: $reps timed repetition(s), algorithms $algorithms, placements $placements, HSUMMA groupings $sweep${smpi_cfg:+, SimGrid settings $smpi_cfg}" \
    >"$dir/settings.txt"
  cat "$dir/timing.txt" >>"$timing"
  rm -rf "$saved"
  mkdir -p "$out/matmul_smpi"
  cp -r "$dir" "$saved"
  runs+=("$name,$np,$n,$saved")
done
elapsed=$(($(date +%s) - start))
version=$(smpirun -version 2>/dev/null | head -n 1 | grep -o '[0-9][0-9.]*' | head -n 1)

python3 - "$work/matmul_smpi.csv" "$work/matmul_smpi.md" "$timing" "${runs[@]}" <<EOF
import csv, math, re, sys
out_csv, out_md, timing = sys.argv[1:4]
runs = [r.split(",", 3) for r in sys.argv[4:]]
rows, relabel = [], []
for name, np_, n, d in runs:
    for r in csv.DictReader(open(f"{d}/matmul.csv")):
        rows.append(dict(platform=name, **r))
    for line in open(f"{d}/matmul.log"):
        m = re.match(r"# relabelled (\S+) \(from (\S+)\): costs (\S+), algorithm (.*), objective "
                     r"(\S+) -> (\S+), measure (\S+) s, relabel (\S+) s", line)
        if m:
            relabel.append((name, np_) + m.groups())
fields = ["platform"] + [f for f in rows[0].keys() if f != "platform"] if rows else ["platform"]
with open(out_csv, "w", newline="") as f:
    wr = csv.DictWriter(f, fieldnames=fields)
    wr.writeheader()
    wr.writerows(rows)

md = open(out_md, "w")
w = lambda s="": md.write(s + "\n")
ms = lambda s: f"{float(s) * 1e3:.3f}"
w("# Distributed matrix multiplication on simulated machines (SMPI)")
w()
w("\`bench/matmul_smpi.sh\` ($(date -u +%Y-%m-%d); the simulations took "
  f"{sum(float(l.split()[3].rstrip('s')) for l in open(timing)) / 60:.1f}"
  " min of real time on this shared 2-core machine). SimGrid SMPI $version,")
w("collectives \`$selector\` (\`${collectives[*]}\`),")
w("\`--cfg=smpi/simulate-computation:no\` and \`matmul_bench --no-compute\`: messages only,")
w("simulated and deterministic. **Communication time** in ms of simulated time: 3D's")
w("allgathers and reduce-scatter, SUMMA's and HSUMMA's panel broadcasts (through")
w("\`lib/coll\`'s dispatch), median of the timed repetitions (after one warmup; the")
w("simulated time is the same on every repetition) of the slowest rank. Panel b = $panel")
w("(HSUMMA: inner and outer). Grids balanced (\`MPI_Dims_create\`).")
w()
w("- **identity**: ranks in block order (the hostfile: node by node, rack by rack);")
w("- **scrambled**: a fixed random permutation of them (\`MPI_Comm_split\`, shuffled key);")
w("- **relabelled**: \`relabel_comm()\` of the job's communicator (block order) onto the grid's")
w("  shape, costs \`$costs\` (" + ("read from \`$cost_file\`" if "$costs" == "file" else "measured in the simulation")
  + "), at most $relabel_time s of search per rank.")
checks = []
for name, np_, n, d in runs:
    try:
        errs = [float(r["max_rel_error"]) for r in csv.DictReader(open(f"{d}/check.csv"))]
        checks.append(f"{name} ({np_} ranks, n = 256): {len(errs)} configurations, largest relative error {max(errs):.2g}")
    except FileNotFoundError:
        pass
w("- Correctness, checked with computation before the timed runs: " + ("; ".join(checks) if checks else "not checked (--no-check)") + ".")
w("- Platforms (\`data/platforms/\`): lvl3 = racks of nodes of cores; loopback 0.2 us, 100 Gb/s")
w("  inside a node; 2 us, 10 Gb/s per node into a 4:1 oversubscribed rack backbone; one 5 us")
w("  uplink per rack to the spine (4:1 or 8:1 oversubscribed).")
w()
w("## Communication time by algorithm and placement (ms)")
w()
w("HSUMMA: its best grouping IxJ for each placement. Gain: scrambled / relabelled.")
w()
w("| platform | p | n | algorithm | grid | identity | scrambled | relabelled | gain | relabelled / identity |")
w("|---|---:|---:|---|---|---:|---:|---:|---:|---:|")
def pick(name, alg, place):
    c = [r for r in rows if r["platform"] == name and r["algorithm"] == alg and r["placement"] == place]
    return min(c, key=lambda r: float(r["comm_seconds"])) if c else None
for name, np_, n, _ in runs:
    for alg, label in (("3d", "3D"), ("summa", "SUMMA"), ("hsumma", "HSUMMA (best)")):
        cell, val, grid = {}, {}, ""
        for place in ("identity", "scrambled", "relabelled"):
            r = pick(name, alg, place)
            if r is None:
                cell[place] = "-"
                continue
            grid = r["grid"]
            val[place] = float(r["comm_seconds"])
            cell[place] = ms(r["comm_seconds"]) + (f" ({r['groups']})" if alg == "hsumma" else "")
        if not val:
            continue  # not run here (--algorithms)
        gain = f"{val['scrambled'] / val['relabelled']:.2f}x" if "scrambled" in val and val.get("relabelled") else "-"
        vs = f"{val['relabelled'] / val['identity']:.2f}" if "identity" in val and "relabelled" in val and val["identity"] else "-"
        w(f"| {name} | {np_} | {n} | {label} | {grid} | {cell['identity']} | {cell['scrambled']} | "
          f"{cell['relabelled']} | {gain} | {vs} |")
w()
w("## HSUMMA: best group count against sqrt(p)")
w()
w("Hasanov et al. predict the fewest communication at G = sqrt(p) groups. G = I x J; G = 1")
w("and G = p are SUMMA. *near sqrt(p)*: the grouping whose G is nearest sqrt(p) on a log")
w("scale (the faster on ties).")
w()
w("| platform | p | grid | sqrt(p) | placement | best G (IxJ) | best ms | G near sqrt(p) | its ms | SUMMA ms | best / SUMMA |")
w("|---|---:|---|---:|---|---:|---:|---:|---:|---:|---:|")
for name, np_, n, _ in runs:
    p = int(np_)
    for place in ("identity", "scrambled", "relabelled"):
        hs = [r for r in rows if r["platform"] == name and r["algorithm"] == "hsumma" and r["placement"] == place]
        if not hs:
            continue
        G = lambda r: int(r["groups"].split("x")[0]) * int(r["groups"].split("x")[1])
        best = min(hs, key=lambda r: float(r["comm_seconds"]))
        near = min(hs, key=lambda r: (abs(math.log(G(r)) - 0.5 * math.log(p)), float(r["comm_seconds"])))
        su = pick(name, "summa", place)
        ratio = f"{float(best['comm_seconds']) / float(su['comm_seconds']):.2f}" if su else "-"
        w(f"| {name} | {p} | {best['grid']} | {math.sqrt(p):.0f} | {place} | {G(best)} ({best['groups']}) | "
          f"{ms(best['comm_seconds'])} | {G(near)} ({near['groups']}) | {ms(near['comm_seconds'])} | "
          f"{ms(su['comm_seconds']) if su else '-'} | {ratio} |")
w()
w("## HSUMMA sweep (ms; between groups in parentheses)")
for name, np_, n, _ in runs:
    hs = [r for r in rows if r["platform"] == name and r["algorithm"] == "hsumma"]
    if not hs:
        continue
    w()
    w(f"**{name}**, p = {np_}, n = {n}, grid {hs[0]['grid']}:")
    w()
    w("| IxJ | G | identity | scrambled | relabelled |")
    w("|---|---:|---:|---:|---:|")
    pairs = sorted({r["groups"] for r in hs}, key=lambda g: (int(g.split("x")[0]) * int(g.split("x")[1]), g))
    for g in pairs:
        cells = []
        for place in ("identity", "scrambled", "relabelled"):
            c = [r for r in hs if r["groups"] == g and r["placement"] == place]
            cells.append(f"{ms(c[0]['comm_seconds'])} ({ms(c[0]['outer_comm_seconds'])})" if c else "-")
        i, j = map(int, g.split("x"))
        w(f"| {g} | {i * j} | " + " | ".join(cells) + " |")
w()
w("## Relabelling")
w()
w("Objective (sum over grid dimensions of the worst fibre's cost, measured costs) of the job's")
w("order and of the relabelled one; measuring and relabelling times are simulated (MPI_Wtime;")
w("the search itself costs no simulated time).")
w()
w("| platform | p | grid | from | costs | algorithm | objective before | after | measure s | relabel s |")
w("|---|---:|---|---|---|---|---:|---:|---:|---:|")
for name, np_, dims, frm, cst, alg, before, after, meas, rel in relabel:
    w(f"| {name} | {np_} | {dims} | {frm} | {cst} | {alg} | {float(before):.4g} | {float(after):.4g} | {meas} | {rel} |")
w()
w("Real time per run (simulator wall time on a machine shared with other jobs, peak RSS);")
w("raw outputs per platform in \`matmul_smpi/NAME-pP-nN/\`:")
w()
w("\`\`\`")
md.write(open(timing).read())
w("\`\`\`")
w()
w("Settings per platform (repetitions, HSUMMA groupings: auto = every one, balanced = I and J")
w("within 2x, or the list given with --groups):")
w()
for name, np_, n, d in runs:
    try:
        w("- " + open(f"{d}/settings.txt").read().strip())
    except FileNotFoundError:
        w(f"- {name}: not recorded (runs before 2026-11-24: 2 repetitions, every grouping)")
EOF
mv "$work/matmul_smpi.csv" "$out/matmul_smpi.csv"
mv "$work/matmul_smpi.md" "$out/matmul_smpi.md"
echo "wrote $out/matmul_smpi.csv and $out/matmul_smpi.md ($elapsed s)"
