#include "lib/model/labelling.h"

#include <stdexcept>
#include <string>

namespace rankshape {

Labelling Labelling::identity(int p) {
  if (p < 1) throw std::invalid_argument("a labelling needs at least one rank");
  std::vector<OldRank> perm;
  perm.reserve(p);
  for (int i = 0; i < p; ++i) perm.emplace_back(i);
  return Labelling(std::move(perm));
}

Labelling::Labelling(std::vector<OldRank> perm) : old_of_new_(std::move(perm)) {
  const int p = static_cast<int>(old_of_new_.size());
  if (p < 1) throw std::invalid_argument("a labelling needs at least one rank");
  new_of_old_.assign(p, NewRank(-1));
  for (int i = 0; i < p; ++i) {
    const int o = old_of_new_[i].value();
    if (o < 0 || o >= p) {
      throw std::invalid_argument("new rank " + std::to_string(i) + " holds old rank " +
                                  std::to_string(o) + ", outside [0, " + std::to_string(p) + ")");
    }
    if (new_of_old_[o].value() != -1) {
      throw std::invalid_argument("old rank " + std::to_string(o) + " is placed twice (new ranks " +
                                  std::to_string(new_of_old_[o].value()) + " and " +
                                  std::to_string(i) + "): a labelling must be a permutation");
    }
    new_of_old_[o] = NewRank(i);
  }
}

void Labelling::swap_positions(NewRank a, NewRank b) {
  std::swap(old_of_new_[a.value()], old_of_new_[b.value()]);
  new_of_old_[old_of_new_[a.value()].value()] = a;
  new_of_old_[old_of_new_[b.value()].value()] = b;
}

void Labelling::cycle_positions(NewRank a, NewRank b, NewRank c) {
  const OldRank at_a = old_of_new_[a.value()];
  const OldRank at_b = old_of_new_[b.value()];
  const OldRank at_c = old_of_new_[c.value()];
  old_of_new_[b.value()] = at_a;
  old_of_new_[c.value()] = at_b;
  old_of_new_[a.value()] = at_c;
  new_of_old_[at_a.value()] = b;
  new_of_old_[at_b.value()] = c;
  new_of_old_[at_c.value()] = a;
}

Labelling Labelling::inverse() const {
  std::vector<OldRank> perm;
  perm.reserve(new_of_old_.size());
  for (NewRank n : new_of_old_) perm.emplace_back(n.value());
  return Labelling(std::move(perm));
}

}  // namespace rankshape
