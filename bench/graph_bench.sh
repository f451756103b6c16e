#!/bin/bash
# Traffic graphs: rankshape's mapping (relabel --traffic, auto) against the
# peers, side by side in one run: Scotch's static mapping (Debian's
# libscotch, through relabel --algorithm scotch), a METIS-based mapping
# (METIS k-way along the machine's levels, parts in machine order: relabel
# --algorithm metis), VieM and TreeMatch.
#   bench/graph_bench.sh [--viem PATH] [--treematch PATH] [--out DIR]
#                        [--parts quality,time,speed] [--instances NAME,...]
#                        [--configs NAME,...] [--reps R]
# Instances: synthetic graphs (2-D and 3-D meshes, random geometric,
#   power-law) at 1,024 and 4,096 ranks, and the traffic of five profiled
#   mini-apps (data/traffic: NPB CG and FT, HPCG, LULESH, miniFE) at 64
#   and 216-256 ranks.
# quality: on synthetic machines (2 levels, 3 levels block and scattered,
#   a 2-D torus of nodes scattered), every ordering's objective (`cost`),
#   communication cost, edges across nodes and busiest node, and each
#   mapper's wall time; no MPI.
# time: the traffic replayed (bench/traffic_replay.cc) under SimGrid SMPI
#   on 2- and 3-level platforms (data/platforms), block and scattered, at
#   64 ranks (the mini-apps) and 1,024 (synthetic); costs measured in the
#   simulation, orderings computed offline, all timed in one simulation.
# speed (not run by default): rankshape's mapping time against VieM's
#   three presets (fast, eco, strong) at 1,024 ranks, each mapper --reps
#   times in turn, with every mapping's objective; rankshape with its
#   budget, with short ones (0.1, 0.03 and 0.01 s) and with none
#   (--time-limit 0); needs --viem.
# --viem PATH: VieM's `viem` binary, built outside this repository from
#   its public source (bench/peers/README.md says where to get it);
#   called as
#   viem GRAPH --hierarchy_parameter_string=C:N:R
#   --distance_parameter_string=1:10:40 --output_filename=OUT.
# --treematch PATH: a driver around TreeMatch (the copy in github
#   open-mpi/ompi, 3rd-party/treematch), built outside this repository
#   (bench/peers/README.md says what it does); called as treematch_map TRAFFIC --arity R,N,C --cost 40,10,1
#   --bytes-per-message 4096 --optimize -o OUT (line i: the core of process
#   i). Without either, that peer's column says so.
# Writes DIR/graph_quality.{csv,md}, DIR/graph_time.{csv,md} and
# DIR/graph_speed.{csv,md} (default
# bench/results) and every run's files under DIR/graph/.
set -euo pipefail
cd "$(dirname "$0")/.."
args=("$@")
for tool in python3 smpirun; do
  command -v "$tool" >/dev/null || { echo "graph_bench.sh: needs $tool (tools/install-deps)" >&2; exit 1; }
done
bazel build --noshow_progress --ui_event_filters=-info -c opt //cmd:relabel //cmd:evaluate //cmd:synth
host=$(bazel info -c opt bazel-bin 2>/dev/null)
bazel build --noshow_progress --ui_event_filters=-info --config=smpi -c opt //bench:traffic_replay //cmd:measure
smpi=$(bazel info --config=smpi -c opt bazel-bin 2>/dev/null)
# Copies: a later build in this tree must not change them during the runs.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/host" "$work/smpi"
cp "$host/cmd/relabel" "$host/cmd/evaluate" "$host/cmd/synth" "$work/host/"
cp "$smpi/bench/traffic_replay" "$smpi/cmd/measure" "$work/smpi/"
python3 bench/graph_bench.py --bin "$work/host" --smpi-bin "$work/smpi" "${args[@]}"
