#!/bin/bash
# The MPI_Cart_create drop-in on an unmodified program (cart_program.c), at
# 4, 6 and 1 ranks (4 and 1 under the sanitizers), on a planted machine:
# nodes of Q1 ranks (cost 1 inside, 100 across) holding scrambled ranks,
# node of rank r = ((p - r) mod p) / Q1, so the job's own order puts rows
# across nodes. Checks:
#   (a) plain run: cart rank = world rank;
#   (b) preloaded (and (b2) linked in) with a cost file and a report: the
#       report's objective improves, its permutation is the program's own
#       world -> cart mapping, evaluate agrees with its objective_after, and
#       the program's row and column allreduces still hold;
#   (c) RANKSHAPE_CART=off: identity again, no report;
#   (d) RANKSHAPE_SOURCE=nonsense: non-zero status and a message naming it;
#       with MPI_ERRORS_RETURN every rank gets MPI_ERR_ARG back.
# The preloaded runs use the default pattern (a stencil with the program's
# periods), the linked ones RANKSHAPE_PATTERN=fibres; evaluate checks each
# report under its own pattern.
# Also, at 4 ranks: the default cost source (auto) and a missing cost file.
# Then the halo case (stencil_program.c, an unmodified 2-D halo exchange
# that checks what its neighbours send): 16 ranks dealt round-robin over 4
# nodes of 4, a periodic 4x4 grid: preloaded, every node gets a 2x2 block
# and the exchange holds; RANKSHAPE_PATTERN=stencil:bogus fails on every
# rank with a message naming it.
#   cart_dropin_test.sh LAUNCHER PROGRAM LINKED_PROGRAM PRELOAD_SO EVALUATE STENCIL_PROGRAM
set -u
# The sanitizers' settings for the ranks, under --config=sanitize.
source tools/sanitizer_env.sh
launcher=$1 program=$2 linked=$3 preload=$4 evaluate=$5 stencil_program=$6
if [ "$launcher" = smpi ]; then
  # smpirun loads programs as shared objects into the simulator, so
  # LD_PRELOAD interposition does not apply; Open MPI and MPICH cover it.
  echo "SKIP: the MPI_Cart_create drop-in is tested under Open MPI and MPICH, not SMPI"
  exit 0
fi
preload=$(realpath "$preload")
# launch, show and the json_* readers.
source tests/dropin/launch.sh
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# Under the sanitizers every launch takes seconds: 4 and 1 ranks reach the
# drop-in's code paths, 6 (an uneven 3x2 grid) runs unsanitized only.
rank_counts=(4 6 1)
[ -n "${RANKSHAPE_SANITIZER:-}" ] && rank_counts=(4 1)

# The program's world -> cart lines as "world cart" pairs.
mapping() {
  awk '$1 == "world" && $3 == "cart" {print $2, $4}' "$1"
}

is_identity() {
  [ "$(mapping "$1" | awk '$1 != $2' | wc -l)" -eq 0 ] &&
    [ "$(mapping "$1" | wc -l)" -eq "$2" ]
}

