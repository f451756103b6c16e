#!/bin/bash
# The traffic replay end to end under the configured launcher, at 4 ranks:
# every labelling gives a row with a positive time, the pairs of the
# traffic and the bytes one step sends (a path 0-1-2-3 weighing 1000, 500
# and 250 bytes, scaled to at most 1000: 2 * 1750 both ways); bad arguments
# fail with a message. Also graph_bench.py's own tests.
#   traffic_replay_test.sh LAUNCHER RUN_MPI TRAFFIC_REPLAY GRAPH_BENCH_TEST
set -u
launcher=$1 run_mpi=$2 replay=$3 bench_test=$4
# $dir, $python, fail, check_bad.
source tests/bench/bench_test_lib.sh
tool=$replay

"$python" "$bench_test" >"$dir/py.log" 2>&1 || { cat "$dir/py.log"; fail "graph_bench_test.py"; }

printf 'rankshape-traffic 1\nranks 4\n0 1 1000 0\n1 2 500 0\n3 2 250 0\n' >"$dir/path.traffic"
printf '# reversed\n3\n2\n1\n0\n' >"$dir/reversed.perm"
if "$run_mpi" "$launcher" 4 "$replay" --traffic "$dir/path.traffic" --labelling identity \
  --labelling "reversed=$dir/reversed.perm" --bytes-per-message 0 --max-bytes 1000 --reps 2 \
  --out "$dir/replay.csv" >"$dir/run.log" 2>&1; then
  if "$python" - "$dir/replay.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["labelling"] for r in rows] == ["identity", "reversed"], rows
for r in rows:
    assert float(r["seconds"]) > 0, r
    assert int(r["pairs"]) == 3 and int(r["bytes"]) == 3500, r
PY
  then
    echo "ok: 2 labellings, 3 pairs, 3500 bytes a step"
  else
    fail "the CSV"
    cat "$dir/replay.csv" >&2
  fi
else
  fail "traffic_replay failed"
  cat "$dir/run.log" >&2
fi

check_bad "traffic of another job size" "path.traffic" --traffic "$dir/path.traffic" \
  --labelling identity
printf 'rankshape-traffic 1\nranks 2\n0 1 8 1\n' >"$dir/pair.traffic"
check_bad "a labelling without a file" "NAME=FILE or identity" --traffic "$dir/pair.traffic" \
  --labelling mine
check_bad "a missing traffic file" "no/such.traffic" --traffic "$dir/no/such.traffic" \
  --labelling identity
exit $((failures > 0))
