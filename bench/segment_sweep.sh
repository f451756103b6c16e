#!/bin/bash
# The time of one hierarchical bcast or reduce configuration at each of
# several segment sizes, on a simulated machine (SimGrid SMPI; simulated
# time, deterministic): how the pipelined binary tree's and the chain's
# segment rule (binary_segment_bytes, lib/coll/algorithms.h) was checked.
# Each point is coll_latency --modes rankshape with a one-entry tuning
# table (RANKSHAPE_COLL_TABLE) that fixes the configuration and its
# segment ("hierarchical levels=L segment=S"); under SMPI the levels run
# one after the other (docs/collectives.md), so the segment is the level
# algorithm's own. The script checks that every run took the table's
# configuration.
#   bench/segment_sweep.sh [--platform NAME] [--collective bcast|reduce]
#       [--bytes N] [--levels "L1 L2 ..."] [--segments S1,S2,...]
#       [--out DIR] [--jobs N] [--binary PATH]
# Defaults: lvl2-node32-core8 (32 nodes of 8 cores, 256 ranks in blocks,
# data/platforms), bcast, 1 MiB, levels "native,binary chain,binary",
# segments 32, 48, 64, 80, 96, 128 and 256 KiB. Writes
# DIR/segment_sweep.{csv,md} (default bench/results/segment_sweep) and
# each run's output under DIR/runs/. --binary: a coll_latency built with
# --config=smpi (tests/bench/segment_sweep_test.sh), instead of building it.
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/.."
platform=lvl2-node32-core8
collective=bcast
bytes=1048576
levels="native,binary chain,binary"
segments=32768,49152,65536,81920,98304,131072,262144
out=bench/results/segment_sweep
jobs=2
binary=
while [ $# -gt 0 ]; do
  case $1 in
    --platform) platform=$2; shift 2 ;;
    --collective) collective=$2; shift 2 ;;
    --bytes) bytes=$2; shift 2 ;;
    --levels) levels=$2; shift 2 ;;
    --segments) segments=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --binary) binary=$2; [[ $binary = /* ]] || binary=$caller/$binary; shift 2 ;;
    *) echo "segment_sweep.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
case $collective in
  bcast | reduce) ;;
  *) echo "segment_sweep.sh: --collective '$collective': expected bcast or reduce" >&2; exit 2 ;;
esac
for n in "$bytes" "$jobs" ${segments//,/ }; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "segment_sweep.sh: '$n' is not a positive number" >&2; exit 2; }
done
xml=data/platforms/$platform.xml hostfile=data/platforms/$platform.hostfile
[ -f "$xml" ] && [ -f "$hostfile" ] ||
  { echo "segment_sweep.sh: no $xml and $hostfile" >&2; exit 2; }
command -v smpirun >/dev/null || { echo "segment_sweep.sh: needs smpirun (tools/install-deps)" >&2; exit 1; }
# Ranks in blocks, every slot used: the levels are [cores per node, nodes],
# the key of the table's entry. The hostfile's lines are HOST:CORES.
read -r cores nodes ranks < <(awk -F: '
  { c = ($2 == "" ? 1 : $2); if (NR == 1) first = c; else if (c != first) uneven = 1; total += c }
  END { if (uneven) exit 1; print first, NR, total }' "$hostfile") ||
  { echo "segment_sweep.sh: $hostfile has nodes of different sizes" >&2; exit 2; }

if [ -z "$binary" ]; then
  bazel build --config=smpi --noshow_progress //bench:coll_latency
  binary=$(bazel info --config=smpi bazel-bin 2>/dev/null)/bench/coll_latency
fi
[ -x "$binary" ] || { echo "segment_sweep.sh: --binary '$binary' is not an executable" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$binary" "$work/coll_latency"
start=$(date +%s)

point() {  # LEVELS SEGMENT: one run, into $work/runs/LEVELS-SEGMENT.*
  local name=${1//,/-}-$2 config="hierarchical levels=$1 segment=$2"
  local dir=$work/runs
  cat >"$dir/$name.json" <<EOF
{"format": "rankshape-coll-table", "version": 1, "models": [],
 "entries": [{"collective": "$collective", "sizes": [$cores, $nodes], "bytes": $bytes,
              "config": "$config"}]}
EOF
  RANKSHAPE_COLL_TABLE=$dir/$name.json smpirun -np "$ranks" -platform "$xml" -hostfile "$hostfile" \
    --cfg=smpi/host-speed:1Gf --cfg=smpi/coll-selector:ompi --cfg=smpi/simulate-computation:no \
    --log=root.thresh:warning --log=smpi_config.thresh:warning "$work/coll_latency" \
    --out "$dir/$name.csv" --modes rankshape --label "$name" --collectives "$collective" \
    --sizes "$bytes" --reps 3 --min-reps 3 --warmup 1 >"$dir/$name.log" 2>&1 ||
    { tail -n 20 "$dir/$name.log" >&2; echo "segment_sweep.sh: $config failed" >&2; return 1; }
  # The table's configuration, not a trial's choice: else the key was wrong.
  python3 - "$dir/$name.csv" "$config" <<'PY' || return 1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
if len(rows) != 1 or rows[0]["choice"] != sys.argv[2]:
    sys.exit("segment_sweep.sh: %s ran %r, not the table's %r"
             % (sys.argv[1], [r["choice"] for r in rows], sys.argv[2]))
PY
}

mkdir -p "$work/runs"
failed=0
for l in $levels; do
  for s in ${segments//,/ }; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || failed=1; done
    point "$l" "$s" &
  done
done
while [ "$(jobs -rp | wc -l)" -gt 0 ]; do wait -n || failed=1; done
[ "$failed" -eq 0 ] || { echo "segment_sweep.sh: a run failed; nothing written" >&2; exit 1; }

mkdir -p "$out"
rm -rf "$out/runs"
cp -r "$work/runs" "$out/runs"
python3 - "$out" "$collective" "$bytes" "$platform" "$ranks" "$levels" "$segments" \
  "$(($(date +%s) - start))" <<'PY'
import csv, os, sys
out, collective, size, platform, ranks, levels, segments, seconds = sys.argv[1:]
levels, segments = levels.split(), [int(s) for s in segments.split(",")]
us = {}
for l in levels:
    for s in segments:
        row = next(csv.DictReader(open(os.path.join(out, "runs", "%s-%d.csv" % (l.replace(",", "-"), s)))))
        us[l, s] = float(row["seconds"]) * 1e6
with open(os.path.join(out, "segment_sweep.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["collective", "bytes", "levels", "segment_bytes", "us"])
    for (l, s), t in us.items():
        w.writerow([collective, size, l, s, "%.1f" % t])
kib = lambda b: "%g KiB" % (b / 1024)
with open(os.path.join(out, "segment_sweep.md"), "w") as f:
    f.write("# %s of %s on %s, %s ranks in blocks: time by segment size\n\n" % (collective, kib(int(size)), platform, ranks))
    f.write("`bench/segment_sweep.sh --platform %s --collective %s --bytes %s --levels \"%s\" "
            "--segments %s` (%s s of real time). SimGrid SMPI, default factors, no computation "
            "simulated; each cell the median of 3 repetitions (after 1 warm-up) of the slowest "
            "rank, in us, with the configuration fixed by a one-entry tuning table.\n\n"
            % (platform, collective, size, " ".join(levels), ",".join(map(str, segments)), seconds))
    f.write("| levels | " + " | ".join(kib(s) for s in segments) + " |\n")
    f.write("|---|" + "---:|" * len(segments) + "\n")
    for l in levels:
        best = min(us[l, s] for s in segments)
        cells = [("**%.1f**" if us[l, s] == best else "%.1f") % us[l, s] for s in segments]
        f.write("| `%s` | %s |\n" % (l, " | ".join(cells)))
print("wrote %s/segment_sweep.{csv,md}" % out)
PY
