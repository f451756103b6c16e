#!/bin/bash
# Uses an install tree as a program outside this repository would
# (tools/test runs it after tools/install, for each MPI):
#   tests/install/outsider_test.sh PREFIX openmpi|mpich
# Each program runs at 4 ranks on a planted machine: a dense cost file
# puts world ranks {0,2} and {1,3} on two nodes (1 inside, 100 across), so
# the job's own order crosses nodes at every step of a 1x4 periodic ring
# (4 times); a relabelling for the halo crosses twice. Checked, each with
# its own build:
#   - examples/c/halo.c with mpicc $(pkg-config --cflags --libs rankshape);
#   - examples/cpp with CMake and find_package(rankshape);
#   - examples/fortran/halo_mpi.f90 (use mpi) and halo_f08.f90 (use
#     mpi_f08) with mpif90 $(pkg-config ... rankshape-fortran);
#   - examples/fortran/graph_f08.f90: a traffic graph through the module,
#     heavy pairs {0,1} {2,3} on one node each; bad weights refused;
#   - unmodified C and Fortran (use mpi, use mpi_f08) stencil programs with
#     the prefix's librankshape_cart.so preloaded;
#   - unmodified Fortran (use mpi, use mpi_f08) programs with graph
#     topologies, the prefix's librankshape_graph.so preloaded: heavy pairs
#     {0,1} {2,3} land on one node each, neighbours and weights follow the
#     vertex, MPI_UNWEIGHTED stays unweighted;
#   - the nine collectives from Fortran (use mpi, use mpi_f08) with
#     librankshape_coll.so preloaded;
#   - librankshape_profile.so preloaded into the Fortran (use mpi_f08)
#     stencil program: the traffic it sends;
#   - a bad pattern in the C example: one message naming it, exit 1;
#   - --version of the installed tools and the version macro.
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: outsider_test.sh PREFIX openmpi|mpich" >&2; exit 2; }
prefix=$(realpath "$1") mpi=$2
repo=$(cd "$(dirname "$0")/../.." && pwd)
case $mpi in
  openmpi)
    cc=mpicc.openmpi fc=mpif90.openmpi
    launch() { local np=$1; shift; local envs=()
      while [ "$1" != -- ]; do envs+=(-x "$1"); shift; done; shift
      timeout 120 mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none \
        --mca btl self,vader --mca btl_vader_single_copy_mechanism none -np "$np" "${envs[@]}" "$@"; } ;;
  mpich)
    cc=mpicc.mpich fc=mpif90.mpich
    launch() { local np=$1; shift; local envs=()
      while [ "$1" != -- ]; do envs+=(-genv "${1%%=*}" "${1#*=}"); shift; done; shift
      timeout 120 mpiexec.mpich -n "$np" "${envs[@]}" "$@"; } ;;
  *) echo "outsider_test.sh: MPI must be openmpi or mpich, got '$mpi'" >&2; exit 2 ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 143' INT TERM
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
libdir=$(pkg-config --variable=libdir rankshape) || { echo "FAIL: pkg-config finds no rankshape in $prefix" >&2; exit 1; }
failures=0
version=$(sed -n 's/^#define RANKSHAPE_VERSION_STRING "\(.*\)"$/\1/p' "$prefix/include/rankshape/version.h")
fail() { echo "FAIL ($mpi): $*" >&2; failures=$((failures + 1)); }

costs=$work/planted.costs
awk 'BEGIN { print "# world ranks {0,2} and {1,3} on two nodes"
  for (a = 0; a < 4; ++a) { line = ""
    for (b = 0; b < 4; ++b) line = line (b ? " " : "") (a == b ? 0 : (a % 2 == b % 2 ? 1 : 100))
    print line } }' >"$costs"

