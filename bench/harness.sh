#!/bin/bash
# The ordering comparison harness, one command per testbed: "on this
# machine, which ordering wins, and by how much?"
#   bench/harness.sh --testbed local [--np N]
#   bench/harness.sh --testbed emulated [--nodes 4] [--per-node 2] [--tiers "2 200mbit"]
#   bench/harness.sh --testbed smpi --platform NAME [--placement block|rr|random]
#   common: [--out DIR] [--grid 0,0,0] [--quick] [--] [compare options...]
# Testbeds:
#   local     plain mpirun on this machine (oversubscribed beyond its cores);
#   emulated  the emulated multi-node cluster (bench/emulated/cluster.sh:
#             network namespaces, real Open MPI over TCP between nodes), with
#             --tiers "RACK_NODES RATE" a token bucket of RATE on traffic
#             between racks of RACK_NODES nodes; needs root;
#   smpi      SimGrid SMPI on data/platforms/NAME.xml with the placement's
#             hostfile (NAME.hostfile, NAME-rr.hostfile, NAME-random.hostfile),
#             all its ranks; times are simulated and deterministic.
# Steps: build //bench:compare (optimised; --config=smpi for SMPI), run it
# (costs measured once, every ordering computed, kernels timed on each
# ordering's shaped communicators: bench/compare.cc), then
# bench/harness_plot.py draws the plots and writes report.md.
# --quick: small sizes and few repetitions (the tests use it).
# Output in DIR (default bench/results/harness/TESTBED[-NAME-PLACEMENT]):
# orderings.csv, kernels.csv, summary.json, heatmap-*.png, time_per_ordering.png,
# predicted_vs_measured.png, speedup.png, report.md, compare.log and
# run.txt (the command, wall time and peak memory of the run).
set -euo pipefail
cd "$(dirname "$0")/.."
command_line="bench/harness.sh $*"
testbed=
platform=
placement=block
np=
nodes=4
per_node=2
tiers=
out=
grid=0,0,0
quick=0
extra=()
usage() { sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --testbed) testbed=$2; shift 2 ;;
    --platform) platform=$2; shift 2 ;;
    --placement) placement=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --per-node) per_node=$2; shift 2 ;;
    --tiers) tiers=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --grid) grid=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) usage ;;
    *) echo "harness.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
fail() { echo "harness.sh: $*" >&2; exit 2; }
case $testbed in
  local|emulated) ;;
  smpi)
    [ -n "$platform" ] || fail "--testbed smpi needs --platform NAME (data/platforms/NAME.xml)"
    [ -f "data/platforms/$platform.xml" ] || fail "no platform data/platforms/$platform.xml"
    case $placement in
      block) hostfile=data/platforms/$platform.hostfile ;;
      rr|random) hostfile=data/platforms/$platform-$placement.hostfile ;;
      *) fail "--placement must be block, rr or random, not '$placement'" ;;
    esac
    [ -f "$hostfile" ] || fail "no hostfile $hostfile for placement $placement"
    ;;
  "") fail "--testbed is required (local, emulated or smpi)" ;;
  *) fail "unknown testbed '$testbed' (expected local, emulated or smpi)" ;;
esac
python=/usr/bin/python3
[ -x "$python" ] || python=python3
"$python" -c 'import matplotlib' 2>/dev/null ||
  fail "needs python3-matplotlib for the plots (tools/install-deps)"
if [ -z "$out" ]; then
  out=bench/results/harness/$testbed
  [ "$testbed" = smpi ] && out=$out-$platform-$placement
fi
mkdir -p "$out"
rm -f "$out"/heatmap-*.png

compare=(--testbed "$testbed${platform:+:$platform:$placement}" --grid "$grid" --heatmaps)
[ "$quick" -eq 1 ] && compare+=(--sizes 8,65536 --reps 2 --warmup 1 --matmul-n 96 --time-limit 0.3)

config=(-c opt)
[ "$testbed" = smpi ] && config+=(--config=smpi)
bazel build "${config[@]}" --noshow_progress --ui_event_filters=-info //bench:compare
bin=$(bazel info "${config[@]}" bazel-bin 2>/dev/null)/bench/compare
work=$(mktemp -d)
cleanup() {
  rm -rf "$work"
  if [ "$testbed" = emulated ]; then timeout 60 bench/emulated/cluster.sh down >/dev/null || true; fi
}
trap cleanup EXIT
# A copy: a later build in this tree must not change it during the run.
cp "$bin" "$work/compare"

