#!/bin/bash
# coll_tune and coll_latency end to end under the configured launcher: the
# tuning table and report are written and well formed, a three-level
# (--rack-nodes) run merges its entries into the same table, coll_latency's
# dispatched calls use the table's winners, it times relabel_comm()'s
# communicator with --relabel, and bad arguments fail with a message and
# leave nothing behind.
#   coll_tools_test.sh LAUNCHER RUN_MPI COLL_TUNE COLL_LATENCY PLATFORM
#       COLL_SELECTORS_PY COLL_SELECTORS_TEST_PY
# Also bench/coll_selectors.py on coll_latency's rows, with PLATFORM (a
# SimGrid cluster) for its link bound, and that script's own tests.
set -u
launcher=$1 run_mpi=$2 tune=$3 latency=$4 platform=$5 selectors=$6 selectors_test=$7
dir=$TEST_TMPDIR
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
run() {  # NP LOG BINARY ARGS...
  local np=$1 log=$2
  shift 2
  "$run_mpi" "$launcher" "$np" "$@" >"$log" 2>&1
}

# Two pretended nodes of two ranks.
run 4 "$dir/tune.log" "$tune" --groups blocks:2 --collectives allreduce,bcast,gather \
  --sizes 8,65536 --reps 2 --warmup 1 --candidates 2 --out "$dir/table.json" \
  --report "$dir/report.csv" || { cat "$dir/tune.log"; fail "coll_tune"; }
python3 - "$dir/table.json" "$dir/report.csv" <<'PY' || fail "table or report malformed"
import csv, json, sys
table = json.load(open(sys.argv[1]))
assert table["format"] == "rankshape-coll-table", table.get("format")
[model] = table["models"]
assert model["sizes"] == [2, 2], model["sizes"]
for key in ("alpha", "beta", "beta_loaded"):
    assert len(model[key]) == 2 and all(x >= 0 for x in model[key]), (key, model[key])
keys = {(e["collective"], e["bytes"]) for e in table["entries"]}
assert keys == {(c, b) for c in ("allreduce", "bcast", "gather") for b in (8, 65536)}, keys
rows = list(csv.DictReader(open(sys.argv[2])))
for c in ("allreduce", "bcast", "gather"):
    for b in ("8", "65536"):
        measured = [r for r in rows if r["collective"] == c and r["bytes"] == b]
        # native, plain hierarchical, and the model's best (up to 2 more).
        configs = [r["config"] for r in measured]
        assert configs[:2] == ["native", "hierarchical"], (c, b, configs)
        assert all(float(r["measured_s"]) > 0 and float(r["predicted_s"]) > 0
                   for r in measured), measured
        # The table's choice is a fastest one; at 9 printed digits two
        # candidates can tie (whole nanoseconds), and then either may win.
        fastest = min(float(r["measured_s"]) for r in measured)
        winners = [r["config"] for r in measured if float(r["measured_s"]) == fastest]
        [entry] = [e for e in table["entries"] if e["collective"] == c and e["bytes"] == int(b)]
        assert entry["config"] in winners, (c, b, entry["config"], measured)
# allreduce also measures its own reduce then bcast, and at 65536 B (a block
# of 16 KiB per rank) its reduce_scatter_block then allgather, their parts
# tuned on demand: measured once, in the report, not in the table.
compositions = ("reduce+bcast(", "reduce_scatter_block+allgather(")
for b, want in (("8", {compositions[0]}), ("65536", set(compositions))):
    got = {pre for r in rows if r["collective"] == "allreduce" and r["bytes"] == b
           for pre in compositions if r["config"].startswith(pre)}
    assert got == want, (b, got)
measured_keys = [(r["collective"], r["bytes"], r["config"]) for r in rows]
assert len(measured_keys) == len(set(measured_keys)), "a candidate measured twice"
for c, b in (("reduce", "65536"), ("reduce_scatter_block", "16384"), ("allgather", "16384")):
    assert any(r["collective"] == c and r["bytes"] == b for r in rows), (c, b)
