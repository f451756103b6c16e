#!/bin/bash
# Relabelling on irregular machines (issue 26's suite): rankshape's auto
# against the job's order, the machine's natural node-by-node order, METIS,
# Scotch (Debian's, through relabel) and VieM, side by side in one run, on
# 25 machines of 63 to 4,096 ranks that planted machines are not: nodes of
# uneven size, islands (racks) of uneven size, tori of nodes with no
# hierarchy, slow nodes, noise, prime and odd grids, round-robin and
# scattered placements (bench/irregular_bench.py lists them). Every
# labelling is scored by evaluate; auto's lower bound and its gap to it are
# reported (fibres and stencils).
#   bench/irregular_bench.sh [--viem PATH] [--viem-preset fast|eco|strong]
#                            [--budget S] [--instances NAME,...] [--out DIR]
#                            [--parts table,curve] [--curve-budgets S,...]
# --viem PATH: VieM's `viem` binary, built outside this repository from its
#   public source (bench/peers/README.md says where to get it). VieM
#   takes a regular
#   hierarchy: it gets cores per node, nodes per island and islands, each
#   as large as the largest, with isolated vertices filling the padding;
#   positions it puts on padding move to the nearest free core. It has no
#   hierarchy for a torus ("n/a"). Without --viem its column is left out.
# --budget S: auto's time limit (default 10 s); METIS and Scotch get 300 s.
# --parts: table (default), curve, or both. curve: auto's objective, its
#   gap to its lower bound and its wall time at each of --curve-budgets
#   (default 0,0.1,0.3,1,3,10,30 s) on the four largest fibre instances
#   (or those of --instances); writes DIR/irregular_curve.{csv,md,png}
#   (the plot needs python3-matplotlib).
# Writes DIR/irregular.{csv,md} (default bench/results) and every run's
# files under DIR/irregular/.
set -euo pipefail
cd "$(dirname "$0")/.."
args=("$@")
command -v python3 >/dev/null || { echo "irregular_bench.sh: needs python3 (tools/install-deps)" >&2; exit 1; }
bazel build --noshow_progress --ui_event_filters=-info -c opt //cmd:relabel //cmd:evaluate //cmd:synth
host=$(bazel info -c opt bazel-bin 2>/dev/null)
# Copies: a later build in this tree must not change them during the runs.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$host/cmd/relabel" "$host/cmd/evaluate" "$host/cmd/synth" "$work/"
python3 bench/irregular_bench.py --bin "$work" "${args[@]}"
