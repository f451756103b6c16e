#!/bin/bash
# The command-line tools end to end: good input works, bad input gives a
# clear message and a non-zero exit, and nothing half-written is left.
#   cli_test.sh SYNTH EVALUATE RELABEL
set -u
synth=$1 evaluate=$2 relabel=$3
dir=$TEST_TMPDIR
failures=0

check() {  # check DESCRIPTION EXPECTED_EXIT PATTERN COMMAND...
  local what=$1 want=$2 pattern=$3
  shift 3
  "$@" >"$dir/stdout" 2>"$dir/stderr"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want" >&2
    cat "$dir/stderr" >&2
    failures=$((failures + 1))
  elif [ -n "$pattern" ] && ! grep -qF -- "$pattern" "$dir/stdout" "$dir/stderr"; then
    echo "FAIL: $what: output lacks '$pattern'" >&2
    cat "$dir/stdout" "$dir/stderr" >&2
    failures=$((failures + 1))
  else
    echo "ok: $what"
  fi
}

check "synth writes a scrambled machine" 0 "64 ranks" \
  "$synth" --racks 2 --nodes 2 --sockets 2 --cores 8 --order random --seed 5 \
  --costs "$dir/m.costs" --placement "$dir/m.placement" --planted "$dir/m.planted"
check "evaluate compares identity with the planted labelling" 0 "better than identity" \
  "$evaluate" --costs "$dir/m.costs" --grid 4x16 --perm "$dir/m.planted" --json "$dir/e.json"
check "the JSON report has both labellings" 0 '"name": "identity"' cat "$dir/e.json"
check "the JSON report names the objective" 0 '"objective": "sum-max:pairs"' cat "$dir/e.json"
check "synth writes a small placement" 0 "" \
  "$synth" --nodes 2 --cores 8 --costs "$dir/small.costs" --placement "$dir/small.placement"
check "synth writes dense costs" 0 "" \
  "$synth" --nodes 2 --cores 3 --format dense --costs "$dir/d.costs"
check "evaluate reads dense costs" 0 "identity: objective" \
  "$evaluate" --costs "$dir/d.costs" --grid 2x3
check "evaluate counts the link load with +links" 0 "link load" \
  "$evaluate" --costs "$dir/m.costs" --grid 4x16 --objective sum-max+links --json "$dir/l.json"
# The scrambled machine's identity sends across nodes: some load above 0.
if ! awk '/link load/ { if ($NF + 0 > 0) found = 1 } END { exit !found }' "$dir/stdout"; then
  echo "FAIL: no link load above 0 in the scrambled machine's evaluation" >&2
  cat "$dir/stdout" >&2
  failures=$((failures + 1))
fi
check "the JSON report has the link load" 0 '"link_load"' cat "$dir/l.json"
check "+links only with sum-max or thesis-max" 1 "+links needs sum-max or thesis-max" \
  "$evaluate" --costs "$dir/m.costs" --grid 4x16 --objective total+links
check "relabel minimises the link-aware objective" 0 "after: " \
  "$relabel" --costs "$dir/m.costs" --grid 4x16 --perm "$dir/l.perm" --objective sum-max+links

# Lower bounds (fibres): evaluate and relabel show them; on nodes that hold
# whole rows relabel reaches the bound, and says the answer is optimal.
check "evaluate gives a lower bound" 0 "lower bound: " \
  "$evaluate" --costs "$dir/m.costs" --grid 4x16 --json "$dir/b.json"
check "the JSON report has the bound" 0 '"lower_bound"' cat "$dir/b.json"
check "synth writes 4 scrambled nodes of 4" 0 "" \
  "$synth" --nodes 4 --cores 4 --order random --seed 3 --costs "$dir/n4.costs"
check "relabel reaches the bound and says so" 0 "reached: optimal" \
  "$relabel" --costs "$dir/n4.costs" --grid 4x4 --perm "$dir/n4.perm" --report "$dir/n4.json"