root=()
[ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
case $testbed in
  local)
    cores=$(getconf _NPROCESSORS_ONLN)
    np=${np:-$cores}
    launch=(mpirun "${root[@]}" -np "$np")
    [ "$np" -gt "$cores" ] && launch+=(--oversubscribe --bind-to none)
    ;;
  emulated)
    [ "$(id -u)" -eq 0 ] || fail "the emulated testbed needs root (network namespaces)"
    cluster=bench/emulated/cluster.sh
    timeout 60 "$cluster" down >/dev/null
    timeout 60 "$cluster" up "$nodes"
    if [ -n "$tiers" ]; then
      # shellcheck disable=SC2086  # "RACK_NODES RATE": two words
      timeout 60 "$cluster" tiers $tiers
    fi
    "$cluster" hostfile "$per_node" >"$work/hosts"
    subnet=$("$cluster" subnet)
    np=$((nodes * per_node))
    launch=(mpirun "${root[@]}" --hostfile "$work/hosts" -np "$np"
      --mca plm_rsh_agent "$("$cluster" agent)" --mca oob_tcp_if_include "$subnet"
      --mca btl_tcp_if_include "$subnet" --mca btl self,vader,tcp --bind-to none
      --mca mpi_yield_when_idle 1)
    ;;
  smpi)
    np=$(awk -F: '{n += ($2 == "" ? 1 : $2)} END {print n}' "$hostfile")
    # SMPI's copy of Open MPI's tuned decisions (as bench/coll_smpi.sh),
    # but a binomial reduce, since SimGrid 3.32's pipelined one aborts
    # ("Actor pid=-1 is gone") on communicators whose ranks span hosts out of
    # order, as scrambled placements make them, and a binomial bcast, since
    # the segmented one costs 30 times the real time to simulate at 1 MiB
    # (140 s against 5 s for three 256-rank calls). Computation is not
    # simulated: the times are those of the messages. They are
    # deterministic, so one timed repetition suffices (unless --reps is given).
    launch=(smpirun -np "$np" -platform "data/platforms/$platform.xml" -hostfile "$hostfile"
      --cfg=smpi/host-speed:1Gf --cfg=smpi/coll-selector:ompi --cfg=smpi/reduce:binomial
      --cfg=smpi/bcast:binomial_tree
      --cfg=smpi/simulate-computation:no
      --log=root.thresh:warning --log=smpi_config.thresh:warning)
    compare+=(--no-compute)
    [[ " ${extra[*]} " == *" --reps "* || "$quick" -eq 1 ]] || compare+=(--reps 1)
    ;;
esac

# Open MPI's TreeMatch ends the whole job when it cannot map the graph
# (exit() inside the library); it is probed alone first, and when that
# fails the real run lists it as skipped with TreeMatch's own message.
if [ "$testbed" != smpi ]; then
  mkdir -p "$work/probe"
  if ! timeout 300 "${launch[@]}" "$work/compare" --out "$work/probe" --grid "$grid" \
    --orderings treematch --kernels allreduce --sizes 8 --reps 1 --warmup 0 \
    >"$work/probe.log" 2>&1; then
    why=$(grep -v '^\[' "$work/probe.log" | grep -m1 -iE 'error|not enough' | tr -d ',' | cut -c1-150)
    compare+=(--treematch-failed "Open MPI's TreeMatch ended the job (${why:-see a run with --orderings treematch})")
  fi
fi

start=$(date +%s)
status=0
/usr/bin/time -f "%e %M" -o "$work/time" "${launch[@]}" "$work/compare" --out "$out" \
  "${compare[@]}" "${extra[@]}" >"$out/compare.log" 2>&1 || status=$?
if [ "$status" -ne 0 ] || grep -q "Deadlock detected" "$out/compare.log"; then
  grep -v '^\[' "$out/compare.log" | tail -n 30 >&2
  echo "harness.sh: compare failed on the $testbed testbed (status $status); log: $out/compare.log" >&2
  exit 1
fi
read -r seconds kib <"$work/time"
"$python" bench/harness_plot.py "$out"
elapsed=$(($(date +%s) - start))
{
  echo "command: $command_line"
  echo "testbed: $testbed${platform:+ $platform ($placement placement)}, $np ranks"
  echo "launcher: ${launch[*]}"
  echo "run: $seconds s wall, peak memory $((kib / 1024)) MiB (the largest process the launcher waited for: every rank under SMPI, mpirun itself otherwise)"
  echo "with plots: $elapsed s wall"
} >"$out/run.txt"
cat "$out/run.txt"
echo "harness.sh: results in $out (report.md)"