bcast = {e["bytes"]: e["config"] for e in table["entries"] if e["collective"] == "bcast"}
for r in rows:
    if r["collective"] == "allreduce" and r["config"].startswith(compositions[0]):
        first, second = r["config"][len(compositions[0]):-1].split(";")
        assert second == bcast[int(r["bytes"])], (r["config"], bcast)
PY

# Racks of two nodes on top (8 ranks: 4 nodes of 2, 2 racks), merged.
run 8 "$dir/racks.log" "$tune" --groups blocks:2 --rack-nodes 2 --collectives allreduce \
  --sizes 65536 --reps 2 --warmup 1 --candidates 2 --out "$dir/table.json" --merge \
  --report "$dir/report-racks.csv" || { cat "$dir/racks.log"; fail "coll_tune --rack-nodes"; }
python3 - "$dir/table.json" <<'PY' || fail "merged table"
import json, sys
table = json.load(open(sys.argv[1]))
sizes = sorted(m["sizes"] for m in table["models"])
assert sizes == [[2, 2], [2, 2, 2]], sizes
entries = {(e["collective"], e["bytes"], tuple(e["sizes"])) for e in table["entries"]}
assert ("allreduce", 65536, (2, 2, 2)) in entries and ("bcast", 8, (2, 2)) in entries, entries
PY

# coll_latency with the table: the dispatched choice is the table's winner.
RANKSHAPE_COLL_TABLE=$dir/table.json RANKSHAPE_COLL_GROUPS=blocks:2 \
  run 4 "$dir/latency.log" "$latency" --collectives allreduce,bcast --sizes 8,65536 --reps 2 \
  --min-reps 2 --warmup 1 --out "$dir/latency.csv" ||
  { cat "$dir/latency.log"; fail "coll_latency"; }
python3 - "$dir/table.json" "$dir/latency.csv" <<'PY' || fail "latency rows or choices"
import csv, json, sys
table = json.load(open(sys.argv[1]))
winners = {(e["collective"], e["bytes"]): e["config"] for e in table["entries"]
           if e["sizes"] == [2, 2]}
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == 2 * 2 * 2, rows  # collectives x sizes x modes
for r in rows:
    assert float(r["seconds"]) > 0 and float(r["first_seconds"]) > 0, r
    if r["mode"] == "rankshape":
        assert r["choice"] == winners[(r["collective"], int(r["bytes"]))], r
        assert float(r["predicted_seconds"]) > 0, r  # the model's price of the choice
PY

