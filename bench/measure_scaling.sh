#!/bin/bash
# What measuring costs as the job grows, in simulated seconds (SimGrid SMPI,
# deterministic: no computation is simulated, only messages) on
# data/platforms/flat-1024.xml, 1,024 hosts on 10 Gb/s links with 1 us
# latency: dense ping-pong of every rank pair, and hierarchical measurement
# with one rank per node (node-to-node pairs only; inside a node there is
# one rank). Also the real time the simulation took and its peak memory.
#   bench/measure_scaling.sh [--dense "16 32 64 128 256"] [--nodes "64 ... 1024"] [--out DIR]
#       [--measure BINARY]
# Writes DIR/measure_scaling.{csv,md} (default bench/results). --measure
# times another SMPI build of measure (e.g. an older one) instead of this
# tree's, to compare the two.
set -euo pipefail
cd "$(dirname "$0")/.."
dense="16 32 64 128 256"
nodes="64 128 256 512 1024"
out=bench/results
measure=""
while [ $# -gt 0 ]; do
  case $1 in
    --measure) measure=$2; shift 2 ;;
    --dense) dense=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "measure_scaling.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
for tool in smpirun /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "measure_scaling.sh: needs $tool (tools/install-deps)" >&2; exit 1; }
done
if [ -z "$measure" ]; then
  bazel build --config=smpi //cmd:measure
  measure=$(bazel info --config=smpi bazel-bin 2>/dev/null)/cmd/measure
fi
[ -x "$measure" ] || { echo "measure_scaling.sh: no measure binary at $measure" >&2; exit 2; }
platform=data/platforms/flat-1024.xml
sizes=8,1024 reps=3 warmup=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
csv=$work/measure_scaling.csv
echo "mode,ranks,nodes,simulated_seconds,real_seconds,peak_rss_mib" >"$csv"

run() {  # MODE RANKS
  local mode=$1 np=$2
  /usr/bin/time -f "%e %M" -o "$work/time" \
    smpirun -np "$np" -platform "$platform" --cfg=smpi/host-speed:1Gf \
    --cfg=smpi/coll-selector:ompi --cfg=smpi/simulate-computation:no \
    --log=root.thresh:warning --log=smpi_config.thresh:warning \
    "$measure" --out "$work/$mode-$np" --mode "$mode" --metric latency \
    --sizes "$sizes" --reps "$reps" --warmup "$warmup" >"$work/log" 2>&1 ||
    { cat "$work/log" >&2; exit 1; }
  local simulated real rss
  simulated=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["seconds"])' \
    "$work/$mode-$np/summary.json")
  read -r real rss <"$work/time"
  echo "$mode,$np,$np,$simulated,$real,$((rss / 1024))" | tee -a "$csv"
}

for p in $dense; do run dense "$p"; done
for n in $nodes; do run hierarchical "$n"; done

{
  echo "# Measurement cost against job size (SMPI, simulated)"
  echo
  echo "\`bench/measure_scaling.sh\`: \`measure --metric latency --sizes $sizes --reps $reps"
  echo "--warmup $warmup\` on \`$platform\` (1 us, 10 Gb/s), one rank per host, no"
  echo "computation simulated. Dense: every rank pair. Hierarchical: node-to-node"
  echo "pairs by one rank per node. Real time and memory are those of the simulator"
  echo "on this 2-core machine, $(date -u +%Y-%m-%d)."
  echo
  echo "| mode | ranks | nodes | simulated s | simulator real s | simulator peak MiB |"
  echo "|---|---:|---:|---:|---:|---:|"
  tail -n +2 "$csv" | awk -F, '{printf "| %s | %d | %d | %.4f | %.1f | %d |\n", $1, $2, $3, $4, $5, $6}'
} >"$work/measure_scaling.md"
mv "$csv" "$out/measure_scaling.csv"
mv "$work/measure_scaling.md" "$out/measure_scaling.md"
echo "wrote $out/measure_scaling.csv and $out/measure_scaling.md"
