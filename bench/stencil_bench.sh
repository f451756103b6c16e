#!/bin/bash
# Halo exchange: rankshape's stencil labellings against the job's order,
# nodecart-style node boxes, rankshape's fibre labellings and the peers
# (mpicartreorderlib's STENCIL_STRIPS, HYPERPLANE and KD_TREE; Gropp's
# nodecart; Scotch, Debian's, mapping the stencil graph), side by side in
# one run.
#   bench/stencil_bench.sh [--peers DIR] [--out DIR] [--parts quality,time,racks]
#                          [--cases NAME,...] [--configs NAME,...] [--reps R]
#                          [--stencils 2d-5point,3d-7point] [--reuse-measured]
#   bench/stencil_bench.sh --parts table --out DIR --from DIR1,DIR2,...
#     rebuilds DIR/stencil_time.{csv,md} from the outputs of earlier time
#     runs (each with its own --out and --configs), simulating nothing.
#     A configuration too long for one process can run its two stencils at
#     once, as two runs with their own --out and one --stencils each; the
#     second can take the first's measured costs (copy DIR/stencil/time/
#     CONFIG/measured into its --out, then --reuse-measured).
# quality: 16 grid/machine cases up to 65,536 ranks (synthetic machines,
#   bench/stencil_bench.py lists them): the stencil objective, the
#   neighbour pairs that cross nodes and racks, and those of the busiest
#   node, for every ordering; no MPI.
# time: a halo-exchange mini-app (bench/halo_bench.cc) under SimGrid SMPI,
#   2-D 5-point and 3-D 7-point periodic stencils, faces of 64 KiB and
#   1 MiB, at 1,000 to 4,096 simulated ranks on 2- and 3-level platforms
#   (data/platforms lvl2-*, lvl3-*), block and scattered placements. Costs
#   are measured in the simulation (measure --mode hierarchical), then
#   every ordering is computed offline and timed in one simulation per
#   platform, placement and stencil; Spearman's rank correlation between the
#   stencil objective and the simulated step time is computed across the
#   orderings. Simulated times are deterministic.
# racks: the rack trade-off of the quality case 3d-10x10x10-40 in simulated
#   time: on lvl3-rack5-node5-core40 (5 racks of 5 nodes of 40, block), its
#   stencil not periodic, every ordering of the time part and the node-box
#   peers' labellings with their boxes regrouped into racks, in one
#   simulation (a few minutes; writes DIR/stencil_racks.{csv,md}).
# --peers DIR: a folder with the peers' drivers, mpicartreorder_driver and
#   nodecart_driver, which compute offline the labelling each peer's
#   MPI_Cart_create would return for a grid and a node membership (a file
#   of one node index per rank). They are built outside this repository
#   from the peers' public sources (bench/peers/README.md says where to
#   get them and what the drivers do); this repository holds neither the
#   peers' code nor a recipe to build it. Without --peers, the peers' rows
#   are left out.
# Writes DIR/stencil_quality.{csv,md} and DIR/stencil_time.{csv,md}
# (default bench/results) and every run's labellings and outputs under
# DIR/stencil/.
set -euo pipefail
cd "$(dirname "$0")/.."
args=("$@")
for tool in python3 smpirun; do
  command -v "$tool" >/dev/null || { echo "stencil_bench.sh: needs $tool (tools/install-deps)" >&2; exit 1; }
done
bazel build --noshow_progress --ui_event_filters=-info -c opt //cmd:relabel //cmd:evaluate //cmd:synth
host=$(bazel info -c opt bazel-bin 2>/dev/null)
bazel build --noshow_progress --ui_event_filters=-info --config=smpi -c opt //bench:halo_bench //cmd:measure
smpi=$(bazel info --config=smpi -c opt bazel-bin 2>/dev/null)
# Copies: a later build in this tree must not change them during the runs.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/host" "$work/smpi"
cp "$host/cmd/relabel" "$host/cmd/evaluate" "$host/cmd/synth" "$work/host/"
cp "$smpi/bench/halo_bench" "$smpi/cmd/measure" "$work/smpi/"
python3 bench/stencil_bench.py --bin "$work/host" --smpi-bin "$work/smpi" "${args[@]}"
