#!/bin/bash
# Measurement recovers a planted machine: on a simulated cluster (2-level
# node8-core4 or 3-level rack2-node4-core4 in data/platforms/), with ranks
# scrambled over its hosts by its hostfile,
# relabelling from the measured latencies reaches the same objective (under
# the platform's true costs) as relabelling from the true costs. Also checks
# that measure's output feeds relabel unchanged (costs + placement).
#   smpi_validation_test.sh LAUNCHER MEASURE RELABEL EVALUATE PLATFORM HOSTFILE TRUE_COSTS
set -euo pipefail
launcher=$1 measure=$2 relabel=$3 evaluate=$4 platform=$5 hostfile=$6 truth=$7
if [ "$launcher" != smpi ]; then
  # A structure to recover needs a simulated cluster; the Open MPI and
  # MPICH builds cover measure on the local machine in cli and MPI tests.
  echo "SKIP: the planted-cluster validation runs under --config=smpi"
  exit 0
fi
out=$TEST_TMPDIR/measured
timeout 300 smpirun -np 32 -platform "$platform" -hostfile "$hostfile" \
  --cfg=smpi/host-speed:1Gf --cfg=smpi/coll-selector:mpich --cfg=smpi/simulate-computation:no \
  --log=root.thresh:warning \
  "$measure" --out "$out" --metric latency --sizes 8,1024 --reps 3 --warmup 1
test -s "$out/costs.txt" && test -s "$out/placement.txt" && test -s "$out/summary.json"
# Hosts in the placement are the simulated hosts of the hostfile, in order.
if ! diff <(grep -v '^#' "$out/placement.txt" | awk '{print $2}') "$hostfile" >/dev/null; then
  echo "FAIL: placement hosts differ from the hostfile" >&2
  exit 1
fi
"$relabel" --costs "$out/costs.txt" --placement "$out/placement.txt" --grid 4x8 \
  --perm "$TEST_TMPDIR/measured.perm" --rankfile "$TEST_TMPDIR/app.rankfile" --quiet
"$relabel" --costs "$truth" --grid 4x8 --perm "$TEST_TMPDIR/true.perm" --quiet
# The objectives of evaluate's labellings (the identity first), in order.
objectives() {
  python3 -c 'import json, sys
print(" ".join(str(l["objective"]) for l in json.load(open(sys.argv[1]))["labellings"]))' "$1"
}
"$evaluate" --costs "$truth" --grid 4x8 --perm "$TEST_TMPDIR/measured.perm" \
  --perm "$TEST_TMPDIR/true.perm" --json "$TEST_TMPDIR/eval.json" | tee "$TEST_TMPDIR/eval.txt"
read -r identity from_measured from_truth <<<"$(objectives "$TEST_TMPDIR/eval.json")"
if [ -z "$from_truth" ] || [ "$from_measured" != "$from_truth" ]; then
  echo "FAIL: from measured costs $from_measured, from true costs $from_truth" >&2
  exit 1
fi
# Hierarchical mode on the same scrambled placement (it once stopped here
# on a stray broadcast of SimGrid's: see measure_hierarchical()), to the
# same objective.
timeout 300 smpirun -np 32 -platform "$platform" -hostfile "$hostfile" \
  --cfg=smpi/host-speed:1Gf --cfg=smpi/coll-selector:mpich --cfg=smpi/simulate-computation:no \
  --log=root.thresh:warning \
  "$measure" --out "$TEST_TMPDIR/hierarchical" --mode hierarchical --metric latency \
  --sizes 8,1024 --reps 3 --warmup 1
"$relabel" --costs "$TEST_TMPDIR/hierarchical/costs.txt" --grid 4x8 \
  --perm "$TEST_TMPDIR/hierarchical.perm" --quiet
"$evaluate" --costs "$truth" --grid 4x8 --perm "$TEST_TMPDIR/hierarchical.perm" \
  --json "$TEST_TMPDIR/hierarchical.json" >/dev/null
read -r _ from_hierarchical <<<"$(objectives "$TEST_TMPDIR/hierarchical.json")"
if [ "$from_hierarchical" != "$from_truth" ]; then
  echo "FAIL: from hierarchical costs $from_hierarchical, from true costs $from_truth" >&2
  exit 1
fi
echo "ok: relabelling from measured latencies (dense and hierarchical) reaches $from_measured, as from the true costs (identity: $identity)"
