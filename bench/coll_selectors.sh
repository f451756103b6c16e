#!/bin/bash
# rankshape's collectives against every SimGrid SMPI built-in selector
# (ompi, mpich, mvapich2, impi) on simulated 2- and 3-level machines, with
# each platform's link bound (bench/coll_selectors.py says how it is
# computed). Deterministic: simulated time, no computation simulated, so
# neither the built-ins' reductions nor rankshape's cost time.
#   bench/coll_selectors.sh [--runs "PLATFORM:LAYOUT:RANKS ..."]
#       [--collectives LIST] [--sizes LIST] [--candidates N] [--out DIR]
#       [--reuse-builtins DIR] [--jobs N] [--no-tune] [--flat-factors]
#       [--memory-gib N]
# LAYOUT: block (data/platforms/PLATFORM.hostfile: node by node), rr
# (PLATFORM-rr.hostfile: ranks dealt round-robin over the nodes), random
# (PLATFORM-random.hostfile), uneven (node i of the block hostfile takes
# cores - i mod cores ranks: 8, 7, ..., 1, 8, 7, ... on 8-core nodes, 144
# ranks on 32 nodes), or fibres-DIMS / stencil-DIMS (block placement, every
# column timed on the communicator relabel_comm() returns for grid DIMS,
# e.g. stencil-8x8x4: coll_latency --relabel). Fewer
# ranks than the hostfile has slots leave the last node short (250 of 256:
# 2 on the last node, and not a power of two). Per run,
# each selector's native collectives (coll_latency --modes native), then
# coll_tune's table for rankshape (under the ompi selector, which is also
# what rankshape falls back to) and rankshape's dispatched choice
# (coll_latency --modes rankshape). Writes DIR/coll_selectors.{csv,md}
# (default bench/results) and the raw outputs under DIR/coll_selectors/.
# --jobs N (default 2): runs simulated at once, one core each.
# --no-tune: no coll_tune; rankshape makes its own trials (dispatch.h: what
# a program gets without a table). coll_tune measures every candidate at
# every size, more than 30 CPU minutes a run at 256 ranks up to 4 MiB.
# --flat-factors: SMPI's network factors set to 1 (smpi/bw-factor and
# smpi/lat-factor), so that no gain comes from the sizes where SimGrid's
# default factors make a message faster than its link (5.8 to 9.4 KB) or
# its latency 11.6 times longer (from 65,472 B); not with --reuse-builtins.
# Its run folders hold a file `factors`, and --reuse-builtins never takes
# their columns.
# --memory-gib N (default 4): the buffers of all of a run's simulated ranks
# together (each rank's are real memory); sizes beyond are left out.
# rankshape's trials may hold as much again. A reduce's every rank holds a
# send buffer and a receive (rankshape: scratch) buffer: 16 MiB at 256
# ranks needs 9, and up to twice that resident; a bcast 16 MiB there fits
# in the default 4.
# --reuse-builtins DIR takes the selectors' columns from an earlier run's
# raw outputs (DIR/coll_selectors/RUN/SELECTOR.csv) where they hold every
# collective and size asked for (or SELECTOR.deadlocks or .crashes lists it, or
# SELECTOR.log names it as left out for its buffers): they do
# not depend on rankshape's code,
# and the simulation is deterministic.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="lvl2-node32-core8:block:256 lvl2-node32-core8:rr:256 lvl3-rack4-node8-core8:block:256
lvl2-node32-core8:block:250"
collectives=bcast,reduce,allreduce
sizes=8,1024,65536,1048576,4194304
candidates=8
tune=1
jobs=2
memory_gib=4
out=bench/results
reuse=
factors=()
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --collectives) collectives=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --candidates) candidates=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --reuse-builtins) reuse=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --memory-gib) memory_gib=$2; shift 2 ;;
    --no-tune) tune=0; shift ;;
    --flat-factors) factors=(--cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1); shift ;;
    *) echo "coll_selectors.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
