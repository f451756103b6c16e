// One METIS call at a time in this process. METIS 5.1 keeps its random
// state in globals (GKlib's Mersenne twister, seeded from
// METIS_OPTION_SEED at the start of every call), so two calls on two
// threads interleave it and a seed no longer gives one answer: auto's
// candidates on two threads found different labellings from one run to
// the next before this lock (prime-221 of bench/irregular_bench.sh: 4
// restart rounds one time, 9 the next).
#ifndef RANKSHAPE_LIB_RELABEL_METIS_LOCK_H_
#define RANKSHAPE_LIB_RELABEL_METIS_LOCK_H_

#include <mutex>

namespace rankshape {

/// Held around every METIS_PartGraph* call.
inline std::mutex& metis_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_RELABEL_METIS_LOCK_H_
