#!/bin/bash
# Collective latency on simulated 2- and 3-level machines (SimGrid SMPI,
# deterministic: no computation simulated, only messages): for each
# platform, coll_tune writes a tuning table and its report (every measured
# candidate with the model's prediction), then coll_latency measures the
# native collectives (SMPI's Open MPI selector: Open MPI's default tuned
# decisions, flat) and rankshape's dispatched choice with that table.
# On 3-level platforms rankshape also gets racks (--rack-nodes: nodes,
# racks, top): coll_tune adds its three-level entries to the same table
# (report-racks.csv) and coll_latency measures that column as
# rankshape-racks.
#   bench/coll_smpi.sh [--platforms "NAME:RANKS ..."] [--out DIR] [--reuse]
# Writes DIR/coll_smpi.{csv,md} (default bench/results) and each platform's
# raw outputs (table, report, latency CSVs, logs, real time) under
# DIR/coll_smpi/NAME/; --reuse takes a platform's saved outputs instead of
# simulating it again (the simulation is deterministic; only a changed
# library or platform needs a new run). Platforms are
# data/platforms/NAME.{xml,hostfile}. To bound the real time (the 256-rank
# coll_tune over all sizes took more than 40 CPU minutes unfinished) and
# the memory (every simulated rank's buffers are real memory), 256-rank
# platforms run a subset of sizes (4 B, 1 KiB, 64 KiB, 1 MiB) and
# 1,024-rank platforms a subset of sizes and collectives (bcast, allreduce,
# allgather).
set -euo pipefail
cd "$(dirname "$0")/.."
platforms="lvl2-node16-core4:64 lvl3-rack4-node4-core4:64 lvl2-node32-core8:256
lvl3-rack4-node8-core8:256 lvl2-node64-core16:1024 lvl3-rack8-node8-core16:1024"
out=bench/results
reuse=0
while [ $# -gt 0 ]; do
  case $1 in
    --platforms) platforms=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --reuse) reuse=1; shift ;;
    *) echo "coll_smpi.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
for tool in smpirun python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "coll_smpi.sh: needs $tool (tools/install-deps)" >&2; exit 1; }
done
bazel build --config=smpi --noshow_progress //cmd:coll_tune //bench:coll_latency
bin=$(bazel info --config=smpi bazel-bin 2>/dev/null)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Copies: a later build in this tree must not change them during the runs.
cp "$bin/cmd/coll_tune" "$bin/bench/coll_latency" "$work/"
tune=$work/coll_tune
latency=$work/coll_latency
mkdir -p "$out"
# All ranks' buffers together stay under about 4 GiB of real memory.
total_mib=4096
start=$(date +%s)
timing=$work/timing.txt
: >"$timing"

smpi() {  # NAME RANKS LOG ARGS...
  local name=$1 np=$2 log=$3
  shift 3
  /usr/bin/time -f "%e %M" -o "$work/time" \
    smpirun -np "$np" -platform "data/platforms/$name.xml" \
    -hostfile "data/platforms/$name.hostfile" --cfg=smpi/host-speed:1Gf \
    --cfg=smpi/coll-selector:ompi --cfg=smpi/simulate-computation:no \
    --log=root.thresh:warning --log=smpi_config.thresh:warning "$@" >"$log" 2>&1 ||
    { tail -n 30 "$log" >&2; echo "coll_smpi.sh: failed on $name: $*" >&2; exit 1; }
  if grep -q "Deadlock detected" "$log"; then
    tail -n 30 "$log" >&2
    echo "coll_smpi.sh: deadlock on $name: $*" >&2
    exit 1
  fi
  local real rss
  read -r real rss <"$work/time"
  echo "$name $(basename "$1") $(basename "$log" .log) ${real}s $((rss / 1024))MiB" |
    tee -a "$dir/timing.txt"
}

