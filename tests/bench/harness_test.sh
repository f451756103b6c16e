#!/bin/bash
# The ordering comparison harness end to end under the configured launcher
# (Open MPI or MPICH on this machine, or an SMPI platform), small sizes:
# compare at 1, 3 and 4 ranks on 2- and 3-dim grids, then (under Open MPI,
# unsanitized: the plots do not depend on the launcher, and take seconds
# each) the plot step; the CSV, JSON and PNG files must be well formed and
# consistent, and bad arguments must fail with a message and leave nothing
# behind.
#   harness_test.sh LAUNCHER RUN_MPI COMPARE PLOT PLOT_TEST
set -u
launcher=$1 run_mpi=$2 compare=$3 plotter=$4 plot_test=$5
# $dir, $python, fail, check_bad.
source tests/bench/bench_test_lib.sh

plain_openmpi=0
[ "$launcher" = openmpi ] && [ -z "${RANKSHAPE_SANITIZER:-}" ] && plain_openmpi=1
# The plot step's own tests (synthetic inputs).
if [ "$plain_openmpi" -eq 1 ]; then
  "$python" "$plot_test" >"$dir/plot_test.log" 2>&1 || { cat "$dir/plot_test.log"; fail "harness_plot_test.py"; }
fi

quick=(--sizes 8,4096 --reps 2 --warmup 1 --matmul-n 48 --panel 8 --time-limit 0.2 --heatmaps)
# "links": 2 nodes of 2 cores from a cost file (10 between the nodes), the
# link-aware objective.
cat >"$dir/two-nodes.costs" <<'COSTS'
rankshape-structured 1
cores-per-node 2
nodes 2
ranks 4
core-costs
0 1
1 0
rack-costs
10
rank-locations block
COSTS
# "plot": the plot step runs on this case's results too.
cases=("1 0,0,0 - plot" "3 0,0 - plot" "4 2,2 links plot")
# Open MPI (not sanitized) runs two more; MPICH busy-polls and the
# sanitizers are slow, and the cases above reach every code path already.
if [ "$plain_openmpi" -eq 1 ]; then
  cases+=("4 0,0,0 -" "4 2,2 -")
fi
for case in "${cases[@]}"; do
  read -r np grid mode plot <<<"$case"
  [ "$mode" = - ] && mode=
  [ "$plain_openmpi" -eq 1 ] && [ "$plot" = plot ] || plot=
  out=$dir/np$np-${grid//,/x}${mode:+-$mode}
  mkdir -p "$out"
  extra=()
  [ "$mode" = links ] && extra=(--costs file --cost-file "$dir/two-nodes.costs" --objective sum-max+links)
  RANKSHAPE_COLL_GROUPS=blocks:2 "$run_mpi" "$launcher" "$np" "$compare" --out "$out" \
    --grid "$grid" --testbed "test-$launcher" "${quick[@]}" "${extra[@]}" >"$out/compare.log" 2>&1 ||
    { cat "$out/compare.log"; fail "compare at $np ranks, grid $grid"; continue; }
  if [ -n "$plot" ]; then
    "$python" "$plotter" "$out" >"$out/plot.log" 2>&1 ||
      { cat "$out/plot.log"; fail "harness_plot.py at $np ranks, grid $grid"; continue; }
  fi
  "$python" - "$out" "$np" "$grid" "$launcher" "$mode" "$plot" <<'PY' || fail "outputs at $np ranks, grid $grid $mode"
import csv, json, os, struct, sys
out, np_, grid, launcher, mode, plotted = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6] == "plot"
names = ["identity", "round-robin", "random", "node-aware", "kl", "hill-climb",
         "multilevel", "auto", "metis", "scotch", "treematch"]
orderings = list(csv.DictReader(open(f"{out}/orderings.csv")))
assert [o["ordering"] for o in orderings] == names, [o["ordering"] for o in orderings]
by_name = {o["ordering"]: o for o in orderings}
ok = [o for o in orderings if o["status"] == "ok"]
for o in ok:
    assert float(o["objective"]) >= 0 and float(o["relabel_seconds"]) >= 0, o
    assert o["time_limited"] in ("0", "1"), o
identity = by_name["identity"]
assert identity["status"] == "ok", identity
# A ratio to a zero objective (one rank: no fibre costs anything) is left empty.
if float(identity["objective"]) > 0:
    assert float(identity["objective_vs_identity"]) == 1, identity
else:
    assert identity["objective_vs_identity"] == "", identity
# Scotch runs in a forked child (killed at the time limit): it must work
# inside an MPI rank under every launcher, SMPI's simulator included.
scotch = by_name["scotch"]
assert scotch["status"] == "ok" and scotch["algorithm"].startswith("scotch("), scotch
# TreeMatch exists only in Open MPI; elsewhere it is skipped, with the reason.
tm = by_name["treematch"]["status"]
assert (tm == "ok") == (launcher == "openmpi"), tm
if tm != "ok":
    assert tm.startswith("skipped: ") and "Open MPI" in tm, tm
