#!/bin/bash
# The irregular-machine benchmark end to end on its two smallest instances
# (no VieM): the table has every ordering, auto beats the job's order and
# is no worse than any peer; the curve part on one instance; an unknown
# instance and bad budgets are refused. Also
# irregular_bench_test.py, the script's own tests.
#   irregular_bench_test.sh RELABEL EVALUATE SYNTH BENCH_TEST
set -u
# $dir, $python, fail.
source tests/bench/bench_test_lib.sh
mkdir -p "$dir/bin"
for tool in "$1" "$2" "$3"; do ln -sf "$PWD/$tool" "$dir/bin/"; done
bench_test=$4

"$python" "$bench_test" >"$dir/py.log" 2>&1 || { cat "$dir/py.log"; fail "irregular_bench_test.py"; }

if "$python" bench/irregular_bench.py --bin "$dir/bin" --instances uneven-63,torus-256 --budget 10 \
  --out "$dir/out" >"$dir/run.log" 2>&1; then
  if "$python" - "$dir/out/irregular.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for name in ("uneven-63", "torus-256"):
    got = {r["ordering"]: r for r in rows if r["instance"] == name}
    assert set(got) == {"identity", "natural", "metis", "scotch", "viem", "auto"}, got
    assert got["viem"]["objective"] == "", got["viem"]
    peers = [float(got[o]["objective"]) for o in ("identity", "natural", "metis", "scotch")]
    auto = float(got["auto"]["objective"])
    assert auto < peers[0] and auto <= min(peers), (name, auto, peers)
    assert float(got["auto"]["bound"]) <= auto, got["auto"]
PY
  then
    echo "ok: 2 instances, auto no worse than every peer"
  else
    fail "irregular.csv"
  fi
  grep -q "^| uneven-63 " "$dir/out/irregular.md" || fail "irregular.md has no uneven-63 row"
else
  cat "$dir/run.log"
  fail "irregular_bench.py"
fi

# The curve: a row per budget, each objective at or above auto's bound.
if "$python" bench/irregular_bench.py --bin "$dir/bin" --parts curve --instances uneven-63 \
  --curve-budgets 0,0.2 --out "$dir/curve" >"$dir/curve.log" 2>&1; then
  if "$python" - "$dir/curve/irregular_curve.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["budget"] for r in rows] == ["0", "0.2"], rows
for r in rows:
    assert r["instance"] == "uneven-63" and float(r["objective"]) >= float(r["bound"]) > 0, r
    assert float(r["gap"]) >= 1 and float(r["seconds"]) > 0, r
PY
  then
    echo "ok: the curve has both budgets"
  else
    fail "irregular_curve.csv"
  fi
  [ -s "$dir/curve/irregular_curve.png" ] || fail "no irregular_curve.png"
  grep -q "^| uneven-63: " "$dir/curve/irregular_curve.md" || fail "irregular_curve.md has no row"
else
  cat "$dir/curve.log"
  fail "irregular_bench.py --parts curve"
fi
if "$python" bench/irregular_bench.py --bin "$dir/bin" --parts curve --curve-budgets 1,x \
  --out "$dir/bad" >"$dir/bad.log" 2>&1; then
  fail "bad --curve-budgets accepted"
elif ! grep -q "curve-budgets takes seconds" "$dir/bad.log"; then
  fail "bad --curve-budgets: no message"
else
  echo "ok: bad --curve-budgets refused"
fi

if "$python" bench/irregular_bench.py --bin "$dir/bin" --instances nosuch --out "$dir/bad" \
  >"$dir/bad.log" 2>&1; then
  fail "unknown instance accepted"
elif ! grep -q "unknown instance(s) nosuch" "$dir/bad.log"; then
  fail "unknown instance: no message"
else
  echo "ok: unknown instance refused"
fi
[ "$failures" -eq 0 ]
