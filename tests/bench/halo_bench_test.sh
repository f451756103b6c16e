#!/bin/bash
# The halo-exchange mini-app end to end under the configured launcher, at
# 4 ranks: every labelling and size gives a row with a positive time and
# the number of messages the stencil implies (2x2 periodic: every rank
# sends 4, both neighbours along each dimension being the same rank; 2x2
# without periods: 2), a labelling file is read, and bad arguments fail
# with a message. Also the benchmark script's own tests (stencil_bench_test.py).
#   halo_bench_test.sh LAUNCHER RUN_MPI HALO_BENCH STENCIL_BENCH_TEST
set -u
launcher=$1 run_mpi=$2 halo=$3 bench_test=$4
# $dir, $python, fail, check_bad.
source tests/bench/bench_test_lib.sh
tool=$halo

"$python" "$bench_test" >"$dir/py.log" 2>&1 || { cat "$dir/py.log"; fail "stencil_bench_test.py"; }

printf '# reversed\n3\n2\n1\n0\n' >"$dir/reversed.perm"
for case in "stencil:periodic 16" "stencil 8"; do
  read -r pattern messages <<<"$case"
  out=$dir/${pattern//:/_}.csv
  if "$run_mpi" "$launcher" 4 "$halo" --grid 2x2 --pattern "$pattern" --labelling identity \
    --labelling "reversed=$dir/reversed.perm" --bytes 8,4096 --reps 2 --out "$out" \
    >"$dir/run.log" 2>&1; then
    if "$python" - "$out" "$messages" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [(r["labelling"], r["bytes"]) for r in rows] == [
    ("identity", "8"), ("identity", "4096"), ("reversed", "8"), ("reversed", "4096")], rows
for r in rows:
    assert float(r["seconds"]) > 0, r
    assert int(r["messages"]) == int(sys.argv[2]), r
PY
    then
      echo "ok: $pattern: 2 labellings x 2 sizes, $messages messages a step"
    else
      fail "$pattern: the CSV"
      cat "$out" >&2
    fi
  else
    fail "$pattern: halo_bench failed"
    cat "$dir/run.log" >&2
  fi
done

check_bad "grid of another size" "grid 2x2 has 4 positions, the job 2 ranks" \
  --grid 2x2 --labelling identity
check_bad "fibres as the pattern" "--pattern must be a stencil" \
  --grid 2 --pattern fibres --labelling identity
check_bad "a labelling without a file" "NAME=FILE or identity" --grid 2 --labelling mine
check_bad "a missing labelling file" "no/such.perm" --grid 2 --labelling "x=$dir/no/such.perm"
exit $((failures > 0))
