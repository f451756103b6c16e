#!/bin/bash
# The traffic profiler's overhead on message-heavy loops (bench/profile_loop.c)
# under Open MPI on this machine: 2 ranks exchanging small messages
# (MPI_Isend, MPI_Irecv, MPI_Waitall) and 2 ranks running small
# MPI_Allreduce, each ROUNDS times without and with librankshape_profile.so
# preloaded, alternating, so that both see the same machine; the median and
# the least of each, and their ratios (runs on this shared machine fall
# into two modes, one about twice the other: the least compares like with
# like); "paired" is the median over rounds of each round's profiled /
# plain, two runs side by side, which cancels the machine's slower drifts.
# Then the profiler's own cost per iteration, from the same loops on one
# rank (a self-exchange; no other process to wait for, so the difference
# is the wrappers' time, steady to a nanosecond or so), set against a
# two-rank iteration: an estimate that the two-rank ratios, noisy on a
# shared 2-core machine, cannot give to within 3%.
#   bench/profile_overhead.sh [--rounds N] [--iters N] [--one-rank-iters N] [--out DIR] [--baseline SO]
# --baseline SO: another build of librankshape_profile.so (an earlier
# commit's, say) run as a third variant in the same alternation, so that
# the two profilers are compared side by side.
# Writes DIR/profile_overhead.md (default bench/results).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=15 iters=200000 one_iters=2000000 out=bench/results baseline=
while [ $# -gt 0 ]; do
  case $1 in
    --rounds | --iters | --one-rank-iters | --out | --baseline)
      [ $# -ge 2 ] || { echo "profile_overhead.sh: $1 needs a value" >&2; exit 2; }
      case $1 in
        --rounds) rounds=$2 ;; --iters) iters=$2 ;; --one-rank-iters) one_iters=$2 ;;
        --out) out=$2 ;; --baseline) baseline=$2 ;;
      esac
      shift 2
      ;;
    *) echo "profile_overhead.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[[ $rounds =~ ^[1-9][0-9]*$ && $iters =~ ^[1-9][0-9]*$ && $one_iters =~ ^[1-9][0-9]*$ ]] ||
  { echo "profile_overhead.sh: --rounds, --iters and --one-rank-iters take whole numbers >= 1" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "profile_overhead.sh: needs Open MPI's mpirun (tools/install-deps)" >&2; exit 1; }
bazel build --noshow_progress --ui_event_filters=-info -c opt //bench:profile_loop \
  //lib/profile:librankshape_profile.so
bin=$(bazel info -c opt bazel-bin 2>/dev/null)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$bin/bench/profile_loop" "$bin/lib/profile/librankshape_profile.so" "$work/"
if [ -n "$baseline" ]; then
  [ -f "$baseline" ] || { echo "profile_overhead.sh: --baseline $baseline: no such file" >&2; exit 2; }
  cp "$baseline" "$work/baseline.so"
fi