# check NAME OUTPUT: checks ok, and the ring of cart ranks 0-1-2-3-0
# crosses nodes twice (the least a ring on two nodes can; the job's order: 4).
check() {
  local name=$1 out=$2 crossings
  crossings=$(awk '$1 == "world" { world[$4] = $2; ++n }
    END { if (n != 4) { print -1; exit }
      for (i = 0; i < 4; ++i) c += world[i] % 2 != world[(i + 1) % 4] % 2
      print c }' "$out")
  if grep -q "^checks ok" "$out" && [ "$crossings" = 2 ]; then
    echo "ok ($mpi): $name: halo checks ok, the ring crosses nodes 2 times (job's order: 4)"
  else
    fail "$name: the ring crosses nodes $crossings times (want 2), or the halo checks failed"
    cat "$out" >&2
  fi
}
# run NAME [ENV=VALUE...] -- PROGRAM ARGS: 4 ranks, then check.
run() {
  local name=$1; shift
  if launch 4 "$@" >"$work/$name.out" 2>"$work/$name.err"; then
    check "$name" "$work/$name.out"
  else
    fail "$name: exit $?"
    cat "$work/$name.out" "$work/$name.err" >&2
  fi
}
# build NAME COMMAND...: compile, or fail with the compiler's words.
build() {
  local name=$1; shift
  "$@" >"$work/$name.build" 2>&1 || { fail "$name: build failed: $*"; cat "$work/$name.build" >&2; return 1; }
}

# C with pkg-config. The rpath is the program's business, not the .pc's.
if build c "$cc" -Wall -Werror "$repo/examples/c/halo.c" $(pkg-config --cflags --libs rankshape) \
  -Wl,-rpath,"$libdir" -o "$work/halo_c"; then
  run c -- "$work/halo_c" 1 4 "$costs"
  # A bad pattern: the C API's message names it, once, and the exit is 1.
  bad=$work/halo_c_bad.c
  sed 's/"stencil:periodic"/"stencil:bogus"/' "$repo/examples/c/halo.c" >"$bad"
  if build c-bad "$cc" "$bad" $(pkg-config --cflags --libs rankshape) -Wl,-rpath,"$libdir" -o "$work/halo_c_bad"; then
    if launch 4 -- "$work/halo_c_bad" 1 4 "$costs" >"$work/bad.out" 2>"$work/bad.err"; then
      fail "bad pattern: the program succeeded"
    elif [ "$(grep -c "halo: .*unknown option 'bogus'" "$work/bad.err")" -eq 1 ]; then
      echo "ok ($mpi): bad pattern: one message naming it, non-zero exit"
    else
      fail "bad pattern: not one message naming 'bogus'"; cat "$work/bad.err" >&2
    fi
  fi
fi

# C++ with CMake and find_package; MPI comes from the package.
if build cmake-configure cmake -S "$repo/examples/cpp" -B "$work/cpp" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_FLAGS="-Wall -Werror" &&
  build cmake-build cmake --build "$work/cpp"; then
  run cpp -- "$work/cpp/halo" 1 4 "$costs"
  grep -q "^rankshape $version (built with $version)$" "$work/cpp.out" ||
    fail "cpp: rankshape::version() and RANKSHAPE_VERSION_STRING are not both $version"
fi

# Fortran, use mpi and use mpi_f08, with the module.
for f in halo_mpi halo_f08; do
  if build "$f" "$fc" -Wall -Werror "$repo/examples/fortran/$f.f90" \
    $(pkg-config --cflags --libs rankshape-fortran) -Wl,-rpath,"$libdir" -o "$work/$f"; then
    run "$f" -- "$work/$f" 1 4 "$costs"
    # Zeros in dims come back chosen (2x2 for 4 ranks).
    if launch 4 -- "$work/$f" 0 0 "$costs" >"$work/$f.zeros" 2>&1 && grep -q "^dims 2 2$" "$work/$f.zeros" &&
      grep -q "^checks ok" "$work/$f.zeros"; then
      echo "ok ($mpi): $f with dims 0 0: 2 2 chosen and returned, halo checks ok"
    else
      fail "$f with dims 0 0: not 2 2 returned"; cat "$work/$f.zeros" >&2
    fi
    grep -q "^rankshape $version$" "$work/$f.out" || fail "$f: rankshape_version() is not $version"
  fi
done

# A traffic graph from Fortran (use mpi_f08, the module's
# rankshape_relabel_graph_comm): heavy pairs {0,1} and {2,3} must land on
# one node each; the program checks its neighbours and a neighbour
# alltoall. Weights that do not match the partners: one message, exit 1.
if build graph_f08 "$fc" -Wall -Werror "$repo/examples/fortran/graph_f08.f90" \
  $(pkg-config --cflags --libs rankshape-fortran) -Wl,-rpath,"$libdir" -o "$work/graph_f08"; then
  out=$work/graph_f08.out
  if launch 4 -- "$work/graph_f08" "$costs" >"$out" 2>"$work/graph_f08.err" &&
    grep -q "^checks ok" "$out" &&
    awk '$1 == "vertex" { world[$2] = $4; ++n }
      END { exit !(n == 4 && world[0] % 2 == world[1] % 2 && world[2] % 2 == world[3] % 2) }' "$out"; then
    echo "ok ($mpi): graph_f08: heavy pairs on one node each, neighbours as declared"
  else
    fail "graph_f08: heavy pairs split across nodes, or its checks failed"
    cat "$out" "$work/graph_f08.err" >&2
  fi
  bad=$work/graph_f08_bad.f90
  sed 's/weights=weights/weights=weights(1:1)/' "$repo/examples/fortran/graph_f08.f90" >"$bad"
  if build graph_f08-bad "$fc" "$bad" $(pkg-config --cflags --libs rankshape-fortran) \
    -Wl,-rpath,"$libdir" -o "$work/graph_f08_bad"; then
    if launch 4 -- "$work/graph_f08_bad" "$costs" >"$work/graph_bad.out" 2>"$work/graph_bad.err"; then
      fail "graph_f08 with 1 weight for 2 partners: exit 0"
    elif [ "$(grep -c "graph_f08: .*1 weights for 2 partners" "$work/graph_bad.err")" -eq 1 ]; then
      echo "ok ($mpi): graph_f08 with 1 weight for 2 partners: one message naming it, non-zero exit"
    else
      fail "graph_f08 with 1 weight for 2 partners: not one message naming it"
      cat "$work/graph_bad.err" >&2
    fi
  fi
fi

# Unmodified programs, the drop-in preloaded.
preload=$prefix/lib/librankshape_cart.so
if build stencil_c "$cc" "$repo/tests/dropin/stencil_program.c" -o "$work/stencil_c"; then
  # stencil_program.c prints "world W cart C coords X Y".
  run preload-c LD_PRELOAD="$preload" RANKSHAPE_COSTS="$costs" -- "$work/stencil_c" 1 4 1 1
fi
for v in mpi f08; do
  f=stencil_program_$v flags=(-cpp)
  [ $v = mpi ] || flags+=(-DF08)
  if build "$f" "$fc" -Wall "${flags[@]}" "$repo/tests/install/stencil_program.F90" -o "$work/$f"; then
    run "preload-$f" LD_PRELOAD="$preload" RANKSHAPE_COSTS="$costs" -- "$work/$f" 1 4
    # Without the drop-in MPI keeps the job's order: proof the preload did it.
    if launch 4 -- "$work/$f" 1 4 >"$work/$f.plain" 2>&1 && grep -q "^checks ok" "$work/$f.plain" &&
      [ "$(grep -c '^world ' "$work/$f.plain")" -eq 4 ] &&
      [ "$(awk '$1 == "world" && $2 != $4' "$work/$f.plain" | wc -l)" -eq 0 ]; then
      echo "ok ($mpi): $f without the drop-in: cart rank = world rank"
    else
      fail "$f without the drop-in"; cat "$work/$f.plain" >&2
    fi
  fi
done

# The graph drop-ins from Fortran: world ranks {0,2} and {1,3} share
# nodes, so vertices {0,1} and {2,3} (the heavy pairs) must each get two
# world ranks of one parity; without the drop-in MPI keeps the job's order.
for v in mpi f08; do
  f=graph_program_$v flags=(-cpp)
  [ $v = mpi ] || flags+=(-DF08)
  build "$f" "$fc" -Wall "${flags[@]}" "$repo/tests/install/graph_program.F90" -o "$work/$f" ||
    continue
  if launch 4 LD_PRELOAD="$prefix/lib/librankshape_graph.so" RANKSHAPE_COSTS="$costs" -- \
    "$work/$f" >"$work/$f.out" 2>&1 && grep -q "^checks ok" "$work/$f.out" &&
    awk '$1 == "world" { parity[$4] = $2 % 2 }
      END { exit !(length(parity) == 4 && parity[0] == parity[1] && parity[2] == parity[3]) }' \
      "$work/$f.out"; then
    echo "ok ($mpi): $f preloaded: heavy pairs on one node, neighbours follow the vertex"
  else
    fail "$f preloaded"; cat "$work/$f.out" >&2
  fi
  if launch 4 -- "$work/$f" >"$work/$f.plain" 2>&1 && grep -q "^checks ok" "$work/$f.plain" &&
    [ "$(awk '$1 == "world" && $2 != $4' "$work/$f.plain" | wc -l)" -eq 0 ]; then
    echo "ok ($mpi): $f without the drop-in: graph rank = world rank"
  else
    fail "$f without the drop-in"; cat "$work/$f.plain" >&2
  fi
done

# The collectives drop-in from Fortran: the nine collectives (MPI_IN_PLACE
# too) give the right results, and with librankshape_coll.so preloaded
# (hierarchical forced, nodes of 2) all 10 calls went through it.
coll=$prefix/lib/librankshape_coll.so
if build probe "$cc" -c "$repo/tests/install/probe.c" -o "$work/probe.o"; then
  for v in mpi f08; do
    flags=(-cpp) use=mpi
    if [ $v = f08 ]; then flags+=(-DF08) use=mpi_f08; fi
    build "coll_$v" "$fc" -Wall "${flags[@]}" "$repo/tests/install/coll_program.F90" "$work/probe.o" \
      -o "$work/coll_$v" || continue
    if launch 4 LD_PRELOAD="$coll" RANKSHAPE_COLL=hierarchical RANKSHAPE_COLL_GROUPS=blocks:2 -- \
      "$work/coll_$v" >"$work/coll_$v.out" 2>&1 && grep -q "^checks ok" "$work/coll_$v.out" &&
      grep -q "^dispatched 10$" "$work/coll_$v.out"; then
      echo "ok ($mpi): Fortran (use $use) collectives preloaded: results right, 10 of 10 calls through the drop-in"
    else
      fail "Fortran (use $use) collectives preloaded"; cat "$work/coll_$v.out" >&2
    fi
  done
fi

# The traffic profiler from the prefix, preloaded into the Fortran stencil
# program (use mpi_f08) on a periodic 1x4 grid: each rank's two
# MPI_Sendrecv of one integer along the ring (those along the dimension of
# 1 go to itself), the MPI_Gather to 0 and the MPI_Allreduce (recursive
# doubling): 76 bytes in 19 messages between 12 ordered pairs.
if [ -x "$work/stencil_program_f08" ]; then
  if launch 4 LD_PRELOAD="$prefix/lib/librankshape_profile.so" \
    RANKSHAPE_PROFILE_OUT="$work/f08.traffic" -- "$work/stencil_program_f08" 1 4 \
    >"$work/profile.out" 2>&1 &&
    grep -q "rankshape profile: 76 bytes in 19 messages between 12 ordered pairs of 4 ranks" \
      "$work/profile.out" && grep -q "^ranks 4$" "$work/f08.traffic"; then
    echo "ok ($mpi): the traffic profiler preloaded into a Fortran (use mpi_f08) program"
  else
    fail "the traffic profiler preloaded into a Fortran (use mpi_f08) program"
    cat "$work/profile.out" >&2
  fi
fi

# Versions: the tools, the library and the header agree.
for t in relabel evaluate synth; do
  [ "$("$prefix/bin/$t" --version 2>&1)" = "$t (rankshape $version)" ] ||
    fail "$t --version: '$("$prefix/bin/$t" --version 2>&1)'"
done
[ "$(pkg-config --modversion rankshape)" = "$version" ] || fail "pkg-config --modversion"
grep -q "^rankshape $version$" "$work/c.out" || fail "the C example's rankshape_version() is not $version"

[ -x "$prefix/bin/measure" ] && [ -x "$prefix/bin/coll_tune" ] || fail "the MPI tools are not installed"

if [ "$failures" -gt 0 ]; then
  echo "outsider_test ($mpi): $failures failure(s)" >&2
  exit 1
fi
echo "outsider_test ($mpi): all passed"
