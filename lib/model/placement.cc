#include "lib/model/placement.h"

#include <set>
#include <stdexcept>

namespace rankshape {

Placement::Placement(std::vector<HostCore> entries) : entries_(std::move(entries)) {
  if (entries_.empty()) throw std::invalid_argument("a placement needs at least one rank");
  for (int r = 0; r < size(); ++r) {
    const HostCore& e = entries_[r];
    if (e.host.empty()) throw std::invalid_argument("rank " + std::to_string(r) + " has no host");
    if (e.core < 0) {
      throw std::invalid_argument("rank " + std::to_string(r) + " has negative core " +
                                  std::to_string(e.core));
    }
  }
}

std::vector<std::string> Placement::hosts() const {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const HostCore& e : entries_) {
    if (seen.insert(e.host).second) out.push_back(e.host);
  }
  return out;
}

}  // namespace rankshape
