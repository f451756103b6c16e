#!/bin/bash
# The MPI test harness must not be able to pass a broken test:
#  - a failure on one rank fails the run, and rank 0 names that rank;
#  - a hang ends, non-zero, with a TIMEOUT message naming the test.
#   harness_test.sh LAUNCHER RUNNER FAILING_BIN HANGING_BIN
set -u
launcher=$1 runner=$2 failing=$3 hanging=$4
status=0

expect() {  # expect DESCRIPTION EXIT_CODE OUTPUT_FILE PATTERN
  if [ "$2" -eq 0 ]; then
    echo "FAIL: $1: exited 0" >&2
    status=1
  elif ! grep -q -- "$4" "$3"; then
    echo "FAIL: $1: output lacks '$4':" >&2
    cat "$3" >&2
    status=1
  else
    echo "ok: $1"
  fi
}

out=$TEST_TMPDIR/out.txt
for np in 1 3; do
  "$runner" "$launcher" "$np" "$failing" >"$out" 2>&1
  code=$?
  if [ "$np" -eq 1 ]; then rank=0; else rank=1; fi
  expect "failure on rank $rank of $np" "$code" "$out" "FailsOnlyOnRankOne failed on rank(s) $rank of $np"
done

# SMPI detects the deadlock itself (every actor blocked); real MPI needs the
# watchdog of the test main.
RANKSHAPE_MPI_TEST_TIMEOUT=3 "$runner" "$launcher" 2 "$hanging" >"$out" 2>&1
code=$?
if [ "$launcher" = smpi ]; then
  expect "hang under smpi" "$code" "$out" "DEADLOCK: hangs with 2 rank(s)"
else
  expect "hang on 2 ranks" "$code" "$out" "TIMEOUT: test HarnessSelfTest.EveryRankWaitsForever"
fi
exit $status
