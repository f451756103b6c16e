#!/bin/bash
# measure on the emulated multi-node cluster (real Open MPI: TCP between
# nodes, shared memory inside, every "node" on this machine's few cores),
# ranks placed round-robin over the nodes, as a new user would. For every
# configuration NODESxRANKS and every run:
#   - measure in dense mode (the default: 64 KiB message time) and in
#     hierarchical mode; each must price every intra-node pair below every
#     inter-node pair;
#   - relabel a NODES x RANKS grid from the dense costs; each RANKS-rank
#     fibre (dimension 1) must land on one node, or the labelling must be
#     no worse by relabel's objective than one where they do (measured
#     costs are uneven: a 4x4 grid's dimension 0 on the nodes can tie).
# Writes bench/results/emulated_measure.txt (or --report FILE) and exits 1
# when any run misses. Sets the cluster up and always tears it down. Needs
# root and network namespaces; every step is bounded in time.
#   bench/emulated/measure_emulated.sh [--runs N] [--configs "2x4 4x4"]
#       [--measure BINARY] [--report FILE] [-- MEASURE ARGS...]
# --measure compares another build (e.g. an older one) side by side; the
# arguments after -- go to every measure run (e.g. --pacing all).
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=10 configs="2x4 4x4" measure="" report=bench/results/emulated_measure.txt
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    --measure) measure=$2; shift 2 ;;
    --report) report=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "measure_emulated.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "measure_emulated.sh: --runs must be a positive integer" >&2; exit 2; }
for c in $configs; do
  [[ "$c" =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || { echo "measure_emulated.sh: bad configuration '$c' (NODESxRANKS)" >&2; exit 2; }
done
cluster=bench/emulated/cluster.sh
out=$(mktemp -d)
trap 'timeout 60 "$cluster" down >/dev/null; rm -rf "$out"' EXIT
bazel build --noshow_progress --ui_event_filters=-info //cmd:measure //cmd:relabel
[ -n "$measure" ] || measure=$PWD/bazel-bin/cmd/measure
[ -x "$measure" ] || { echo "measure_emulated.sh: no measure binary at $measure" >&2; exit 2; }
relabel=$PWD/bazel-bin/cmd/relabel
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
{
  echo "# bench/emulated/measure_emulated.sh --runs $runs --configs \"$configs\"${*:+ -- $*} ($(date -u +%F))"
  echo "# emulated nodes on $(nproc) cores, Open MPI over TCP (veth + bridge) and shared memory,"
  echo "# ranks round-robin over the nodes; measure: $("$measure" --version 2>/dev/null | head -1 || echo "$measure")"
} >"$out/report"
failed=0
for config in $configs; do
  nodes=${config%x*} per_node=${config#*x}
  timeout 60 "$cluster" down >/dev/null
  timeout 60 "$cluster" up "$nodes" >/dev/null
  "$cluster" hostfile "$per_node" >"$out/hosts"
  subnet=$("$cluster" subnet)
  good=0 times=()
  for ((run = 1; run <= runs; run++)); do
    line="$config run $run:"
    ok=1
    for mode in dense hierarchical; do
      dir=$out/$config-$run-$mode
      if ! timeout 300 mpirun --hostfile "$out/hosts" -np $((nodes * per_node)) --map-by node \
        --mca plm_rsh_agent "$("$cluster" agent)" --mca oob_tcp_if_include "$subnet" \
        --mca btl_tcp_if_include "$subnet" --mca btl self,vader,tcp --bind-to none \
        "$measure" --out "$dir" --mode "$mode" "$@" >"$out/log" 2>&1; then
        cat "$out/log" >&2
        exit 1
      fi
      verdict=$(python3 bench/emulated/separation.py "$dir") || ok=0
      # What dense mode's consistency passes did (lib/measure/rescale.h):
      # a host slow as a whole for a while shows as pairs rescaled.
      if [ "$mode" = dense ]; then
        verdict="$verdict ($(python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["measurement"]
print(m["remeasured_pairs"], "measured again,", m["rescaled_pairs"], "rescaled")' "$dir/summary.json"))"
      fi
      line="$line $mode $verdict;"
    done
    dense=$out/$config-$run-dense
    times+=("$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["seconds"])' "$dense/summary.json")")
    "$relabel" --costs "$dense/costs.txt" --placement "$dense/placement.txt" --grid "$config" \
      --perm "$dense/grid.perm" >/dev/null
    fibres=$(python3 bench/emulated/separation.py "$dense" --fibres "$dense/grid.perm" "$per_node") || ok=0
    line="$line relabel $config: $fibres"
    echo "$line" >>"$out/report"
    good=$((good + ok))
  done
  median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
  echo "$config: $good of $runs runs right (separated in both modes, every fibre on one node or as good); dense measure median $median s" >>"$out/report"
  [ "$good" -eq "$runs" ] || failed=1
done
mkdir -p "$(dirname "$report")"
mv "$out/report" "$report"
cat "$report"
exit $failed
