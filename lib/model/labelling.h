// A labelling places each old rank at one grid position (new rank):
// perm[new_rank] = old_rank. Both directions are kept so that either lookup
// is O(1); every mutation keeps them consistent.
#ifndef RANKSHAPE_LIB_MODEL_LABELLING_H_
#define RANKSHAPE_LIB_MODEL_LABELLING_H_

#include <vector>

#include "lib/model/rank.h"

namespace rankshape {

class Labelling {
 public:
  /// new rank i holds old rank i.
  static Labelling identity(int p);

  /// perm[i] = old rank placed at new rank i. Throws std::invalid_argument
  /// unless perm is a bijection on [0, p) (names the first repeated or
  /// out-of-range old rank).
  explicit Labelling(std::vector<OldRank> perm);

  int size() const { return static_cast<int>(old_of_new_.size()); }
  OldRank old_of(NewRank n) const { return old_of_new_[n.value()]; }
  NewRank new_of(OldRank o) const { return new_of_old_[o.value()]; }
  const std::vector<OldRank>& old_ranks() const { return old_of_new_; }

  /// Exchanges the old ranks at two positions.
  void swap_positions(NewRank a, NewRank b);
  /// The old rank at a moves to b, the one at b moves to c, the one at c to a.
  void cycle_positions(NewRank a, NewRank b, NewRank c);

  /// The labelling that undoes this one: this followed by inverse() is the
  /// identity (perm of the inverse at old index i = new rank of old rank i).
  Labelling inverse() const;

  friend bool operator==(const Labelling& a, const Labelling& b) {
    return a.old_of_new_ == b.old_of_new_;
  }
  friend bool operator!=(const Labelling& a, const Labelling& b) { return !(a == b); }

 private:
  std::vector<OldRank> old_of_new_;
  std::vector<NewRank> new_of_old_;
};

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_MODEL_LABELLING_H_
