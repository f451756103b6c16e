#!/bin/bash
# The fabric between nodes is measured where it is narrower than their
# links: on SMPI's lvl2-node16-core4 (16 nodes of 4 cores, 10 Gb/s per node
# into one 40 Gb/s backbone) a message through the backbone costs a quarter
# of one alone, and measure writes node-fabric 0.25 (within 10%), which
# evaluate then counts; on ci-cluster (4 nodes into a backbone as wide as
# their links together) it writes none.
#   smpi_fabric_test.sh LAUNCHER MEASURE EVALUATE LVL2_XML LVL2_HOSTFILE CI_XML
set -euo pipefail
launcher=$1 measure=$2 evaluate=$3 lvl2=$4 lvl2_hosts=$5 ci=$6
if [ "$launcher" != smpi ]; then
  echo "SKIP: a fabric to find needs a simulated cluster (--config=smpi)"
  exit 0
fi
smpi=(--cfg=smpi/host-speed:1Gf --cfg=smpi/coll-selector:mpich
      --cfg=smpi/simulate-computation:no --log=root.thresh:warning)
timeout 300 smpirun -np 64 -platform "$lvl2" -hostfile "$lvl2_hosts" "${smpi[@]}" \
  "$measure" --out "$TEST_TMPDIR/lvl2" --mode hierarchical --reps 2 --warmup 1
ratio=$(awk '$1 == "node-fabric" { print $2 }' "$TEST_TMPDIR/lvl2/costs.txt")
if ! awk -v r="${ratio:-0}" 'BEGIN { exit !(r > 0.225 && r < 0.275) }'; then
  echo "FAIL: lvl2-node16-core4: node-fabric '${ratio}', expected 0.25 (10 of 40 Gb/s)" >&2
  exit 1
fi
grep -q '"ratio"' "$TEST_TMPDIR/lvl2/summary.json"
# evaluate counts it: the stencil's node level reports the fabric.
"$evaluate" --costs "$TEST_TMPDIR/lvl2/costs.txt" --grid 8x8 --pattern stencil \
  | tee "$TEST_TMPDIR/eval.txt"
grep -q "fabric cost" "$TEST_TMPDIR/eval.txt" || { echo "FAIL: evaluate shows no fabric" >&2; exit 1; }
timeout 300 smpirun -np 16 -platform "$ci" "${smpi[@]}" \
  "$measure" --out "$TEST_TMPDIR/ci" --mode hierarchical --reps 2 --warmup 1
if grep -q fabric "$TEST_TMPDIR/ci/costs.txt"; then
  echo "FAIL: ci-cluster: a fabric was written where the backbone is as wide as the links" >&2
  grep fabric "$TEST_TMPDIR/ci/costs.txt" >&2
  exit 1
fi
echo "ok: lvl2-node16-core4 node-fabric $ratio (expected 0.25); ci-cluster none"