check "the report has the bound" 0 '"lower_bound"' cat "$dir/n4.json"
check "evaluate calls the relabelled order optimal" 0 "optimal" \
  "$evaluate" --costs "$dir/n4.costs" --grid 4x4 --perm "$dir/n4.perm"
# A stencil's bound: the busiest rank and the shared links. 2x2 blocks on
# the 4 nodes of a periodic 4x4 send 8 messages out each, which no set of 4
# positions beats: relabel reaches it.
check "evaluate gives a stencil's bound" 0 "busiest rank at least" \
  "$evaluate" --costs "$dir/n4.costs" --grid 4x4 --pattern stencil:periodic
if grep -q "worst fibre" "$dir/stdout"; then
  echo "FAIL: a stencil was given a fibres bound" >&2
  failures=$((failures + 1))
fi
check "relabel reaches a stencil's bound" 0 "shared links at least 80); reached: optimal" \
  "$relabel" --costs "$dir/n4.costs" --grid 4x4 --pattern stencil:periodic --perm "$dir/s4.perm"

# Stencils: relabel for a halo exchange, evaluate agrees, bad patterns.
check "relabel for a periodic stencil" 0 "neighbour pairs across" \
  "$relabel" --costs "$dir/m.costs" --grid 8x8 --pattern stencil:periodic --perm "$dir/s.perm" \
  --report "$dir/s.json" --seed 2
check "the report names the pattern and its objective" 0 '"pattern": "stencil:periodic"' \
  cat "$dir/s.json"
check "the report has the stencil's figures" 0 '"crossing_pairs"' cat "$dir/s.json"
check "evaluate under the same pattern" 0 "neighbour pairs across" \
  "$evaluate" --costs "$dir/m.costs" --grid 8x8 --pattern stencil:periodic --perm "$dir/s.perm" \
  --json "$dir/se.json"
# A fabric between the nodes (node-fabric in the structured file): evaluate
# prints it and its JSON has the busiest parent's traffic.
sed 's/^rank-locations/node-fabric 0.25\nrank-locations/' "$dir/m.costs" >"$dir/f.costs"
check "evaluate shows the fabric between nodes" 0 "fabric cost" \
  "$evaluate" --costs "$dir/f.costs" --grid 8x8 --pattern stencil:periodic --perm "$dir/s.perm" \
  --json "$dir/fe.json"
check "the JSON has the busiest parent's fabric load" 0 '"busiest_fabric_load"' cat "$dir/fe.json"
# 64 ranks on 4 nodes of 16 (2 racks): the periodic 8x8 grid in a 4x4 box
# per node crosses 32 neighbour pairs, 16 from each node, the least any
# layout can; the job's scrambled order crosses far more, and evaluate's
# objective for the labelling is the report's.
if python3 - "$dir/s.json" "$dir/se.json" <<'PY'
import json, sys
report, evaluated = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert report["objective"] == "step", report["objective"]
before, after = report["stencil_before"], report["stencil_after"]
assert after["levels"][0]["crossing_pairs"] < before["levels"][0]["crossing_pairs"], (before, after)
assert after["levels"][0]["crossing_pairs"] == 32, after["levels"][0]
assert after["levels"][0]["busiest_pairs"] == 16, after["levels"][0]
mine = [l for l in evaluated["labellings"] if l["name"] != "identity"][0]
assert abs(mine["objective"] - report["objective_after"]) <= 1e-9 * report["objective_after"], mine
assert mine["stencil"]["levels"][0]["crossing_pairs"] == 32, mine
PY
then
  echo "ok: the stencil labelling cuts 32 node pairs, 16 from the busiest node; evaluate agrees"
else
  echo "FAIL: the stencil report or evaluate's figures" >&2
  failures=$((failures + 1))
fi
check "bisect alone" 0 "bisect" \
  "$relabel" --costs "$dir/m.costs" --grid 4x16 --pattern stencil --algorithm bisect \
  --perm "$dir/b.perm"