dims = [int(d) for d in grid.split(",")]
summary = json.load(open(f"{out}/summary.json"))
assert summary["ranks"] == np_, summary["ranks"]
shape = summary["grid"]
assert len(shape) == len(dims) and all(d in (0, s) for d, s in zip(dims, shape)), shape
product = 1
for s in shape:
    product *= s
assert product == np_, shape
kernels = list(csv.DictReader(open(f"{out}/kernels.csv")))
expected = set()
for k, q in enumerate(shape):
    if q > 1:
        expected |= {(kern, impl, str(k), b) for kern in ("allreduce", "bcast")
                     for impl in ("native", "rankshape") for b in ("8", "4096")}
if expected:  # every dimension in turn
    expected |= {(kern, impl, "-1", b) for kern in ("allreduce", "bcast")
                 for impl in ("native", "rankshape") for b in ("8", "4096")}
expected.add(("mm3d" if len(shape) == 3 else "summa", "rankshape", "-1", "48"))
for o in ok:
    got = {(r["kernel"], r["impl"], r["dim"], r["bytes"]) for r in kernels if r["ordering"] == o["ordering"]}
    assert got == expected, (o["ordering"], sorted(got ^ expected))
for r in kernels:
    assert float(r["seconds"]) > 0, r
    assert float(r["link_load"]) >= 0, r
    if r["ordering"] == "identity":
        assert float(r["speedup_vs_identity"]) == 1, r
# A step's link load is its dimensions' sum (6 digits written).
for r in kernels:
    if r["dim"] == "-1" and r["kernel"] in ("allreduce", "bcast"):
        dims_load = sum(float(d["link_load"]) for d in kernels
                        if d["ordering"] == r["ordering"] and d["kernel"] == r["kernel"]
                        and d["impl"] == r["impl"] and d["bytes"] == r["bytes"] and d["dim"] != "-1")
        assert abs(dims_load - float(r["link_load"])) <= 1e-5 * max(1.0, dims_load), r
for level in summary["link_levels"]:
    assert level["groups"] >= 2 and level["flow_cost"] >= 0, level
if mode == "links":
    # The nodes are a level; identity's dimension 0 crosses them (load 2 x
    # 1/2 per node, one message costs 10), and the objective counts it.
    assert summary["objective"] == "sum-max:pairs+links", summary["objective"]
    assert summary["link_levels"] == [{"groups": 2, "flow_cost": 10, "source": "known"}], summary["link_levels"]
    row = [r for r in kernels if r["ordering"] == "identity" and r["dim"] == "0"][0]
    assert float(row["link_load"]) == 10 and float(row["predicted"]) == 10, row
# The costs and every ordering, for offline scoring.
assert open(f"{out}/costs.txt").readline().startswith("rankshape-"), "costs.txt"
for o in ok:
    perm = [int(l) for l in open(f"{out}/labelling-{o['ordering']}.txt")
            if l.strip() and not l.startswith("#")]
    assert sorted(perm) == list(range(np_)), o["ordering"]
assert {(c["kernel"], c["impl"], str(c["dim"]), str(c["bytes"])) for c in summary["correlations"]} == expected
for c in summary["correlations"]:
    for rho in (c["spearman"], c["spearman_link_load"]):
        assert rho is None or -1 - 1e-9 <= rho <= 1 + 1e-9, c
    assert c["orderings"] == len(ok), c
def png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    w, h = struct.unpack(">II", data[16:24])
    assert w > 0 and h > 0, (path, w, h)
for o in ok:
    png(f"{out}/heatmap-{o['ordering']}.png")
if plotted:
    for name in ("time_per_ordering", "predicted_vs_measured", "speedup"):
        png(f"{out}/{name}.png")
    report = open(f"{out}/report.md").read()
    for name in names:
        assert name in report, name
PY
done

# Bad arguments: a message naming the problem, a non-zero status, no files.
bad=$dir/bad
mkdir -p "$bad"
check_bad() {  # WHAT EXPECTED ARGS...
  local what=$1 expected=$2
  shift 2
  if "$run_mpi" "$launcher" 2 "$compare" "$@" >"$bad/log" 2>&1; then
    fail "$what: succeeded"
  elif ! grep -q -- "$expected" "$bad/log"; then
    cat "$bad/log"
    fail "$what: no message with '$expected'"
  fi
  [ -z "$(ls -A "$bad" | grep -v '^log$')" ] || fail "$what: left files: $(ls "$bad")"
}
check_bad "unknown ordering" "--orderings" --out "$bad" --orderings identity,bogus
check_bad "grid of the wrong size" "grid" --out "$bad" --grid 3,0
check_bad "missing folder" "is not a directory" --out "$bad/missing"
check_bad "file costs without a file" "--cost-file" --out "$bad" --costs file
check_bad "objective total+links" "+links needs sum-max or thesis-max" --out "$bad" --objective total+links

[ "$failures" -eq 0 ] && echo "PASS" || { echo "$failures failure(s)"; exit 1; }