# The checks of (b) on one run's output and report.
check_relabelled() {
  local what=$1 out=$2 report=$3 np=$4 grid=$5 costs=$6
  if [ ! -s "$report" ]; then
    fail "$what: no report at $report"
    show "$out"
    return
  fi
  grep -q "checks ok" "$out" || fail "$what: the program's allreduce checks failed"
  local before after
  before=$(json_number "$report" objective_before)
  after=$(json_number "$report" objective_after)
  if [ "$np" -gt 1 ]; then
    awk -v a="$after" -v b="$before" 'BEGIN { exit !(a < b) }' ||
      fail "$what: objective after ($after) is not below before ($before)"
  else
    awk -v a="$after" -v b="$before" 'BEGIN { exit !(a <= b) }' ||
      fail "$what: objective after ($after) is above before ($before)"
  fi
  # The report's perm[cart] = world must be the program's own mapping.
  json_perm "$report" >"$out.report.perm"
  mapping "$out" | sort -k2,2n | awk '{print $1}' >"$out.perm"
  if [ "$(wc -l <"$out.perm")" -ne "$np" ] || ! diff -q "$out.perm" "$out.report.perm" >/dev/null; then
    fail "$what: the program's world -> cart mapping differs from the report's perm"
    paste "$out.perm" "$out.report.perm" >&2
  fi
  if "$evaluate" --costs "$costs" --grid "$grid" --perm "$out.perm" --json "$out.eval.json" \
    --pattern "$(json_string "$report" pattern)" --objective "$(json_string "$report" objective)" \
    >"$out.eval" 2>&1; then
    local evaluated
    evaluated=$(grep -o '"objective": [0-9][0-9.eE+-]*' "$out.eval.json" | sed -n 2p |
      awk '{print $2}')
    awk -v a="$evaluated" -v b="$after" 'BEGIN { d = a - b; exit !(d < 1e-9 && d > -1e-9) }' ||
      fail "$what: evaluate gives $evaluated for the mapping, the report $after"
  else
    fail "$what: evaluate failed"
    cat "$out.eval" >&2
  fi
  echo "ok: $what: $(json_string "$report" pattern) objective $before -> $after, mapping = report perm = evaluate"
}

for np in "${rank_counts[@]}"; do
  case $np in
    4) q0=2 q1=2 ;;
    6) q0=3 q1=2 ;;
    1) q0=1 q1=1 ;;
  esac
  grid=${q0}x${q1}
  dir=$TEST_TMPDIR/np$np
  mkdir -p "$dir"
  costs=$dir/planted.costs
  awk -v p="$np" -v b="$q1" 'BEGIN {
    print "# " p " ranks; node of rank r = ((p - r) mod p) / " b "; 1 inside a node, 100 across"
    for (a = 0; a < p; ++a) {
      line = ""
      for (c = 0; c < p; ++c) {
        cost = a == c ? 0 : (int(((p - a) % p) / b) == int(((p - c) % p) / b) ? 1 : 100)
        line = line (c ? " " : "") cost
      }
      print line
    }
  }' >"$costs"

  # (a) The program as it is: MPI does not reorder.
  if launch "$np" "$dir/plain" -- "$program" && grep -q "dims $q0 $q1" "$dir/plain" &&
    grep -q "checks ok" "$dir/plain" && is_identity "$dir/plain" "$np"; then
    echo "ok: np $np plain: cart rank = world rank"
  else
    fail "np $np plain run"
    show "$dir/plain"
  fi

  # (b) Preloaded, with the planted costs and a report.
  report=$dir/preload.json
  if launch "$np" "$dir/preload" LD_PRELOAD="$preload" RANKSHAPE_COSTS="$costs" \
    RANKSHAPE_REPORT="$report" -- "$program"; then
    check_relabelled "np $np preloaded" "$dir/preload" "$report" "$np" "$grid" "$costs"
    grep -q '"cost_source": "file"' "$report" || fail "np $np preloaded: report's cost_source"
  else
    fail "np $np preloaded run failed"
    show "$dir/preload"
  fi

  grep -q '"pattern": "stencil:periodic=0x0"' "$report" ||
    fail "np $np preloaded: the report's pattern is not the program's stencil"

  # (b2) The drop-in linked into the program instead, for fibres.
  report=$dir/linked.json
  if launch "$np" "$dir/linked" RANKSHAPE_COSTS="$costs" RANKSHAPE_REPORT="$report" \
    RANKSHAPE_PATTERN=fibres -- "$linked"; then
    check_relabelled "np $np linked" "$dir/linked" "$report" "$np" "$grid" "$costs"
    grep -q '"pattern": "fibres"' "$report" || fail "np $np linked: the report's pattern"
  else
    fail "np $np linked run failed"
    show "$dir/linked"
  fi

  # (c) Switched off: passed through to MPI.
  if launch "$np" "$dir/off" LD_PRELOAD="$preload" RANKSHAPE_COSTS="$costs" \
    RANKSHAPE_REPORT="$dir/off.json" RANKSHAPE_CART=off -- "$program" &&
    grep -q "checks ok" "$dir/off" && is_identity "$dir/off" "$np" && [ ! -e "$dir/off.json" ]; then
    echo "ok: np $np RANKSHAPE_CART=off: identity, no report"
  else
    fail "np $np RANKSHAPE_CART=off"
    show "$dir/off"
  fi

  # (d) A bad value: a message naming it, and a failing program, whether
  # the error handler aborts (the default) or returns the code.
  if launch "$np" "$dir/bad" LD_PRELOAD="$preload" RANKSHAPE_SOURCE=nonsense -- "$program"; then
    fail "np $np RANKSHAPE_SOURCE=nonsense: the program succeeded"
    show "$dir/bad"
  elif ! grep -q "rankshape MPI_Cart_create: .*RANKSHAPE_SOURCE='nonsense'" "$dir/bad.err"; then
    fail "np $np RANKSHAPE_SOURCE=nonsense: no message naming the variable"
    show "$dir/bad"
  else
    echo "ok: np $np RANKSHAPE_SOURCE=nonsense: fails with the message (errors fatal)"
  fi
  if launch "$np" "$dir/bad_return" LD_PRELOAD="$preload" RANKSHAPE_SOURCE=nonsense \
    -- "$program" --errors-return; then
    fail "np $np RANKSHAPE_SOURCE=nonsense (errors return): the program succeeded"
    show "$dir/bad_return"
  elif [ "$(grep -c "rankshape MPI_Cart_create: .*RANKSHAPE_SOURCE='nonsense'" \
    "$dir/bad_return.err")" -ne 1 ] ||
    [ "$(grep -c 'MPI_Cart_create failed: .*(MPI_ERR_ARG)' "$dir/bad_return.err")" -ne "$np" ]; then
    fail "np $np RANKSHAPE_SOURCE=nonsense (errors return): not one message and MPI_ERR_ARG on every rank"
    show "$dir/bad_return"
  else
    echo "ok: np $np RANKSHAPE_SOURCE=nonsense: one message, MPI_ERR_ARG on all $np rank(s)"
  fi
