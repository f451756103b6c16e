#!/bin/bash
# The collectives drop-in on an unmodified program (coll_program.c, which
# checks all nine collectives against locally computed results) at each of
# RANKS (BUILD: 1, 2, 3, 4 and 7; under MPICH 1 to 3, since it busy-polls
# on two cores):
#   (a) plain: the program alone (and no drop-in counter in sight);
#   (b) preloaded with RANKSHAPE_COLL=native: the drop-in is there, nothing
#       runs hierarchically;
#   (c) linked, with the default RANKSHAPE_COLL=auto;
#   (d) RANKSHAPE_COLL=hierarchical with RANKSHAPE_COLL_GROUPS=blocks:2,
#       blocks:3 and dealt:3 (pretended nodes; dealt:3 is non-contiguous
#       like a relabelled communicator), each preloaded at some rank counts
#       and linked at the others: the program's counter check
#       (RANKSHAPE_EXPECT_DISPATCH) requires hierarchical calls whenever
#       the groups make a hierarchy (several groups, not all of one rank),
#       none otherwise (at 1 and 2 ranks, where none does, blocks:2 alone).
# (b) and (c) run the program's --quick checks (counts 1 and 7), the rest
# all of them.
# Once: RANKSHAPE_COLL=hierarchical without groups on one machine (no
# hierarchical call); under MPICH the same on 2 fake nodes
# (MPIR_CVAR_NUM_CLIQUES=2) with hierarchical calls: 4 ranks round-robin
# (nodes {0,2} and {1,3}, not contiguous) and 3 by block ({0,1} and {2},
# uneven); a bad RANKSHAPE_COLL, which must reach the error handler (abort
# by default, MPI_ERR_ARG returned on every rank under MPI_ERRORS_RETURN),
# and a bad RANKSHAPE_COLL_TRIAL_MEMORY.
# Under SMPI nothing can be preloaded (smpirun dlopens a private copy of
# the program per rank with RTLD_DEEPBIND, whose calls bind to itself and
# libsimgrid first): (b) prints SKIP and (d) is always linked; one more
# linked run takes the platform's simulated hosts as nodes (4 hosts, ranks
# dealt over them); the program leaves out what SMPI 3.32 lacks or gets
# wrong by itself (inter-communicators, allgather with differing types).
#   coll_dropin_test.sh LAUNCHER PROGRAM LINKED_PROGRAM PRELOAD_SO PLATFORM RANKS
# RANKS: the rank counts, separated by commas ("1,2,3,4").
set -u
# The sanitizers' settings for the ranks, under --config=sanitize.
source tools/sanitizer_env.sh
launcher=$1 program=$2 linked=$3 preload=$4 platform=$5
if ! [[ "${6:-}" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]]; then
  echo "coll_dropin_test: RANKS must be whole numbers >= 1 separated by commas, got '${6:-}'" >&2
  exit 2
fi
IFS=, read -r -a rank_counts <<<"$6"
preload=$(realpath "$preload")
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

program_args=()
if [ "$launcher" = smpi ]; then
  program_args=(--no-intercomm --no-mixed-allgather)
fi

# launch and show.
launch_timeout=300
# As tools/run_mpi.sh: no computation simulated, so runs do not depend on load.
smpi_args=(-platform "$platform" --cfg=smpi/host-speed:1Gf --cfg=smpi/simulate-computation:no
           --cfg=smpi/coll-selector:mpich
           --cfg=smpi/alltoall:basic_linear --cfg=smpi/alltoallv:bruck --cfg=smpi/reduce:binomial
           --log=root.thresh:warning --log=smpi_config.thresh:warning)
source tests/dropin/launch.sh

# run WHAT NP OUT [VAR=VALUE...] -- PROGRAM [ARGS...]: one run that must
# pass every check of the program (the summary line on rank 0).
run() {
  local what=$1 np=$2 out=$3
  shift 3
  local start=$SECONDS
  if launch "$np" "$out" "$@" "${program_args[@]}" && grep -q "^coll_program: $np ranks: [0-9]* checks ok" "$out"; then
    echo "ok: $what: $(sed -n 's/^coll_program: //p' "$out") ($((SECONDS - start)) s)"
  else
    fail "$what"
    show "$out"
  fi
}

