#!/usr/bin/env bash
# Builds viem, the VieM binary bench/graph_bench.sh and
# bench/irregular_bench.sh call as a peer, with VieM's own CMake (which
# adds -march=native), unmodified.
#   bench/peers/build_viem.sh VIEM_DIR OUT_DIR
# VIEM_DIR: a checkout of github schulzchristian/VieM (the benchmarks used
#   commit 56395e7c). Needs cmake, g++ and OpenMP. Writes OUT_DIR/viem.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 VIEM_DIR OUT_DIR" >&2; exit 2; }
src=$(cd "$1" && pwd)
[ -f "$src/CMakeLists.txt" ] || { echo "build_viem.sh: no CMakeLists.txt in $src" >&2; exit 2; }
mkdir -p "$2"
out=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake -S "$src" -B "$work" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work" -j "$(nproc)" --target viem >/dev/null
cp "$work/viem" "$out/viem.tmp"
mv "$out/viem.tmp" "$out/viem"
echo "built $out/viem"