done

# The default source (auto: the hwloc model on one node).
dir=$TEST_TMPDIR/np4
if launch 4 "$dir/auto" LD_PRELOAD="$preload" RANKSHAPE_REPORT="$dir/auto.json" \
  RANKSHAPE_TIME_LIMIT=1 RANKSHAPE_SEED=7 -- "$program" && grep -q "checks ok" "$dir/auto" &&
  grep -q '"cost_source": "model"' "$dir/auto.json" && grep -q '"seed": 7' "$dir/auto.json"; then
  echo "ok: np 4 default source: model, seed and time limit taken"
else
  fail "np 4 preloaded with the default cost source"
  show "$dir/auto"
fi
# A cost file that does not exist: named in the message, MPI_ERR_ARG everywhere.
if launch 4 "$dir/missing" LD_PRELOAD="$preload" RANKSHAPE_COSTS="$dir/missing.costs" \
  -- "$program" --errors-return; then
  fail "a missing cost file was accepted"
  show "$dir/missing"
elif ! grep -q "rankshape MPI_Cart_create: .*missing.costs" "$dir/missing.err" ||
  [ "$(grep -c 'MPI_Cart_create failed: .*(MPI_ERR_ARG)' "$dir/missing.err")" -ne 4 ]; then
  fail "a missing cost file: no message naming it, or not MPI_ERR_ARG on every rank"
  show "$dir/missing"
else
  echo "ok: a missing cost file is named, MPI_ERR_ARG on every rank"
