#!/bin/bash
# measure on the emulated multi-node cluster (real Open MPI: TCP between
# nodes, shared memory inside): sets the cluster up, runs measure in dense
# and hierarchical modes, checks that every intra-node pair is cheaper than
# every inter-node pair, writes bench/results/emulated_measure.txt and tears
# the cluster down (also on failure). Needs root; bounded in time.
#   bench/emulated/measure_emulated.sh [NODES] [RANKS_PER_NODE]
set -euo pipefail
cd "$(dirname "$0")/../.."
nodes=${1:-4}
per_node=${2:-2}
cluster=bench/emulated/cluster.sh
out=$(mktemp -d)
trap 'timeout 60 "$cluster" down >/dev/null; rm -rf "$out"' EXIT
bazel build --noshow_progress --ui_event_filters=-info //cmd:measure
measure=$PWD/bazel-bin/cmd/measure
timeout 60 "$cluster" down >/dev/null
timeout 60 "$cluster" up "$nodes"
"$cluster" hostfile "$per_node" >"$out/hosts"
subnet=$("$cluster" subnet)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() {
  timeout 300 mpirun --hostfile "$out/hosts" -np $((nodes * per_node)) \
    --mca plm_rsh_agent "$("$cluster" agent)" --mca oob_tcp_if_include "$subnet" \
    --mca btl_tcp_if_include "$subnet" --mca btl self,vader,tcp --bind-to none "$@"
}
report=bench/results/emulated_measure.txt
{
  echo "# bench/emulated/measure_emulated.sh $nodes $per_node ($(date -u +%F)): $nodes emulated"
  echo "# nodes x $per_node ranks, Open MPI over TCP (veth + bridge) and shared memory"
} >"$report.tmp"
for mode in dense hierarchical; do
  run "$measure" --out "$out/$mode" --mode "$mode" --metric latency --sizes 8,4096 --reps 20 \
    >"$out/log" 2>&1 || { cat "$out/log" >&2; exit 1; }
  python3 - "$out/$mode" "$mode" >>"$report.tmp" <<'PY'
import sys
d, mode = sys.argv[1], sys.argv[2]
hosts = {}
for line in open(d + "/placement.txt"):
    if not line.startswith("#"):
        r, h, c = line.split()
        hosts[int(r)] = h
p = len(hosts)
if mode == "dense":
    rows = [list(map(float, l.split())) for l in open(d + "/costs.txt") if not l.startswith("#")]
    cost = lambda a, b: rows[a][b]
else:
    text = [l.split() for l in open(d + "/costs.txt") if l.strip() and not l.startswith("#")]
    # structured: read core-costs and node-costs blocks and rank locations
    i = 0; cores = nodes = 0; core = []; node = []; loc = []
    while i < len(text):
        k = text[i][0]
        if k == "cores-per-node": cores = int(text[i][1])
        elif k == "nodes": nodes = int(text[i][1])
        elif k == "core-costs": core = [list(map(float, r)) for r in text[i + 1:i + 1 + cores]]; i += cores
        elif k == "node-costs": node = [list(map(float, r)) for r in text[i + 1:i + 1 + nodes]]; i += nodes
        elif k == "rank-locations":
            if text[i][1] == "list":
                loc = [tuple(map(int, r)) for r in text[i + 1:i + 1 + p]]; i += p
            else:
                loc = [(r // cores, r % cores) for r in range(p)]
        i += 1
    def cost(a, b):
        (na, ca), (nb, cb) = loc[a], loc[b]
        return core[ca][cb] if na == nb else node[na][nb]
intra = [cost(a, b) for a in range(p) for b in range(p) if a != b and hosts[a] == hosts[b]]
inter = [cost(a, b) for a in range(p) for b in range(p) if hosts[a] != hosts[b]]
ok = max(intra) < min(inter)
print(f"{mode}: intra-node {min(intra)*1e6:.2f}..{max(intra)*1e6:.2f} us, "
      f"inter-node {min(inter)*1e6:.2f}..{max(inter)*1e6:.2f} us: "
      + ("separated" if ok else "NOT separated"))
sys.exit(0 if ok else 1)
PY
done
mv "$report.tmp" "$report"
cat "$report"