for tool in smpirun python3; do
  command -v "$tool" >/dev/null || { echo "coll_selectors.sh: needs $tool (tools/install-deps)" >&2; exit 1; }
done
# The hostfile a layout starts from (uneven: the block one, rewritten by
# uneven_hostfile()); status 1 for an unknown layout.
placement_of() {  # PLATFORM LAYOUT
  case $2 in
    block | uneven | fibres-* | stencil-*) echo "data/platforms/$1.hostfile" ;;
    rr | random) echo "data/platforms/$1-$2.hostfile" ;;
    *) return 1 ;;
  esac
}

# coll_latency's arguments for a layout: the relabelled grid, if any.
relabel_args() {  # LAYOUT
  case $1 in
    fibres-* | stencil-*) echo "--relabel ${1#*-} --pattern ${1%%-*}" ;;
  esac
}

# Uneven nodes: host i of a block hostfile ("host:cores") takes
# cores - (i mod cores) ranks.
uneven_hostfile() {  # BLOCK_HOSTFILE OUT
  awk -F: '{ n = $2 - (NR - 1) % $2; print $1 ":" n }' "$1" >"$2"
}

for spec in $runs; do
  IFS=: read -r name layout np <<<"$spec"
  hostfile=$(placement_of "$name" "$layout") ||
    { echo "coll_selectors.sh: layout '$layout' in '$spec' is not block, rr, random, uneven, fibres-DIMS or stencil-DIMS" >&2; exit 2; }
  for f in "data/platforms/$name.xml" "$hostfile"; do
    [ -f "$f" ] || { echo "coll_selectors.sh: no $f (run '$spec')" >&2; exit 2; }
  done
  [[ $np =~ ^[0-9]+$ ]] || { echo "coll_selectors.sh: ranks '$np' in '$spec' is not a number" >&2; exit 2; }
  if [ "$layout" = uneven ]; then
    slots=$(uneven_hostfile "$hostfile" /dev/stdout | awk -F: '{ s += $2 } END { print s }')
    [ "$np" -le "$slots" ] || { echo "coll_selectors.sh: '$spec': the uneven placement has $slots slots" >&2; exit 2; }
  fi
  if [ -n "$(relabel_args "$layout")" ] && [ "$tune" -eq 1 ]; then
    echo "coll_selectors.sh: '$spec': coll_tune tunes MPI_COMM_WORLD, not a relabelled communicator: add --no-tune" >&2
    exit 2
  fi