# hierarchical_calls SPEC NP: 1 if RANKSHAPE_COLL_GROUPS=SPEC makes a
# hierarchy of NP ranks (several groups, not all of one rank), else 0.
hierarchical_calls() {
  local n=${1#*:} g
  case $1 in
    blocks:*) g=$((($2 + n - 1) / n)) ;;
    dealt:*) g=$(($2 < n ? $2 : n)) ;;
  esac
  echo $((g > 1 && g < $2 ? 1 : 0))
}

some() {
  [ "$1" = 1 ] && echo some || echo none
}

for np in "${rank_counts[@]}"; do
  dir=$TEST_TMPDIR/np$np
  mkdir -p "$dir"
  run "np $np plain" "$np" "$dir/plain" RANKSHAPE_EXPECT_DISPATCH=none -- "$program"
  if [ "$launcher" = smpi ]; then
    echo "SKIP: np $np preloaded: nothing can be preloaded under SMPI"
  else
    run "np $np preloaded, RANKSHAPE_COLL=native" "$np" "$dir/native" LD_PRELOAD="$preload" \
      RANKSHAPE_COLL=native RANKSHAPE_EXPECT_DISPATCH=0 -- "$program" --quick
  fi
  run "np $np linked, auto" "$np" "$dir/linked_auto" RANKSHAPE_EXPECT_DISPATCH=loaded \
    -- "$linked" --quick
  # Each group spec preloaded at some rank counts and linked at the others
  # (always linked under SMPI).
  # At 1 and 2 ranks no spec makes a hierarchy: the first one says so.
  i=0
  for spec in blocks:2 blocks:3 dealt:3; do
    [ "$np" -le 2 ] && [ "$i" -gt 0 ] && break
    expect=$(hierarchical_calls "$spec" "$np")
    name=${spec/:/}
    if [ $(((np + i) % 2)) = 0 ] && [ "$launcher" != smpi ]; then
      run "np $np preloaded, hierarchical $spec (hierarchical calls: $(some "$expect"))" \
        "$np" "$dir/preload_$name" LD_PRELOAD="$preload" RANKSHAPE_COLL=hierarchical \
        RANKSHAPE_COLL_GROUPS="$spec" RANKSHAPE_EXPECT_DISPATCH="$expect" -- "$program"
    else
      run "np $np linked, hierarchical $spec (hierarchical calls: $(some "$expect"))" \
        "$np" "$dir/linked_$name" RANKSHAPE_COLL=hierarchical RANKSHAPE_COLL_GROUPS="$spec" \
        RANKSHAPE_EXPECT_DISPATCH="$expect" -- "$linked"
    fi
    i=$((i + 1))
  done
  if [ "$launcher" = smpi ] && [ "$np" -gt 1 ]; then
    # The simulated hosts are the nodes: ranks dealt over 4 hosts. Racks
    # are looked for among them (timed inside the first dispatched call);
    # the cluster is flat, so the hosts stay the top.
    expect=$(hierarchical_calls dealt:4 "$np")
    run "np $np linked, hierarchical over the simulated hosts, racks looked for (hierarchical calls: $(some "$expect"))" \
      "$np" "$dir/linked_hosts" RANKSHAPE_COLL=hierarchical RANKSHAPE_COLL_RACKS=auto \
      RANKSHAPE_EXPECT_DISPATCH="$expect" -- "$linked"
  fi
done

dir=$TEST_TMPDIR/once
mkdir -p "$dir"
if [ "$launcher" != smpi ]; then
  # One machine is one node: hierarchical has nothing to work with.
  run "np 4 preloaded, hierarchical on one node (hierarchical calls: none)" 4 "$dir/one_node" \
    LD_PRELOAD="$preload" RANKSHAPE_COLL=hierarchical RANKSHAPE_EXPECT_DISPATCH=0 \
    -- "$program" --quick
