#!/bin/bash
# The graph topology drop-ins on an unmodified program (graph_program.c),
# at 4, 7 and 1 ranks, for each constructor (MPI_Dist_graph_create_adjacent,
# MPI_Dist_graph_create, MPI_Graph_create), on a planted machine: nodes of
# 2 ranks (cost 1 inside, 100 across), node of rank r = ((p - r) mod p) / 2,
# so the job's own order splits every heavy pair (v, v^1) across nodes.
# Checks:
#   (a) plain run (at 7 ranks): the program's own checks (neighbours of the
#       vertex its rank names, a neighbour alltoall) hold, whatever MPI does;
#   (b) preloaded with a cost file and a report: the checks hold after
#       relabelling, the report's objective improves (from 4 ranks), its
#       permutation is the program's own world -> graph mapping, and every
#       heavy pair shares a node;
#   (b2) linked in instead of preloaded (adjacent);
#   (c) RANKSHAPE_GRAPH=off (at 4 ranks): identity, no report;
#   (d) RANKSHAPE_GRAPH_OBJECTIVE=bogus (at 4 ranks): a message naming it,
#       and the program fails on every rank.
#   graph_dropin_test.sh LAUNCHER PROGRAM LINKED_PROGRAM PRELOAD_SO
set -u
source tools/sanitizer_env.sh
launcher=$1 program=$2 linked=$3 preload=$4
if [ "$launcher" = smpi ]; then
  # smpirun loads programs as shared objects (no LD_PRELOAD), and SimGrid
  # 3.32 implements none of the graph constructors.
  echo "SKIP: the graph drop-ins are tested under Open MPI and MPICH, not SMPI"
  exit 0
fi
preload=$(realpath "$preload")
source tests/dropin/launch.sh
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

mapping() {  # "world graph" pairs
  awk '$1 == "world" && $3 == "graph" {print $2, $4}' "$1"
}

is_identity() {
  [ "$(mapping "$1" | awk '$1 != $2' | wc -l)" -eq 0 ] && [ "$(mapping "$1" | wc -l)" -eq "$2" ]
}

# (b)'s checks on one run.
check_relabelled() {
  local what=$1 out=$2 report=$3 np=$4
  if ! grep -q "checks ok" "$out" || [ ! -s "$report" ]; then
    fail "$what: the program's checks or the report"
    show "$out"
    return
  fi
  local before after
  before=$(json_number "$report" objective_before)
  after=$(json_number "$report" objective_after)
  if [ "$np" -ge 4 ]; then
    awk -v a="$after" -v b="$before" 'BEGIN { exit !(a < b) }' ||
      fail "$what: objective after ($after) is not below before ($before)"
  fi
  json_perm "$report" >"$out.report.perm"
  mapping "$out" | sort -k2,2n | awk '{print $1}' >"$out.perm"
  if [ "$(wc -l <"$out.perm")" -ne "$np" ] || ! diff -q "$out.perm" "$out.report.perm" >/dev/null; then
    fail "$what: the program's world -> graph mapping differs from the report's perm"
    paste "$out.perm" "$out.report.perm" >&2
  fi
  # Heavy pairs (v, v^1) on one node: node of world rank r = ((p - r) mod p) / 2.
  if ! awk -v p="$np" '{ node[NR - 1] = int(((p - $1) % p) / 2) }
      END { for (v = 0; v + 1 < NR; v += 2) if (node[v] != node[v + 1]) exit 1 }' "$out.perm"; then
    fail "$what: a heavy pair is split across nodes"
    paste "$out.perm" >&2
  fi
  echo "ok: $what: objective $before -> $after, mapping = report perm, heavy pairs on one node"
}

for np in 4 7 1; do
  dir=$TEST_TMPDIR/np$np
  mkdir -p "$dir"
  costs=$dir/planted.costs
  awk -v p="$np" 'BEGIN {
    for (a = 0; a < p; ++a) {
      line = ""
      for (c = 0; c < p; ++c) {
        cost = a == c ? 0 : (int(((p - a) % p) / 2) == int(((p - c) % p) / 2) ? 1 : 100)
        line = line (c ? " " : "") cost
      }
      print line
    }
  }' >"$costs"
  for mode in adjacent general graph; do
    # Plain (MPI's own reordering) at 7 ranks only, to keep the test short.
    if [ "$np" -eq 7 ]; then
      if launch "$np" "$dir/plain-$mode" -- "$program" "$mode" &&
        grep -q "checks ok" "$dir/plain-$mode"; then
        echo "ok: np $np $mode plain: the program's checks hold"
      else
        fail "np $np $mode plain run"
        show "$dir/plain-$mode"
      fi
    fi
    report=$dir/$mode.json
    if launch "$np" "$dir/$mode" LD_PRELOAD="$preload" RANKSHAPE_COSTS="$costs" \
      RANKSHAPE_REPORT="$report" -- "$program" "$mode"; then
      check_relabelled "np $np $mode preloaded" "$dir/$mode" "$report" "$np"
    else
      fail "np $np $mode preloaded run failed"
      show "$dir/$mode"
    fi
  done
  report=$dir/linked.json
  if launch "$np" "$dir/linked" RANKSHAPE_COSTS="$costs" RANKSHAPE_REPORT="$report" \
    -- "$linked" adjacent; then
    check_relabelled "np $np adjacent linked" "$dir/linked" "$report" "$np"
  else
    fail "np $np linked run failed"
    show "$dir/linked"
  fi
  [ "$np" -eq 4 ] || continue  # off and a bad value: at 4 ranks
  if launch "$np" "$dir/off" LD_PRELOAD="$preload" RANKSHAPE_COSTS="$costs" \
    RANKSHAPE_REPORT="$dir/off.json" RANKSHAPE_GRAPH=off -- "$program" graph &&
    grep -q "checks ok" "$dir/off" && is_identity "$dir/off" "$np" && [ ! -e "$dir/off.json" ]; then
    echo "ok: np $np RANKSHAPE_GRAPH=off: identity, no report"
  else
    fail "np $np RANKSHAPE_GRAPH=off"
    show "$dir/off"
  fi
  if launch "$np" "$dir/bad" LD_PRELOAD="$preload" RANKSHAPE_GRAPH_OBJECTIVE=bogus \
    -- "$program" adjacent; then
    fail "np $np RANKSHAPE_GRAPH_OBJECTIVE=bogus: the program succeeded"
    show "$dir/bad"
  elif ! grep -q "rankshape MPI_Dist_graph_create_adjacent: .*RANKSHAPE_GRAPH_OBJECTIVE='bogus'" \
    "$dir/bad.err"; then
    fail "np $np RANKSHAPE_GRAPH_OBJECTIVE=bogus: no message naming it"
    show "$dir/bad"
  else
    echo "ok: np $np RANKSHAPE_GRAPH_OBJECTIVE=bogus: fails with a message naming it"
  fi
done
exit $((failures > 0))