done
if [ ${#factors[@]} -gt 0 ] && [ -n "$reuse" ]; then
  echo "coll_selectors.sh: --flat-factors cannot reuse selector columns simulated with other factors" >&2
  exit 2
fi
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "coll_selectors.sh: --jobs '$jobs' is not a positive number" >&2; exit 2; }
[[ $memory_gib =~ ^[1-9][0-9]*$ ]] ||
  { echo "coll_selectors.sh: --memory-gib '$memory_gib' is not a positive number" >&2; exit 2; }
bazel build --config=smpi --noshow_progress //cmd:coll_tune //bench:coll_latency
bin=$(bazel info --config=smpi bazel-bin 2>/dev/null)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Copies: a later build in this tree must not change them during the runs.
cp "$bin/cmd/coll_tune" "$bin/bench/coll_latency" "$work/"
start=$(date +%s)

# Status 0, 3 when SimGrid reports a deadlock (SMPI exits 0 then), or 4
# when the simulation crashed (SMPI 3.32's mvapich2 gather and scatter
# segfault on 250 ranks over 32 nodes).
smpi_status() {  # PLATFORM HOSTFILE RANKS SELECTOR LOG ARGS...
  local platform=$1 hostfile=$2 np=$3 selector=$4 log=$5
  shift 5
  smpirun -np "$np" -platform "$platform" -hostfile "$hostfile" --cfg=smpi/host-speed:1Gf \
    --cfg=smpi/coll-selector:"$selector" --cfg=smpi/simulate-computation:no ${factors[@]+"${factors[@]}"} \
    --log=root.thresh:warning --log=smpi_config.thresh:warning "$@" >"$log" 2>&1 || return 4
  if grep -q "Deadlock detected" "$log"; then return 3; fi
}

smpi() {  # as smpi_status; a deadlock or a crash ends the script
  local status=0
  smpi_status "$@" || status=$?
  [ "$status" -eq 0 ] && return 0
  tail -n 30 "$5" >&2
  echo "coll_selectors.sh: $([ "$status" -eq 3 ] && echo deadlock || echo failed): $4 ${*:6}" >&2
  exit 1
}

# A built-in selector's native collectives into DIR/SELECTOR.csv. Where the
# selector's own algorithm deadlocks or crashes in SimGrid (SMPI 3.32's
# mvapich2 reduce at 1 MiB on 250 ranks, ranks started together, deadlocks;
# its gather and scatter there crash), each collective and size runs alone,
# and those that deadlock or crash are left out (blank in the table) and
# listed in DIR/SELECTOR.deadlocks or DIR/SELECTOR.crashes.
builtin() {  # PLATFORM HOSTFILE RANKS SELECTOR DIR TIMING...
  local platform=$1 hostfile=$2 np=$3 selector=$4 dir=$5 c b status
  shift 5
  status=0
  smpi_status "$platform" "$hostfile" "$np" "$selector" "$dir/$selector.log" \
    "$work/coll_latency" --out "$dir/$selector.csv" --modes native --label "$selector" \
    --collectives "$collectives" --sizes "$sizes" "$@" || status=$?
  [ "$status" -eq 0 ] && return 0
  echo "coll_selectors.sh: $selector $([ "$status" -eq 3 ] && echo deadlocked || echo crashed);" \
    "each collective and size alone" >&2
  echo "collective,bytes,mode,label,seconds,choice,first_seconds,predicted_seconds" >"$dir/$selector.csv"
  for c in ${collectives//,/ }; do
    for b in ${sizes//,/ }; do
      # Barrier has one row, at the first size.
      [ "$c" = barrier ] && [ "$b" != "${sizes%%,*}" ] && continue
      status=0
      smpi_status "$platform" "$hostfile" "$np" "$selector" "$dir/$selector-$c-$b.log" \
        "$work/coll_latency" --out "$dir/$selector-$c-$b.csv" --modes native \
        --label "$selector" "$@" --collectives "$c" --sizes "$b" || status=$?
      if [ "$status" -eq 0 ]; then
        tail -n +2 "$dir/$selector-$c-$b.csv" >>"$dir/$selector.csv"
      elif [ "$status" -eq 3 ]; then
        echo "$c,$b" >>"$dir/$selector.deadlocks"
        echo "coll_selectors.sh: $selector $c $b: deadlock in SimGrid, left out" >&2
      else
        echo "$c,$b" >>"$dir/$selector.crashes"
        echo "coll_selectors.sh: $selector $c $b: SimGrid crashed, left out" >&2
      fi
    done
  done
}

one_run() {  # SPEC: the selectors, then rankshape, into $work/NAME-LAYOUT-RANKS
  local spec=$1 name layout np hostfile dir limit selector saved
  IFS=: read -r name layout np <<<"$spec"
  hostfile=$(placement_of "$name" "$layout")
  dir=$work/$name-$layout-$np
  mkdir -p "$dir"
  cp "data/platforms/$name.xml" "$dir/platform.xml"
  echo "$np" >"$dir/ranks"
  if [ "$layout" = uneven ]; then
    uneven_hostfile "$hostfile" "$dir/hostfile"
    hostfile=$dir/hostfile
  fi
  # The network factors simulated, so that a later --reuse-builtins takes
  # only columns made with the default ones.
  if [ ${#factors[@]} -gt 0 ]; then echo flat >"$dir/factors"; fi
  # Every simulated rank's buffers are real memory: --memory-gib per run.
  limit=$((memory_gib * 1024 / np))
  local timing=(--reps 3 --min-reps 3 --warmup 1 --max-buffer-mib "$limit")
  # shellcheck disable=SC2207  # words of relabel_args, no globs
  timing+=($(relabel_args "$layout"))
  local common=(--collectives "$collectives" --sizes "$sizes" "${timing[@]}")
  for selector in ompi mpich mvapich2 impi; do
    saved=$reuse/coll_selectors/$name-$layout-$np/$selector.csv
    # Every (collective, size) asked for measured, or known to deadlock.
    if [ -n "$reuse" ] && [ -f "$saved" ] && [ ! -f "$(dirname "$saved")/factors" ] &&
      python3 - "$saved" "$collectives" "$sizes" <<'PY'; then
import csv, os, re, sys
have = {(r["collective"], r["bytes"]) for r in csv.DictReader(open(sys.argv[1]))}
for left_out in (".deadlocks", ".crashes"):
    listed = sys.argv[1][:-len(".csv")] + left_out
    if os.path.exists(listed):
        have |= {tuple(line.strip().split(",")) for line in open(listed) if line.strip()}
# The pairs coll_latency left out for their buffers, which it names.
log = sys.argv[1][:-len(".csv")] + ".log"
if os.path.exists(log):
    for line in open(log):
        m = re.match(r"# \d+ \(collective, size\) pairs skipped: .* per rank(?: on average)?: (.*)$", line)
        if m:
            have |= {tuple(pair.split(" ")) for pair in m.group(1).split(", ")}
# Barrier has one row, of 0 bytes.
want = {(c, "0" if c == "barrier" else b) for c in sys.argv[2].split(",")
        for b in sys.argv[3].split(",")}
sys.exit(0 if want <= have else 1)
PY
      echo "coll_selectors.sh: $spec: $selector: reusing $saved"
      cp "$saved" "$dir/$selector.csv"
      for left_out in deadlocks crashes; do
        [ ! -f "${saved%.csv}.$left_out" ] || cp "${saved%.csv}.$left_out" "$dir/$selector.$left_out"
      done
      [ -f "${saved%.csv}.log" ] && cp "${saved%.csv}.log" "$dir/$selector.log"
      echo "$selector" >>"$dir/reused"
      continue
    fi
    echo "coll_selectors.sh: $spec: $selector"
    builtin "data/platforms/$name.xml" "$hostfile" "$np" "$selector" "$dir" "${timing[@]}"
  done
  if [ "$tune" -eq 1 ]; then
    echo "coll_selectors.sh: $spec: rankshape (coll_tune, then coll_latency)"
    smpi "data/platforms/$name.xml" "$hostfile" "$np" ompi "$dir/tune.log" "$work/coll_tune" \
      --out "$dir/table.json" --report "$dir/report.csv" --collectives "$collectives" \
      --sizes "$sizes" --reps 3 --warmup 1 --candidates "$candidates" --max-buffer-mib "$limit"
    export RANKSHAPE_COLL_TABLE=$dir/table.json
  else
    echo "coll_selectors.sh: $spec: rankshape (coll_latency: trials, no table)"
    unset RANKSHAPE_COLL_TABLE
  fi
  smpi "data/platforms/$name.xml" "$hostfile" "$np" ompi "$dir/rankshape.log" \
    "$work/coll_latency" --out "$dir/rankshape.csv" --modes rankshape --label rankshape \
    "${common[@]}"
  touch "$dir/done"
}

# Up to --jobs runs at once (each simulation runs on one core).
reports=()
for spec in $runs; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  one_run "$spec" &
  IFS=: read -r name layout np <<<"$spec"
  reports+=("$name, $layout placement, $np ranks=$work/$name-$layout-$np")
done
wait
for spec in $runs; do
  IFS=: read -r name layout np <<<"$spec"
  [ -f "$work/$name-$layout-$np/done" ] || { echo "coll_selectors.sh: run '$spec' failed" >&2; exit 1; }
  rm "$work/$name-$layout-$np/done"
done
elapsed=$(($(date +%s) - start))
{
  echo "# Collectives against every SMPI built-in selector"
  echo
  if [ "$tune" -eq 1 ]; then how="--candidates $candidates"; else how=--no-tune; fi
  [ ${#factors[@]} -eq 0 ] || how="$how --flat-factors"
  echo "\`bench/coll_selectors.sh --runs \"${runs//$'\n'/ }\" --collectives $collectives --sizes $sizes"
  echo "$how\` ($(date -u +%Y-%m-%d), $elapsed s of real time on this"
  echo "2-core machine). SimGrid SMPI $(smpirun -version 2>/dev/null | head -n 1 | grep -o '[0-9][0-9.]*' | head -n 1),"
  if [ ${#factors[@]} -gt 0 ]; then
    echo "default network model with its factors set flat (\`smpi/bw-factor:0:1\`, \`smpi/lat-factor:0:1\`),"
    echo "no computation simulated: times are simulated and"
  else
    echo "default network model, no computation simulated: times are simulated and"
  fi
  echo "deterministic, and no reduction costs time (neither the built-ins' nor rankshape's)."
  if [ "$tune" -eq 1 ]; then
    echo "Each built-in selector's native collectives; rankshape: \`dispatch.h\` with"
    echo "the table \`coll_tune\` wrote just before on the same run (its fallback is the"
  else
    echo "Each built-in selector's native collectives; rankshape: \`dispatch.h\` without"
    echo "a table: the first call of each collective and size class times native, the"
    echo "cost model's two best hierarchical configurations and its best with each other"
    echo "top-level algorithm priced within 2x of its best, the textbook flat algorithm"
    echo "and, for allreduce, its own reduce then bcast and its own reduce_scatter_block"
    echo "then allgather of the message's blocks, and keeps the fastest (\"first"
    echo "call\" is that call's time, the trial included; its native is the"
  fi
  echo "\`ompi\` selector's native call). Times: median of 3 repetitions (after 1"
  echo "warm-up) of the slowest rank. Bytes: per message (bcast, reduce, allreduce), or per block"
  echo "(the others; sizes whose buffers pass $memory_gib GiB over all ranks are left out: a gather's or"
  echo "scatter's root holds a block of every rank, the other ranks one). The link bound:"
  echo "\`bench/coll_selectors.py\`; \"% of bound\" is bound / time. \"predicted\": the cost"
  echo "model's price of rankshape's choice (\`lib/coll/model.h\`; native: its best flat algorithm)."
  # rankshape's own settings, which smpirun passes on (e.g. RANKSHAPE_COLL_RACKS=auto).
  settings=$(env | grep '^RANKSHAPE_COLL' | sort | paste -sd' ' || true)
  if [ -n "$settings" ]; then echo "rankshape's settings: \`$settings\`."; fi
  if [ -n "$reuse" ]; then
    reused=$(for spec in $runs; do
      IFS=: read -r name layout np <<<"$spec"
      f=$work/$name-$layout-$np/reused
      [ ! -f "$f" ] || echo "$name-$layout-$np: $(paste -sd, "$f")"
    done | paste -sd';')
    if [ -n "$reused" ]; then
      echo "Selector columns reused from \`$reuse\` (\`--reuse-builtins\`): $reused; any other simulated again."
    else
      echo "No selector columns in \`$reuse\` held every collective and size asked for (\`--reuse-builtins\`): all simulated again."
    fi
  fi
  echo
} >"$work/header.md"
mkdir -p "$out"
python3 bench/coll_selectors.py "$work/coll_selectors.csv" "$work/coll_selectors.md" \
  "$work/header.md" "${reports[@]}"
rm -rf "$out/coll_selectors"
mkdir -p "$out/coll_selectors"
for spec in $runs; do
  IFS=: read -r name layout np <<<"$spec"
  cp -r "$work/$name-$layout-$np" "$out/coll_selectors/"
done
mv "$work/coll_selectors.csv" "$work/coll_selectors.md" "$out/"
echo "wrote $out/coll_selectors.csv and $out/coll_selectors.md ($elapsed s)"
