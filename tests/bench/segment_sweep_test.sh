#!/bin/bash
# bench/segment_sweep.sh end to end on a small simulated cluster
# (lvl2-node16-core4: 64 ranks in blocks, bcast of 256 KiB, two levels at
# two segment sizes): every point ran the table's configuration, the
# segment changes the simulated time, the tables hold every point with one
# best per row, and bad arguments or a failed run exit non-zero with a
# message and write nothing.
#   segment_sweep_test.sh LAUNCHER SEGMENT_SWEEP COLL_LATENCY
set -u
launcher=$1 sweep=$2 coll_latency=$3
run_mpi=unused
# $dir, $python, fail.
source tests/bench/bench_test_lib.sh

# bad_args WHAT EXPECTED ARGS...: the script exits 2 with EXPECTED said and
# no output folder.
bad_args() {
  local what=$1 expected=$2 status=0
  shift 2
  "$sweep" --binary "$coll_latency" --out "$dir/bad" "$@" >"$dir/bad.log" 2>&1 || status=$?
  if [ "$status" -ne 2 ]; then
    fail "$what: exit $status, expected 2"
    cat "$dir/bad.log" >&2
  elif ! grep -q -- "$expected" "$dir/bad.log"; then
    fail "$what: no message '$expected'"
    cat "$dir/bad.log" >&2
  elif [ -e "$dir/bad" ]; then
    fail "$what: wrote $dir/bad"
  else
    echo "ok: $what"
  fi
}
bad_args "collective" "expected bcast or reduce" --collective allreduce
bad_args "segment 0" "'0' is not a positive number" --segments 65536,0
bad_args "platform" "no data/platforms/nosuch.xml" --platform nosuch
bad_args "argument" "unknown argument '--size'" --size 8
bad_args "binary" "is not an executable" --platform lvl2-node16-core4 --binary "$dir/none"

if [ "$launcher" != smpi ]; then
  echo "SKIP: the sweep itself simulates a cluster (--config=smpi)"
  [ "$failures" -eq 0 ] || exit 1
  exit 0
fi

small=(--platform lvl2-node16-core4 --collective bcast --bytes 262144 --jobs 2)
# A run that fails (no SMPI program) leaves nothing behind.
status=0
"$sweep" "${small[@]}" --binary /bin/false --levels native,binary --segments 65536 \
  --out "$dir/failed" >"$dir/failed.log" 2>&1 || status=$?
if [ "$status" -eq 0 ] || ! grep -q "a run failed; nothing written" "$dir/failed.log" ||
  [ -e "$dir/failed" ]; then
  fail "a failed run: exit $status, or no message, or $dir/failed written"
  cat "$dir/failed.log" >&2
else
  echo "ok: a failed run writes nothing"
fi

if timeout 600 "$sweep" "${small[@]}" --binary "$coll_latency" \
  --levels "native,binary chain,binary" --segments 16384,65536 --out "$dir/sweep" \
  >"$dir/sweep.log" 2>&1; then
  if "$python" - "$dir/sweep" <<'PY'
import csv, os, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(out, "segment_sweep.csv"))))
points = {(r["levels"], int(r["segment_bytes"])): float(r["us"]) for r in rows}
levels, segments = ["native,binary", "chain,binary"], [16384, 65536]
assert sorted(points) == sorted((l, s) for l in levels for s in segments), points
assert all(r["collective"] == "bcast" and r["bytes"] == "262144" for r in rows), rows
assert all(t > 0 for t in points.values()), points
# The table's segment is the one that ran: 16 segments and 4 differ.
for l in levels:
    assert points[l, 16384] != points[l, 65536], (l, points)
for l in levels:
    for s in segments:
        run = next(csv.DictReader(open(os.path.join(
            out, "runs", "%s-%d.csv" % (l.replace(",", "-"), s)))))
        assert run["choice"] == "hierarchical levels=%s segment=%d" % (l, s), run
md = open(os.path.join(out, "segment_sweep.md")).read()
assert "| 16 KiB | 64 KiB |" in md, md
for l in levels:
    line = next(x for x in md.splitlines() if x.startswith("| `%s` |" % l))
    assert line.count("**") == 2, line
    best = min(points[l, s] for s in segments)
    assert "**%.1f**" % best in line, (line, best)
print("sweep:", points)
PY
  then echo "ok: the sweep's points and tables"
  else fail "the sweep's output"; fi
else
  fail "the sweep (64 ranks) failed"
  tail -n 30 "$dir/sweep.log" >&2
fi
[ "$failures" -eq 0 ] || exit 1
