// Where each rank of a job runs: a host name and a core on that host, as a
// launcher (mpirun rankfile, Slurm) names them.
#ifndef RANKSHAPE_LIB_MODEL_PLACEMENT_H_
#define RANKSHAPE_LIB_MODEL_PLACEMENT_H_

#include <string>
#include <vector>

#include "lib/model/rank.h"

namespace rankshape {

struct HostCore {
  std::string host;
  int core = 0;
};

class Placement {
 public:
  /// entries[r] is where old rank r runs. Throws std::invalid_argument for
  /// an empty list, an empty host name or a negative core. Two ranks may
  /// share a core (oversubscribed jobs do).
  explicit Placement(std::vector<HostCore> entries);

  int size() const { return static_cast<int>(entries_.size()); }
  const HostCore& of(OldRank r) const { return entries_[r.value()]; }
  const std::vector<HostCore>& entries() const { return entries_; }
  /// Distinct host names in order of first appearance.
  std::vector<std::string> hosts() const;

 private:
  std::vector<HostCore> entries_;
};

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_MODEL_PLACEMENT_H_