check "an unknown pattern" 1 "pattern 'halo': unknown pattern" \
  "$relabel" --costs "$dir/m.costs" --grid 8x8 --pattern halo --perm "$dir/bad.perm"
check "an unknown stencil option" 1 "unknown option 'wide'" \
  "$evaluate" --costs "$dir/m.costs" --grid 8x8 --pattern stencil:wide
check "a stencil that does not fit the grid" 1 "periods name 3 dimensions" \
  "$evaluate" --costs "$dir/m.costs" --grid 8x8 --pattern stencil:periodic=1x1x1
check "a fibres objective for a stencil" 1 "does not apply to pattern stencil" \
  "$relabel" --costs "$dir/m.costs" --grid 8x8 --pattern stencil --objective sum-max \
  --perm "$dir/bad.perm"
if [ -e "$dir/bad.perm" ]; then
  echo "FAIL: a refused pattern left a labelling behind" >&2
  failures=$((failures + 1))
fi

check "grid size mismatch" 1 "grid 4x4 has 16 positions but" \
  "$evaluate" --costs "$dir/m.costs" --grid 4x4
check "bad grid" 1 "grid '4xq'" "$evaluate" --costs "$dir/m.costs" --grid 4xq
check "unknown objective" 1 "unknown objective 'slowest'" \
  "$evaluate" --costs "$dir/m.costs" --grid 4x16 --objective slowest
printf '0 1\n1 nan\n' >"$dir/nan.costs"
check "NaN in a dense file" 1 "nan.costs:2:3: value is NaN" \
  "$evaluate" --costs "$dir/nan.costs" --grid 2
printf '0 1 2\n1 0\n' >"$dir/ragged.costs"
check "ragged dense file" 1 "ragged.costs:2: row 1 has 2 values" \
  "$evaluate" --costs "$dir/ragged.costs" --grid 3
printf '0 2\n1 0\n' >"$dir/asym.costs"
check "asymmetric matrix is symmetrised with a warning" 0 "warning: $dir/asym.costs: matrix is not symmetric" \
  "$evaluate" --costs "$dir/asym.costs" --grid 2
printf '0\n1\n' >"$dir/short.perm"
check "labelling of the wrong size" 1 "labelling has 2 ranks, expected 64" \
  "$evaluate" --costs "$dir/m.costs" --grid 4x16 --perm "$dir/short.perm"
check "missing cost file" 1 "cannot open" "$evaluate" --costs "$dir/none.costs" --grid 2
check "usage error exits 2" 2 "" "$synth" --cores 0 --costs "$dir/x.costs"
check "missing required option exits 2" 2 "--costs is required" "$synth"

check "output into a missing directory fails" 1 "cannot write $dir/no/such/e.json" \
  "$evaluate" --costs "$dir/m.costs" --grid 4x16 --json "$dir/no/such/e.json"
if [ -e "$dir/no" ]; then
  echo "FAIL: a failed write left something behind" >&2
  failures=$((failures + 1))
fi
leftovers=$(find "$dir" -name '*.tmp.*' | wc -l)
if [ "$leftovers" -ne 0 ]; then
  echo "FAIL: $leftovers temporary files left behind" >&2
  failures=$((failures + 1))
fi

# relabel: labelling, report, rankfile.
check "relabel finds the planted objective" 0 "after: " \
  "$relabel" --costs "$dir/m.costs" --grid 4x16 --perm "$dir/r.perm" --report "$dir/r.json" \
  --placement "$dir/m.placement" --rankfile "$dir/r.rankfile" --seed 3
planted=$("$evaluate" --costs "$dir/m.costs" --grid 4x16 --perm "$dir/m.planted" | sed -n 's/.*planted: objective \([-0-9.e+]*\).*/\1/p')
found=$(sed -n 's/.*"objective_after": \([-0-9.e+]*\).*/\1/p' "$dir/r.json")
if [ -z "$found" ] || [ -z "$planted" ] || ! awk -v f="$found" -v p="$planted" 'BEGIN { exit !(f <= p) }'; then
  echo "FAIL: relabel reached '$found', the planted layout '$planted'" >&2
  failures=$((failures + 1))
