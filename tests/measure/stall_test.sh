#!/bin/bash
# A partner that never answers must end the measurement with a message
# naming the ranks, not hang: rank 1 of silent_partner never answers.
#   stall_test.sh LAUNCHER RUN_MPI SILENT_PARTNER
set -u
launcher=$1 run_mpi=$2 binary=$3
start=$(date +%s)
RANKSHAPE_MPI_TEST_TIMEOUT=60 "$run_mpi" "$launcher" 2 "$binary" >"$TEST_TMPDIR/log" 2>&1
status=$?
elapsed=$(($(date +%s) - start))
cat "$TEST_TMPDIR/log"
if [ "$status" -eq 0 ]; then
  echo "FAIL: the run ended well although rank 1 never answered" >&2
  exit 1
fi
if [ "$launcher" = smpi ]; then
  pattern="DEADLOCK"  # the simulator detects it; no watchdog thread there
else
  pattern="rank 0: waiting for rank 1 "
fi
if ! grep -q "$pattern" "$TEST_TMPDIR/log"; then
  echo "FAIL: no message naming the ranks ('$pattern')" >&2
  exit 1
fi
echo "ok: ended with status $status after ${elapsed} s, naming the ranks"
