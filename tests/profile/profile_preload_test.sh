#!/bin/bash
# The profiler preloaded (librankshape_profile.so) into unmodified programs
# at 3 ranks: ring_program.c (MPI_Sendrecv and MPI_Allreduce from C) and
# ring_program.f90 (use mpi: MPI_Sendrecv, a persistent send started twice,
# MPI_Allreduce, MPI_Alltoallv with MPI_IN_PLACE and MPI_Ibcast from
# Fortran, built here with the MPI's mpif90). Each
# traffic file must be exactly what the programs send (the allreduce as
# recursive doubling: 0 -> 1, 1 <-> 2, 1 -> 0, 4 bytes each; Open MPI's own
# monitoring counts the same messages). Then an output path that cannot be
# written: a message naming it on stderr, no file, and the program's
# MPI_Finalize reports the error (exit 3).
#   profile_preload_test.sh LAUNCHER PROGRAM FORTRAN_SOURCE PRELOAD_SO
set -u
source tools/sanitizer_env.sh
launcher=$1 program=$2 fortran_source=$3 preload=$(realpath "$4")
case $launcher in
  openmpi) fc=mpif90.openmpi ;;
  mpich) fc=mpif90.mpich ;;
  *)
    # smpirun loads programs as shared objects: nothing can be preloaded
    # (profile_mpi_test covers the profiler linked in under SMPI).
    echo "SKIP: the preloaded profiler is tested under Open MPI and MPICH, not SMPI"
    exit 0
    ;;
esac
work=${TEST_TMPDIR:-$(mktemp -d)}
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# run OUT_FILE PROGRAM: 3 ranks, preloaded, the traffic to OUT_FILE.
run() {
  local vars=("LD_PRELOAD=$preload" "RANKSHAPE_PROFILE_OUT=$1") cmd v
  if [ "$launcher" = openmpi ]; then
    cmd=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 3
         --mca btl self,vader --mca btl_vader_single_copy_mechanism none)
    for v in "${vars[@]}"; do cmd+=(-x "$v"); done
  else
    cmd=(mpiexec.mpich)
    for v in "${vars[@]}"; do cmd+=(-genv "${v%%=*}" "${v#*=}"); done
    cmd+=(-n 3)
  fi
  timeout --kill-after=5 120 "${cmd[@]}" "$2" >"$work/out" 2>"$work/err"
}

# expect NAME FILE: FILE's pairs (comments aside) are the lines on stdin.
expect() {
  if ! diff <(grep -v '^#' "$2") - >"$work/diff"; then
    fail "$1: the traffic file differs from what the program sent:"
    cat "$work/diff" "$work/err" >&2
  fi
}

run "$work/c.traffic" "$program" || fail "C program: exit $? ($(cat "$work/err"))"
expect "C program" "$work/c.traffic" <<'TRAFFIC'
rankshape-traffic 1
ranks 3
0 1 304 4
1 0 4 1
1 2 604 4
2 0 900 3
2 1 4 1
TRAFFIC
grep -q "rankshape profile: 1816 bytes in 13 messages between 5 ordered pairs of 3 ranks" \
  "$work/err" || fail "C program: no summary on stderr: $(cat "$work/err")"

if ! command -v "$fc" >/dev/null; then
  fail "$fc is missing (tools/install-deps --tests installs gfortran and the MPIs)"
elif ! "$fc" -o "$work/ring_f" "$fortran_source" 2>"$work/err"; then
  fail "cannot build the Fortran program: $(cat "$work/err")"
else
  run "$work/f.traffic" "$work/ring_f" || fail "Fortran program: exit $? ($(cat "$work/err"))"
  expect "Fortran program" "$work/f.traffic" <<'TRAFFIC'
rankshape-traffic 1
ranks 3
0 1 188 8
0 2 24 2
1 0 12 2
1 2 292 7
2 0 408 6
2 1 12 2
TRAFFIC
fi

run "$work/missing/x.traffic" "$program"
status=$?
[ "$status" -ne 0 ] || fail "an unwritable output path: exit 0"
grep -q "rankshape profile: cannot write $work/missing/x.traffic" "$work/err" ||
  fail "an unwritable output path: no message naming it: $(cat "$work/err")"
[ ! -e "$work/missing" ] || fail "an unwritable output path: something was written"

[ "$failures" -eq 0 ] && echo "PASS: profile_preload_test ($launcher)"
exit $((failures > 0))
