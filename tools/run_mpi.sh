#!/bin/bash
# Runs one MPI test binary at a given rank count under the configured
# launcher, as Bazel's sh_test for every rank count (see //tools:mpi.bzl).
#   run_mpi.sh LAUNCHER NP BINARY [ARGS...]
# LAUNCHER is openmpi, mpich or smpi. Exits with the binary's status; a run
# that outlives the test's time limit is killed with a TIMEOUT message.
set -u
launcher=$1 np=$2 binary=$3
shift 3

# GoogleTest's premature-exit and XML files would be written by every rank
# at once; the per-rank outcome is reduced by the MPI test main instead.
unset TEST_PREMATURE_EXIT_FILE XML_OUTPUT_FILE GTEST_OUTPUT
export RANKSHAPE_MPI_LAUNCHER=$launcher

# Leave a margin inside Bazel's own limit so that our message is the one seen.
limit=${TEST_TIMEOUT:-300}
budget=$((limit > 30 ? limit - 15 : limit * 2 / 3))
export RANKSHAPE_MPI_TEST_TIMEOUT=${RANKSHAPE_MPI_TEST_TIMEOUT:-$((budget > 20 ? budget - 10 : budget))}

# Sanitizer builds (--config=sanitize): the ranks' settings. From the
# runfiles root when run as a test, else from beside this script.
env_file=$PWD/tools/sanitizer_env.sh
[ -f "$env_file" ] || env_file=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/sanitizer_env.sh
source "$env_file"

case $launcher in
  openmpi)
    # Root, more ranks than cores, no binding: a shared two-core machine.
    # Single-copy shared memory (CMA) is refused inside Bazel's sandbox.
    cmd=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np"
         --mca btl self,vader --mca btl_vader_single_copy_mechanism none
         "$binary" "$@")
    ;;
  mpich)
    cmd=(mpiexec.mpich -n "$np" "$binary" "$@")
    ;;
  smpi)
    # Bazel runs tests from the runfiles root, where data/ is.
    platform=${RANKSHAPE_SMPI_PLATFORM:-data/platforms/ci-cluster.xml}
    # SMPI's default collectives are linear and slow to simulate beyond a
    # few dozen ranks; MPICH's selection is used, except that SimGrid 3.32
    # picks pairwise alltoall(v) algorithms that refuse non-powers of two,
    # its two-level reduce crashes on sub-communicators whose ranks span
    # hosts out of order, and with MPICH's bcast selection communicators
    # split from a duplicate can hang (12 ranks, pairs: even MPI_Sendrecv
    # on some of them), so bcast is binomial. No computation is simulated:
    # timed from the real CPU, it made simulated time, and so the order of
    # messages, depend on the machine's load, and SimGrid 3.32 then now and
    # then deadlocked on persistent sends restarted before their receiver
    # had matched them (profile_mpi_test at 7 ranks: 8 of 30 runs; none in
    # 40 runs without computation).
    cmd=(smpirun -np "$np" -platform "$platform" --cfg=smpi/host-speed:1Gf
         --cfg=smpi/simulate-computation:no
         --cfg=smpi/coll-selector:mpich --cfg=smpi/alltoall:basic_linear --cfg=smpi/alltoallv:bruck
         --cfg=smpi/reduce:binomial --cfg=smpi/bcast:binomial_tree
         --log=root.thresh:warning --log=smpi_config.thresh:warning "$binary" "$@")
    ;;
  *)
    echo "run_mpi.sh: unknown launcher '$launcher' (expected openmpi, mpich or smpi)" >&2
    exit 2
    ;;
esac

echo "run_mpi.sh: ${cmd[*]}" >&2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
timeout --kill-after=5 "$budget" "${cmd[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# SimGrid ends a deadlocked simulation by killing its actors and may still
# exit 0: a deadlock must fail the run.
if [ "$launcher" = smpi ] && grep -q "Deadlock detected" "$log"; then
  echo "run_mpi.sh: DEADLOCK: $(basename "$binary") with $np rank(s) under smpi: every rank blocked" >&2
  [ "$status" -eq 0 ] && status=1
fi
# 124/137: timeout(1) stopped the launcher. The test main's watchdog exits
# 86 after printing its own TIMEOUT line, which names the test.
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
  echo "run_mpi.sh: TIMEOUT: $(basename "$binary") with $np rank(s) under $launcher did not finish in ${budget} s; killed (a hang?)" >&2
fi
exit "$status"