fi
# A grid smaller than the job passes through: the extra ranks get MPI_COMM_NULL.
if launch 4 "$dir/smaller" LD_PRELOAD="$preload" RANKSHAPE_COSTS="$dir/planted.costs" \
  RANKSHAPE_REPORT="$dir/smaller.json" -- "$program" 3 1 && grep -q "checks ok" "$dir/smaller" &&
  grep -q "world 3 cart -1" "$dir/smaller" && [ ! -e "$dir/smaller.json" ]; then
  echo "ok: a 3x1 grid on 4 ranks passes through"
else
  fail "a 3x1 grid on 4 ranks"
  show "$dir/smaller"
fi
# The halo case: 16 ranks, node of rank r = r mod 4 (round-robin, so the
# job's own rows cross every node), a periodic 4x4 grid.
dir=$TEST_TMPDIR/stencil
mkdir -p "$dir"
costs=$dir/nodes.costs
{
  printf 'rankshape-structured 1\ncores-per-node 4\nnodes 4\nracks 1\nranks 16\ncore-costs\n'
  printf '0 1 1 1\n1 0 1 1\n1 1 0 1\n1 1 1 0\nnode-racks\n0 0 0 0\nrack-costs\n10\n'
  printf 'rank-locations list\n'
  for r in $(seq 0 15); do echo "$((r % 4)) $((r / 4))"; done
} >"$costs"
if launch 16 "$dir/halo" LD_PRELOAD="$preload" RANKSHAPE_COSTS="$costs" \
  RANKSHAPE_REPORT="$dir/halo.json" -- "$stencil_program" 4 4 1 1 &&
  grep -q "checks ok" "$dir/halo"; then
  # Every node's four cartesian positions must make a 2x2 block (on the
  # torus: two neighbouring rows times two neighbouring columns).
  if mapping_blocks=$(awk '$1 == "world" {
      node = $2 % 4; rows[node, $6] = 1; cols[node, $7] = 1; n[node]++
    }
    END {
      for (node = 0; node < 4; ++node) {
        nr = 0; nc = 0
        for (i = 0; i < 4; ++i) { if ((node, i) in rows) r[nr++] = i; if ((node, i) in cols) c[nc++] = i }
        if (n[node] != 4 || nr != 2 || nc != 2) exit 1
        if ((r[1] - r[0]) % 4 != 1 && (r[1] - r[0]) % 4 != 3) exit 1
        if ((c[1] - c[0]) % 4 != 1 && (c[1] - c[0]) % 4 != 3) exit 1
      }
    }' "$dir/halo") && grep -q '"pattern": "stencil:periodic=1x1"' "$dir/halo.json"; then
    echo "ok: np 16 stencil, periodic 4x4 on 4 nodes of 4: a 2x2 block per node, halo exchange checks ok"
  else
    fail "np 16 stencil: not a 2x2 block per node, or the report's pattern"
    show "$dir/halo"
    cat "$dir/halo.json" >&2
  fi
else
  fail "np 16 stencil program preloaded"
  show "$dir/halo"
fi
if launch 4 "$dir/bad_pattern" LD_PRELOAD="$preload" RANKSHAPE_PATTERN=stencil:bogus \
  -- "$stencil_program" --errors-return 2 2 0 0; then
  fail "RANKSHAPE_PATTERN=stencil:bogus: the program succeeded"
  show "$dir/bad_pattern"
elif [ "$(grep -c "rankshape MPI_Cart_create: .*RANKSHAPE_PATTERN='stencil:bogus': .*unknown option 'bogus'" \
  "$dir/bad_pattern.err")" -ne 1 ] ||
  [ "$(grep -c 'MPI_Cart_create failed: .*(MPI_ERR_ARG)' "$dir/bad_pattern.err")" -ne 4 ]; then
  fail "RANKSHAPE_PATTERN=stencil:bogus: not one message naming it and MPI_ERR_ARG on every rank"
  show "$dir/bad_pattern"
else
  echo "ok: RANKSHAPE_PATTERN=stencil:bogus: one message naming it, MPI_ERR_ARG on all 4 ranks"
fi
exit $((failures > 0))