# seconds KIND BYTES [SO]: one run's slowest rank (RANKS of them, ITERS
# iterations), SO preloaded if given.
seconds() {
  local vars=()
  [ $# -ge 3 ] && vars=(-x "LD_PRELOAD=$3" -x "RANKSHAPE_PROFILE_OUT=$work/t")
  mpirun --allow-run-as-root --oversubscribe --bind-to core -np "$ranks" "${vars[@]}" \
    "$work/profile_loop" "$1" "$n" "$2" 2>/dev/null | awk '$1 == "seconds" {print $2}'
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
least() { sort -g | head -1; }
# table_head HEAD RULE BASELINE_HEAD BASELINE_RULE: a table's first two
# lines, with the baseline's columns when there is one.
table_head() {
  if [ -n "$baseline" ]; then printf '%s%s\n%s%s\n' "$1" "$3" "$2" "$4"; else printf '%s\n%s\n' "$1" "$2"; fi
}
# paired A B: the median over rounds of B's time / A's.
paired() { paste "$1" "$2" | awk '{print $2 / $1}' | median; }

# measure DIR: per case, ROUNDS runs of plain, profiled (and baseline) in
# turn, into DIR/KIND-BYTES.{plain,profiled,baseline}.
measure() {
  local dir=$1 f
  for one in "${cases[@]}"; do
    set -- $one
    f=$dir/$1-$2
    : >"$f.plain" && : >"$f.profiled" && : >"$f.baseline"
    for ((i = 0; i < rounds; ++i)); do
      seconds "$1" "$2" >>"$f.plain"
      seconds "$1" "$2" "$work/librankshape_profile.so" >>"$f.profiled"
      [ -z "$baseline" ] || seconds "$1" "$2" "$work/baseline.so" >>"$f.baseline"
    done
  done
}
cases=("p2p 8" "p2p 4096" "allreduce 8")
ranks=2 n=$iters
measure "$work"
mkdir -p "$work/one"
ranks=1 n=$one_iters
measure "$work/one"

mkdir -p "$out"
{
  echo "# The traffic profiler's overhead"
  echo
  echo "Written by \`bench/profile_overhead.sh --rounds $rounds --iters $iters --one-rank-iters $one_iters${baseline:+ --baseline SO}\` ($(date +%Y-%m-%d)),"
  echo "Open MPI $(mpirun --version 2>/dev/null | head -1 | awk '{print $NF}') on this machine ($(nproc) cores)."
  [ -z "$baseline" ] || echo "Baseline: $baseline, alternating with the other two."
  echo
  echo "## Two ranks"
  echo
  echo "$iters iterations per run, $rounds runs of each, plain and preloaded alternating; seconds."
  echo "paired: the median of each round's profiled / plain."
  echo
  table_head "| loop | bytes | plain, median | profiled, median | ratio | plain, least | profiled, least | ratio | paired |" \
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|" \
    " baseline, median | ratio | baseline, least | ratio | paired |" "---:|---:|---:|---:|---:|"
  for one in "${cases[@]}"; do
    set -- $one
    f=$work/$1-$2
    a=$(median <"$f.plain") b=$(median <"$f.profiled")
    c=$(least <"$f.plain") d=$(least <"$f.profiled")
    row=$(awk -v k="$1" -v n="$2" -v a="$a" -v b="$b" -v c="$c" -v d="$d" -v p="$(paired "$f.plain" "$f.profiled")" \
      'BEGIN {printf "| %s | %d | %.4f | %.4f | %.3f | %.4f | %.4f | %.3f | %.3f |", k, n, a, b, b / a, c, d, d / c, p}')
    if [ -n "$baseline" ]; then
      e=$(median <"$f.baseline") g=$(least <"$f.baseline")
      row+=$(awk -v a="$a" -v c="$c" -v e="$e" -v g="$g" -v p="$(paired "$f.plain" "$f.baseline")" \
        'BEGIN {printf " %.4f | %.3f | %.4f | %.3f | %.3f |", e, e / a, g, g / c, p}')
    fi
    echo "$row"
  done
  echo
  echo "## The profiler's own cost, from one rank"
  echo
  echo "The same loops on one rank ($one_iters iterations, a self-exchange for p2p; $rounds runs"
  echo "of each, alternating): the least times' difference per iteration is what the wrappers"
  echo "cost; share: that cost over a two-rank iteration (its least time above). At one rank"
  echo "the p2p wrapper skips only the counter update (a send to itself is not traffic)."
  echo
  table_head "| loop | bytes | plain, ns/iteration | profiled, ns/iteration | cost, ns | two-rank iteration, ns | share |" \
    "|---|---:|---:|---:|---:|---:|---:|" " baseline cost, ns | share |" "---:|---:|"
  for one in "${cases[@]}"; do
    set -- $one
    f=$work/one/$1-$2
    row=$(awk -v k="$1" -v n="$2" -v a="$(least <"$f.plain")" -v b="$(least <"$f.profiled")" \
      -v t="$(least <"$work/$1-$2.plain")" -v i1="$one_iters" -v i2="$iters" \
      'BEGIN {x = a / i1 * 1e9; y = b / i1 * 1e9; it = t / i2 * 1e9;
              printf "| %s | %d | %.1f | %.1f | %.1f | %.0f | %.1f%% |", k, n, x, y, y - x, it, 100 * (y - x) / it}')
    if [ -n "$baseline" ]; then
      row+=$(awk -v a="$(least <"$f.plain")" -v b="$(least <"$f.baseline")" -v t="$(least <"$work/$1-$2.plain")" \
        -v i1="$one_iters" -v i2="$iters" \
        'BEGIN {c = (b - a) / i1 * 1e9; it = t / i2 * 1e9; printf " %.1f | %.1f%% |", c, 100 * c / it}')
    fi
    echo "$row"
  done
} >"$out/profile_overhead.md.tmp"
mv "$out/profile_overhead.md.tmp" "$out/profile_overhead.md"
cat "$out/profile_overhead.md"
