#!/bin/bash
# measure end to end under the configured MPI launcher: every mode writes
# costs, placement and summary that relabel takes unchanged; bad options
# fail with a message and a non-zero status, leaving no files. Four ranks
# on two cores measure noisily: one pass of measuring suspects again
# (--retries 1) instead of five with waits of 0.25 s to 4 s, 7.75 s in all.
#   measure_cli_test.sh LAUNCHER RUN_MPI MEASURE RELABEL
set -u
launcher=$1 run_mpi=$2 measure=$3 relabel=$4
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
for mode in dense hierarchical model; do
  out=$TEST_TMPDIR/$mode
  if ! "$run_mpi" "$launcher" 4 "$measure" --out "$out" --mode "$mode" --sizes 8,2048 --reps 3 \
    --retries 1 >"$TEST_TMPDIR/log" 2>&1; then
    fail "measure --mode $mode failed"
    cat "$TEST_TMPDIR/log" >&2
    continue
  fi
  for f in costs.txt placement.txt summary.json; do
    [ -s "$out/$f" ] || fail "$mode: $f missing"
  done
  grep -q "\"mode\": \"$mode\"" "$out/summary.json" || fail "$mode: summary lacks the mode"
  if "$relabel" --costs "$out/costs.txt" --placement "$out/placement.txt" --grid 2x2 \
    --perm "$out/app.perm" --rankfile "$out/app.rankfile" --quiet; then
    [ "$(grep -c '^rank ' "$out/app.rankfile")" -eq 4 ] || fail "$mode: rankfile lines"
    echo "ok: $mode"
  else
    fail "relabel refused measure's $mode output"
  fi
done
if "$run_mpi" "$launcher" 4 "$measure" --out "$TEST_TMPDIR/bsp" --sizes 8,2048 --reps 3 \
  --retries 1 --sweeps 2 --bsp --grid 2x2 >"$TEST_TMPDIR/log" 2>&1 &&
  grep -q '"worst_g_seconds_per_word"' "$TEST_TMPDIR/bsp/summary.json"; then
  echo "ok: BSP r, g, l for the job and its fibres"
else
  fail "measure --bsp --grid 2x2"
  cat "$TEST_TMPDIR/log" >&2
fi
if "$run_mpi" "$launcher" 2 "$measure" --out "$TEST_TMPDIR/bad" --sizes 64,64 \
  >"$TEST_TMPDIR/log" 2>&1; then
  fail "one message size was accepted"
elif ! grep -q "at least two different message sizes" "$TEST_TMPDIR/log"; then
  fail "no clear message for bad sizes"
  cat "$TEST_TMPDIR/log" >&2
else
  echo "ok: bad sizes refused"
fi
[ -e "$TEST_TMPDIR/bad/costs.txt" ] && fail "a failed run left a cost file"
if "$run_mpi" "$launcher" 2 "$measure" --out "$TEST_TMPDIR/bad2" --mode fancy \
  >"$TEST_TMPDIR/log" 2>&1; then
  fail "unknown mode accepted"
else
  echo "ok: unknown mode refused"
fi
exit $((failures > 0))
