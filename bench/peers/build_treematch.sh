#!/usr/bin/env bash
# Builds treematch_map, the driver bench/graph_bench.sh calls as its
# TreeMatch peer: TreeMatch's sources as Open MPI ships them
# (3rd-party/treematch, the .c files its Makefile.am lists; warnings off,
# it is not our code) with treematch_map.c (ours, warnings as errors).
#   bench/peers/build_treematch.sh TREEMATCH_DIR OUT_DIR
# TREEMATCH_DIR: the 3rd-party/treematch folder of a checkout of github
#   open-mpi/ompi (the benchmarks used commit 8efebee7). Needs gcc and
#   hwloc (Debian: libhwloc-dev). Writes OUT_DIR/treematch_map.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 TREEMATCH_DIR OUT_DIR" >&2; exit 2; }
tm=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -f "$tm/Makefile.am" ] || [ ! -f "$tm/treematch.h" ]; then
  echo "build_treematch.sh: $tm is not Open MPI's 3rd-party/treematch" >&2
  exit 2
fi
mkdir -p "$2"
out=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
srcs=$(sed -n 's/\\$//; /^sources *=/,/^$/p' "$tm/Makefile.am" | tr '[:blank:]' '\n' | grep '\.c$')
for s in $srcs; do
  gcc -O2 -w -I"$here/treematch_compat" -I"$tm" -c "$tm/$s" -o "$work/${s%.c}.o"
done
gcc -O2 -Wall -Wextra -Werror -I"$here/treematch_compat" -I"$tm" -c "$here/treematch_map.c" -o "$work/treematch_map.o"
gcc "$work"/*.o -o "$out/treematch_map.tmp" -lhwloc -lpthread -lm
mv "$out/treematch_map.tmp" "$out/treematch_map"
echo "built $out/treematch_map"
