#!/bin/bash
# The traffic profiler's overhead on message-heavy loops (bench/profile_loop.c)
# under Open MPI on this machine: 2 ranks exchanging small messages
# (MPI_Isend, MPI_Irecv, MPI_Waitall) and 2 ranks running small
# MPI_Allreduce, each ROUNDS times without and with librankshape_profile.so
# preloaded, alternating, so that both see the same machine; the median and
# the least of each, and their ratios (runs on this shared machine fall
# into two modes, one about twice the other: the least compares like with
# like).
#   bench/profile_overhead.sh [--rounds N] [--iters N] [--out DIR] [--baseline SO]
# --baseline SO: another build of librankshape_profile.so (an earlier
# commit's, say) run as a third variant in the same alternation, so that
# the two profilers are compared side by side.
# Writes DIR/profile_overhead.md (default bench/results).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=15 iters=200000 out=bench/results baseline=
while [ $# -gt 0 ]; do
  case $1 in
    --rounds | --iters | --out | --baseline)
      [ $# -ge 2 ] || { echo "profile_overhead.sh: $1 needs a value" >&2; exit 2; }
      case $1 in --rounds) rounds=$2 ;; --iters) iters=$2 ;; --out) out=$2 ;; --baseline) baseline=$2 ;; esac
      shift 2
      ;;
    *) echo "profile_overhead.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[[ $rounds =~ ^[1-9][0-9]*$ && $iters =~ ^[1-9][0-9]*$ ]] ||
  { echo "profile_overhead.sh: --rounds and --iters take whole numbers >= 1" >&2; exit 2; }
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

# seconds KIND BYTES [SO]: one run's slowest rank, SO preloaded if given.
seconds() {
  local vars=()
  [ $# -ge 3 ] && vars=(-x "LD_PRELOAD=$3" -x "RANKSHAPE_PROFILE_OUT=$work/t")
  mpirun --allow-run-as-root --oversubscribe --bind-to core -np 2 "${vars[@]}" \
    "$work/profile_loop" "$1" "$iters" "$2" 2>/dev/null | awk '$1 == "seconds" {print $2}'
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
least() { sort -g | head -1; }

mkdir -p "$out"
{
  echo "# The traffic profiler's overhead"
  echo
  echo "Written by \`bench/profile_overhead.sh --rounds $rounds --iters $iters\` ($(date +%Y-%m-%d)),"
  echo "Open MPI $(mpirun --version 2>/dev/null | head -1 | awk '{print $NF}'), 2 ranks on this machine ($(nproc) cores),"
  echo "$iters iterations per run, $rounds runs of each, plain and preloaded alternating; seconds."
  echo
  if [ -n "$baseline" ]; then
    echo "Baseline: $baseline, alternating with the other two."
    echo
    echo "| loop | bytes | plain, median | profiled, median | ratio | plain, least | profiled, least | ratio | baseline, median | ratio | baseline, least | ratio |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  else
    echo "| loop | bytes | plain, median | profiled, median | ratio | plain, least | profiled, least | ratio |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  fi
  for case in "p2p 8" "p2p 4096" "allreduce 8"; do
    set -- $case
    : >"$work/plain" && : >"$work/profiled" && : >"$work/baseline"
    for ((i = 0; i < rounds; ++i)); do
      seconds "$1" "$2" >>"$work/plain"
      seconds "$1" "$2" "$work/librankshape_profile.so" >>"$work/profiled"
      [ -z "$baseline" ] || seconds "$1" "$2" "$work/baseline.so" >>"$work/baseline"
    done
    a=$(median <"$work/plain") b=$(median <"$work/profiled")
    c=$(least <"$work/plain") d=$(least <"$work/profiled")
    row=$(awk -v k="$1" -v n="$2" -v a="$a" -v b="$b" -v c="$c" -v d="$d" \
      'BEGIN {printf "| %s | %d | %.4f | %.4f | %.3f | %.4f | %.4f | %.3f |", k, n, a, b, b / a, c, d, d / c}')
    if [ -n "$baseline" ]; then
      e=$(median <"$work/baseline") f=$(least <"$work/baseline")
      row+=$(awk -v a="$a" -v c="$c" -v e="$e" -v f="$f" \
        'BEGIN {printf " %.4f | %.3f | %.4f | %.3f |", e, e / a, f, f / c}')
    fi
    echo "$row"
  done
} >"$out/profile_overhead.md.tmp"
mv "$out/profile_overhead.md.tmp" "$out/profile_overhead.md"
cat "$out/profile_overhead.md"