fi
if [ "$launcher" = mpich ]; then
  # MPICH's fake nodes, seen through MPI_Comm_split_type.
  run "np 4 preloaded, hierarchical on 2 fake nodes (round-robin)" 4 "$dir/cliques_preload" \
    LD_PRELOAD="$preload" MPIR_CVAR_NUM_CLIQUES=2 RANKSHAPE_COLL=hierarchical \
    RANKSHAPE_EXPECT_DISPATCH=1 -- "$program"
  run "np 4 linked, hierarchical on 2 fake nodes (round-robin)" 4 "$dir/cliques_linked" \
    MPIR_CVAR_NUM_CLIQUES=2 RANKSHAPE_COLL=hierarchical RANKSHAPE_EXPECT_DISPATCH=1 -- "$linked"
  run "np 3 preloaded, hierarchical on 2 fake nodes (blocks)" 3 "$dir/cliques_blocks" \
    LD_PRELOAD="$preload" MPIR_CVAR_NUM_CLIQUES=2 MPIR_CVAR_CLIQUES_BY_BLOCK=1 \
    RANKSHAPE_COLL=hierarchical RANKSHAPE_EXPECT_DISPATCH=1 -- "$program" --quick
fi

# A bad setting: dispatch returns MPI_ERR_ARG and the drop-in hands it to
# the error handler. MPI_ERRORS_ARE_FATAL: the job fails before the
# program sees a code; MPI_ERRORS_RETURN: every rank gets MPI_ERR_ARG.
bad=("$program") bad_preload=(LD_PRELOAD="$preload")
if [ "$launcher" = smpi ]; then
  bad=("$linked") bad_preload=()
fi
if launch 3 "$dir/bad" "${bad_preload[@]}" RANKSHAPE_COLL=bogus \
  -- "${bad[@]}" "${program_args[@]}"; then
  fail "RANKSHAPE_COLL=bogus: the program succeeded"
  show "$dir/bad"
elif ! grep -q "RANKSHAPE_COLL='bogus'" "$dir/bad.err" || grep -q "returned error class" "$dir/bad.err"; then
  fail "RANKSHAPE_COLL=bogus (errors fatal): no message naming it, or the program saw a code"
  show "$dir/bad"
else
  echo "ok: np 3 RANKSHAPE_COLL=bogus: the error handler aborts the job"
fi
if launch 3 "$dir/bad_return" "${bad_preload[@]}" RANKSHAPE_COLL=bogus \
  -- "${bad[@]}" --errors-return "${program_args[@]}"; then
  fail "RANKSHAPE_COLL=bogus (errors return): the program succeeded"
  show "$dir/bad_return"
elif [ "$(grep -c '^coll_program: rank [0-9]*: MPI_Bcast on MPI_COMM_WORLD .* returned .*(MPI_ERR_ARG)' \
  "$dir/bad_return.err")" -ne 3 ]; then
  fail "RANKSHAPE_COLL=bogus (errors return): not MPI_ERR_ARG from the first MPI_Bcast on all 3 ranks"
  show "$dir/bad_return"
else
  echo "ok: np 3 RANKSHAPE_COLL=bogus: MPI_ERR_ARG on all 3 ranks under MPI_ERRORS_RETURN"
fi
# A trial memory that is not a number of bytes is named too.
if launch 3 "$dir/bad_memory" "${bad_preload[@]}" RANKSHAPE_COLL_TRIAL_MEMORY=64M \
  -- "${bad[@]}" "${program_args[@]}"; then
  fail "RANKSHAPE_COLL_TRIAL_MEMORY=64M: the program succeeded"
  show "$dir/bad_memory"
elif ! grep -q "RANKSHAPE_COLL_TRIAL_MEMORY='64M': expected a number of bytes" "$dir/bad_memory.err"; then
  fail "RANKSHAPE_COLL_TRIAL_MEMORY=64M: no message naming it"
  show "$dir/bad_memory"
else
  echo "ok: np 3 RANKSHAPE_COLL_TRIAL_MEMORY=64M: named, and the job fails"
fi
# So is a racks setting other than auto or off.
if launch 3 "$dir/bad_racks" "${bad_preload[@]}" RANKSHAPE_COLL_RACKS=yes \
  -- "${bad[@]}" "${program_args[@]}"; then
  fail "RANKSHAPE_COLL_RACKS=yes: the program succeeded"
  show "$dir/bad_racks"
elif ! grep -q "RANKSHAPE_COLL_RACKS='yes': expected auto or off" "$dir/bad_racks.err"; then
  fail "RANKSHAPE_COLL_RACKS=yes: no message naming it"
  show "$dir/bad_racks"
else
  echo "ok: np 3 RANKSHAPE_COLL_RACKS=yes: named, and the job fails"
fi
exit $((failures > 0))
