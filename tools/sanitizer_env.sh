# Sourced by every script that starts MPI ranks in a test (tools/run_mpi.sh
# and the script-driven tests): under --config=sanitize, which sets
# RANKSHAPE_SANITIZER, the ranks get the sanitizers' settings.
# - LeakSanitizer ignores the leaks named in lsan_mpi.supp, each for the
#   reason given there;
# - full stack unwinding, so that a suppression sees the MPI library's
#   frames (it has no frame pointers);
# - no check that the ASan runtime is the first library loaded: the
#   drop-in tests preload rankshape's (instrumented) library, which comes
#   before the runtime the program links;
# - Open MPI 4.1.4's ring allreduce (ompi_coll_base_allreduce_intra_ring)
#   writes 4 bytes past a buffer it allocates itself (ASan, 2 ranks, ints);
#   recursive doubling is clean.
if [ -n "${RANKSHAPE_SANITIZER:-}" ]; then
  # In the test's runfiles (tests run from the runfiles root), else beside
  # this file.
  rankshape_supp=$PWD/tools/lsan_mpi.supp
  [ -f "$rankshape_supp" ] ||
    rankshape_supp=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lsan_mpi.supp
  export LSAN_OPTIONS=suppressions=$rankshape_supp
  export ASAN_OPTIONS=fast_unwind_on_malloc=0:verify_asan_link_order=0
  export UBSAN_OPTIONS=print_stacktrace=1
  export OMPI_MCA_coll_tuned_use_dynamic_rules=1 OMPI_MCA_coll_tuned_allreduce_algorithm=3
fi