else
  echo "ok: relabel objective $found <= planted $planted"
fi
for key in '"p": 64' '"grid": "4x16"' '"algorithm": "auto"' '"seed": 3' '"seconds"' '"objective_before"' '"dimensions_after"' '"candidates"' '"chosen": true'; do
  check "report has $key" 0 "$key" cat "$dir/r.json"
done
check "rankfile has one line per rank" 0 "rank 63=" cat "$dir/r.rankfile"
# Rank i of the rankfile sits where old rank perm[i] ran.
old0=$(grep -v '^#' "$dir/r.perm" | head -1)
where0=$(awk -v r="$old0" '$1 == r { print $2 " slot=" $3 }' "$dir/m.placement")
check "rankfile places rank 0 where its old rank ran" 0 "rank 0=$where0" cat "$dir/r.rankfile"
check "rankfile without placement" 1 "--rankfile needs --placement" \
  "$relabel" --costs "$dir/m.costs" --grid 4x16 --perm "$dir/x.perm" --rankfile "$dir/x.rankfile"
check "unknown algorithm" 1 "unknown algorithm 'magic'" \
  "$relabel" --costs "$dir/m.costs" --grid 4x16 --perm "$dir/x.perm" --algorithm magic
check "negative time limit" 2 "" \
  "$relabel" --costs "$dir/m.costs" --grid 4x16 --perm "$dir/x.perm" --time-limit -1
check "placement of the wrong size" 1 "placement has 16 ranks, expected 64" \
  "$relabel" --costs "$dir/m.costs" --grid 4x16 --perm "$dir/x.perm" --placement "$dir/small.placement"
check "node-aware on dense costs needs hosts" 1 "needs node membership" \
  "$relabel" --costs "$dir/d.costs" --grid 2x3 --perm "$dir/x.perm" --algorithm node-aware
check "help documents the options" 0 "--time-limit" "$relabel" --help

# relabel --heatmap: two PNG pictures, or nothing at all.
check "relabel writes heatmaps" 0 "after: " \
  "$relabel" --costs "$dir/m.costs" --grid 4x16 --perm "$dir/h.perm" --heatmap "$dir/h" --seed 3
for f in "$dir/h-before.png" "$dir/h-after.png"; do
  if [ "$(head -c 8 "$f" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]; then
    echo "ok: $(basename "$f") is a PNG"
  else
    echo "FAIL: $f is missing or not a PNG" >&2
    failures=$((failures + 1))
  fi
done
check "heatmap into a missing directory fails" 1 "cannot write $dir/no/such/h-before.png" \
  "$relabel" --costs "$dir/m.costs" --grid 4x16 --perm "$dir/x.perm" --heatmap "$dir/no/such/h"
mkdir -p "$dir/bad-after.png/x"  # a directory where the second picture goes
check "heatmap whose second picture cannot be written fails" 1 "cannot write $dir/bad-after.png" \
  "$relabel" --costs "$dir/m.costs" --grid 4x16 --perm "$dir/x.perm" --heatmap "$dir/bad"
if [ -e "$dir/no" ] || [ -e "$dir/bad-before.png" ]; then
  echo "FAIL: a failed heatmap left a picture behind" >&2
  failures=$((failures + 1))
fi
leftovers=$(find "$dir" -name '*.tmp.*' | wc -l)
if [ "$leftovers" -ne 0 ]; then
  echo "FAIL: $leftovers temporary files left behind by --heatmap" >&2
  failures=$((failures + 1))
fi
if [ -e "$dir/x.perm" ]; then
  echo "FAIL: a failed relabel wrote its labelling" >&2
  failures=$((failures + 1))
fi

# Traffic graphs: 4 clusters of 16 ranks (those equal mod 4) talk heavily
# inside, and a light ring joins every rank to the next. On 4 nodes of 16
# the best layout puts each cluster on a node: the 64 ring edges cross
# nodes, 32 of them at each node, and no clique edge does.
awk 'BEGIN {
  print "rankshape-traffic 1"; print "ranks 64"
  for (a = 0; a < 64; ++a) for (b = a + 4; b < 64; b += 4) print a, b, 1000, 0
  for (a = 0; a < 64; ++a) print a, (a + 1) % 64, 1, 0
}' >"$dir/clusters.traffic"
check "relabel maps a traffic graph" 0 "traffic graph of 544 edges" \
  "$relabel" --costs "$dir/m.costs" --traffic "$dir/clusters.traffic" --bytes-per-message 0 \
  --perm "$dir/t.perm" --report "$dir/t.json" --placement "$dir/m.placement" \
  --rankfile "$dir/t.rankfile"
