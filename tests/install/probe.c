/* The test's probe into the collectives drop-in, for coll_program.F90:
 * the calls it ran hierarchically, or -1 when no drop-in is loaded. The
 * program itself needs nothing of rankshape. */
#include <dlfcn.h>

long rankshape_probe_dispatched(void) {
  long (*calls)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "rankshape_coll_dispatched_calls");
  return calls ? calls() : -1;
}