runs=()
for spec in $platforms; do
  name=${spec%%:*} np=${spec##*:}
  saved=$out/coll_smpi/$name
  if [ "$reuse" -eq 1 ] && [ -f "$saved/latency.csv" ] &&
    { [ "${name#lvl3-}" = "$name" ] || [ -f "$saved/latency-racks.csv" ]; }; then
    echo "coll_smpi.sh: $name: reusing $saved"
    cat "$saved/timing.txt" >>"$timing"
    runs+=("$name ($np ranks)=$saved")
    continue
  fi
  dir=$work/$name
  mkdir -p "$dir"
  subset=()
  if [ "$np" -ge 1024 ]; then
    subset=(--collectives bcast,allreduce,allgather --sizes 4,1024,65536,1048576)
  elif [ "$np" -ge 256 ]; then
    subset=(--sizes 4,1024,65536,1048576)
  fi
  limit=$((total_mib / np))
  smpi "$name" "$np" "$dir/tune.log" "$tune" --out "$dir/table.json" --report "$dir/report.csv" \
    --reps 3 --warmup 1 --max-buffer-mib "$limit" "${subset[@]}"
  rack_nodes=0
  case $name in
    lvl3-*)
      # Nodes per rack from the name: lvl3-rackR-nodeN-coreC.
      rack_nodes=${name#*-node}
      rack_nodes=${rack_nodes%%-*}
      smpi "$name" "$np" "$dir/tune-racks.log" "$tune" --rack-nodes "$rack_nodes" \
        --out "$dir/table.json" --merge --report "$dir/report-racks.csv" \
        --reps 3 --warmup 1 --max-buffer-mib "$limit" "${subset[@]}"
      ;;
  esac
  # Up to 64 ranks the latency run also measures the sizes between the tuned
  # ones (x2 steps), where the table's nearest entry decides: a check of the
  # fallback off the tuning grid.
  between=()
  if [ "$np" -le 64 ] && [ ${#subset[@]} -eq 0 ]; then
    between=(--sizes "$(python3 -c 'print(",".join(str(4 << i) for i in range(23)))')")
  fi
  RANKSHAPE_COLL_TABLE=$dir/table.json smpi "$name" "$np" "$dir/latency.log" "$latency" \
    --out "$dir/latency.csv" --modes native,rankshape --label native --reps 3 --min-reps 3 \
    --warmup 1 --max-buffer-mib "$limit" "${subset[@]}" "${between[@]}"
  if [ "$rack_nodes" -gt 0 ]; then
    RANKSHAPE_COLL_TABLE=$dir/table.json smpi "$name" "$np" "$dir/racks.log" "$latency" \
      --out "$dir/latency-racks.csv" \
      --modes rankshape --label rankshape-racks --rack-nodes "$rack_nodes" --reps 3 \
      --min-reps 3 --warmup 1 --max-buffer-mib "$limit" "${subset[@]}" "${between[@]}"
  fi
  cat "$dir/timing.txt" >>"$timing"
  rm -rf "$saved"
  mkdir -p "$out/coll_smpi"
  cp -r "$dir" "$saved"
  runs+=("$name ($np ranks)=$saved")
done
elapsed=$(($(date +%s) - start))

{
  echo "# Collective latency on simulated 2- and 3-level machines (SMPI)"
  echo
  echo "\`bench/coll_smpi.sh\` ($(date -u +%Y-%m-%d); the simulations took $(awk '{t += $4} END {printf "%.0f", t / 60}' "$timing")"
  echo "min of real time in all on this shared 2-core machine). SimGrid SMPI $(smpirun -version 2>/dev/null | head -n 1 | grep -o '[0-9][0-9.]*' | head -n 1),"
  echo "default network model, no computation simulated (\`--cfg=smpi/simulate-computation:no\`):"
  echo "the times are simulated and deterministic (the same on every run and"
  echo "machine); reductions cost no time."
  echo
  echo "- **native**: \`--cfg=smpi/coll-selector:ompi\`, SMPI's copy of Open MPI's"
  echo "  default (tuned, flat) decision rules; no HAN in SMPI."
  echo "- **rankshape**: \`dispatch.h\` with \`RANKSHAPE_COLL_TABLE\` from \`coll_tune\`"
  echo "  (\`--groups nodes\`, \`--reps 3 --warmup 1\`) run just before on the same platform."
  echo "- **rankshape-racks** (3-level platforms): rankshape given racks as well"
  echo "  (\`--rack-nodes N\`: nodes, racks, top), with the three-level entries that"
  echo "  \`coll_tune --rack-nodes N --merge\` added to the same table."
  echo "- Sizes: bytes per message (bcast, reduce, allreduce) or per block (the"
  echo "  others), 4 B to 16 MiB in x4 steps, skipping sizes whose buffers exceed"
  echo "  $total_mib MiB / ranks per rank (every simulated rank's buffers are real memory)."
  echo "  **256 ranks: only 4 B, 1 KiB, 64 KiB and 1 MiB; 1,024 ranks: only bcast,"
  echo "  allreduce and allgather at those sizes** (gather, scatter, allgather,"
  echo "  reduce_scatter_block and alltoall stop earlier: their buffers grow with"
  echo "  the rank count), to bound real time and memory. Up to 64 ranks, coll_latency also"
  echo "  measures the sizes between the tuned ones (x2 steps, *in italics*): there"
  echo "  the table's nearest entry decides, a check of the fallback off the grid;"
  echo "  they have no prediction (coll_tune did not measure them)."
  echo "- Times: median over 3 repetitions (after 1 warmup) of the slowest rank."
  echo "- Platforms (\`data/platforms/\`, comments inside): lvl2 = nodes of cores"
  echo "  (loopback 0.2 us, 100 Gb/s) on a cluster network (2 us, 10 Gb/s per node,"
  echo "  shared backbone 4:1 oversubscribed); lvl3 = racks of such clusters, one"
  echo "  5 us, 10 Gb/s uplink per rack to the spine. Ranks in blocks (node by node)."
  echo
  echo "Real time per step (simulator wall time on a machine shared with other"
  echo "jobs, peak RSS); raw outputs per platform in \`coll_smpi/NAME/\`:"
  echo
  echo '```'
  cat "$timing"
  echo '```'
} >"$work/header.md"
python3 bench/coll_report.py smpi "$work/coll_smpi.csv" "$work/coll_smpi.md" "$work/header.md" \
  "${runs[@]}"
mv "$work/coll_smpi.csv" "$out/coll_smpi.csv"
mv "$work/coll_smpi.md" "$out/coll_smpi.md"
echo "wrote $out/coll_smpi.csv and $out/coll_smpi.md ($elapsed s)"