check "evaluate scores a labelling for the traffic" 0 "communication" \
  "$evaluate" --costs "$dir/m.costs" --traffic "$dir/clusters.traffic" --bytes-per-message 0 \
  --perm "$dir/t.perm" --json "$dir/te.json"
if python3 - "$dir/t.json" "$dir/te.json" <<'PY'
import json, sys
report, evaluated = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert report["pattern"] == "graph" and report["objective"] == "cost", report
after = report["graph_after"]["levels"][0]
assert after["crossing_edges"] == 64 and after["busiest_load"] == 32, after
assert report["graph_before"]["levels"][0]["crossing_edges"] > 64, report["graph_before"]
mine = [l for l in evaluated["labellings"] if l["name"] != "identity"][0]
assert abs(mine["objective"] - report["objective_after"]) <= 1e-9 * report["objective_after"], mine
PY
then
  echo "ok: each cluster on one node (64 ring edges across, 32 per node); evaluate agrees"
else
  echo "FAIL: the traffic graph's report or evaluate's figures" >&2
  failures=$((failures + 1))
fi
check "the traffic's rankfile has one line per rank" 0 "rank 63=" cat "$dir/t.rankfile"
check "scotch maps a traffic graph" 0 "scotch(" \
  "$relabel" --costs "$dir/m.costs" --traffic "$dir/clusters.traffic" --algorithm scotch \
  --perm "$dir/ts.perm"
check "--grid or --traffic" 1 "give --grid (a cartesian program) or --traffic" \
  "$relabel" --costs "$dir/m.costs" --perm "$dir/bad.perm"
check "not both --grid and --traffic" 2 "excludes" \
  "$relabel" --costs "$dir/m.costs" --grid 8x8 --traffic "$dir/clusters.traffic" \
  --perm "$dir/bad.perm"
check "no stencil for a traffic graph" 1 "--pattern stencil is for --grid" \
  "$relabel" --costs "$dir/m.costs" --traffic "$dir/clusters.traffic" --pattern stencil \
  --perm "$dir/bad.perm"
check "no grid algorithm for a traffic graph" 1 "kl lays out a cartesian grid" \
  "$relabel" --costs "$dir/m.costs" --traffic "$dir/clusters.traffic" --algorithm kl \
  --perm "$dir/bad.perm"
check "--pattern graph needs the traffic" 1 "--pattern graph needs --traffic" \
  "$evaluate" --costs "$dir/m.costs" --grid 64 --pattern graph
printf 'rankshape-traffic 1\nranks 16\n0 1 5 1\n' >"$dir/small.traffic"
check "traffic for another job size" 1 "small.traffic" \
  "$relabel" --costs "$dir/m.costs" --traffic "$dir/small.traffic" --perm "$dir/bad.perm"
if [ -e "$dir/bad.perm" ]; then
  echo "FAIL: a refused traffic graph left a labelling behind" >&2
  failures=$((failures + 1))
fi

[ "$failures" -eq 0 ] && echo "all command-line checks passed"
exit $((failures > 0))