# coll_latency on relabel_comm()'s communicator (--relabel): both modes
# timed, and the labelling printed is a permutation of the ranks; at an odd
# prime count (3) and on a 2-D grid (4), with one rank's grid as the edge.
for case in 1:1 3:3 4:2x2; do
  np=${case%%:*} grid=${case#*:}
  RANKSHAPE_COLL_GROUPS=blocks:2 run "$np" "$dir/relabel-$np.log" "$latency" --relabel "$grid" \
    --pattern stencil --collectives allreduce,barrier --sizes 8 --reps 2 --min-reps 2 --warmup 1 \
    --out "$dir/relabel-$np.csv" || { cat "$dir/relabel-$np.log"; fail "coll_latency --relabel $grid"; }
  python3 - "$np" "$dir/relabel-$np.log" "$dir/relabel-$np.csv" <<'PY' || fail "relabelled rows ($np)"
import csv, re, sys
np = int(sys.argv[1])
[line] = [l for l in open(sys.argv[2]) if l.startswith("# relabelled ")]
old = [int(x) for x in re.search(r"new rank r is old rank:(.*)$", line).group(1).split()]
assert sorted(old) == list(range(np)), line
rows = list(csv.DictReader(open(sys.argv[3])))
assert sorted((r["collective"], r["mode"]) for r in rows) == sorted(
    (c, m) for c in ("allreduce", "barrier") for m in ("native", "rankshape")), rows
assert all(float(r["seconds"]) > 0 for r in rows), rows
PY
done
if run 3 "$dir/relabel-bad.log" "$latency" --relabel 2x2 --out "$dir/relabel-bad.csv"; then
  fail "--relabel 2x2 accepted on 3 ranks"
fi
grep -q "2x2 has 4 positions" "$dir/relabel-bad.log" || { cat "$dir/relabel-bad.log"; fail "no message naming the grid"; }
[ -e "$dir/relabel-bad.csv" ] && fail "a CSV was written for a grid that does not fit"

# Under SMPI with its ompi selector (the benchmarks' fallback) and nodes of
# one rank: 5 ranks dealt over the platform's 4 hosts leave 3 of them one.
# SimGrid 3.32's ompi reduce aborts on a one-rank communicator, so
# rankshape's levels must not call it there (run_mpi.sh's selection has a
# binomial reduce, which does not abort).
if [ "$launcher" = smpi ]; then
  smpirun -np 5 -platform "$platform" --cfg=smpi/host-speed:1Gf \
    --cfg=smpi/simulate-computation:no --cfg=smpi/coll-selector:ompi --log=root.thresh:warning \
    "$latency" --modes rankshape --collectives reduce,allreduce,reduce_scatter_block \
    --sizes 8,4096 --reps 2 --min-reps 2 --warmup 1 --out "$dir/ompi-singletons.csv" \
    >"$dir/ompi-singletons.log" 2>&1 && [ -s "$dir/ompi-singletons.csv" ] ||
    { tail -n 20 "$dir/ompi-singletons.log"; fail "one-rank nodes under SMPI's ompi selector"; }
fi

# bench/coll_selectors.py on this run's rows (native as one selector's
# column, rankshape's), and its own tests.
mkdir -p "$dir/selectors"
cp "$platform" "$dir/selectors/platform.xml"
echo 4 >"$dir/selectors/ranks"
python3 - "$dir/latency.csv" "$dir/selectors" <<'PY' || fail "splitting latency.csv"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for mode, name in (("native", "ompi"), ("rankshape", "rankshape")):
    with open(f"{sys.argv[2]}/{name}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=rows[0].keys())
        w.writeheader()
        w.writerows(r for r in rows if r["mode"] == mode)
PY
echo "# test" >"$dir/header.md"
if python3 "$selectors" "$dir/sel.csv" "$dir/sel.md" "$dir/header.md" "ci=$dir/selectors" \
  >"$dir/sel.log" 2>&1; then
  # A row per (collective, size), each with a bound: ci-cluster is a cluster.
  [ "$(grep -c '^ci,' "$dir/sel.csv")" -eq 4 ] || { cat "$dir/sel.csv"; fail "selector table rows"; }
  grep -q "^| ci | 4 |" "$dir/sel.md" || { cat "$dir/sel.md"; fail "selector summary"; }
else
  cat "$dir/sel.log"
  fail "coll_selectors.py"
fi
python3 "$selectors_test" >"$dir/sel_test.log" 2>&1 || { cat "$dir/sel_test.log"; fail "coll_selectors_test.py"; }

# Bad arguments: a message, a non-zero exit, no output file.
if run 2 "$dir/bad.log" "$tune" --rack-nodes 0 --out "$dir/bad.json"; then
  fail "--rack-nodes 0 accepted"
fi
grep -q -- "--rack-nodes" "$dir/bad.log" || { cat "$dir/bad.log"; fail "no message naming --rack-nodes"; }
if run 2 "$dir/bad2.log" "$tune" --groups stripes:2 --out "$dir/bad.json"; then
  fail "--groups stripes:2 accepted"
fi
grep -q "stripes:2" "$dir/bad2.log" || { cat "$dir/bad2.log"; fail "no message naming the groups"; }
[ -e "$dir/bad.json" ] && fail "a table was written for bad arguments"

[ "$failures" -eq 0 ] && echo "PASS" || echo "$failures failure(s)"
[ "$failures" -eq 0 ]
