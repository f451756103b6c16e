// The algorithms' pure parts, in one process: the binary tree's shape.
#include "lib/coll/algorithms.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace rankshape::coll {
namespace {

// The ranks of r's subtree, r first (stopping past every rank: a cycle).
std::vector<int> subtree(int r, const std::vector<TreeLinks>& tree) {
  std::vector<int> out = {r};
  for (std::size_t i = 0; i < out.size() && out.size() <= tree.size(); ++i) {
    for (int c : tree[static_cast<std::size_t>(out[i])].children) out.push_back(c);
  }
  return out;
}

TEST(BinaryTreeTest, EveryRankHangsOnceFromTheRootWithinLogDepth) {
  for (int p = 1; p <= 40; ++p) {
    for (int root = 0; root < p; ++root) {
      std::vector<TreeLinks> tree;
      for (int r = 0; r < p; ++r) tree.push_back(binary_tree_links(r, root, p));
      EXPECT_EQ(tree[static_cast<std::size_t>(root)].parent, -1) << p << " ranks, root " << root;
      int depth = 0, bound = 0;
      while ((1 << bound) < p + 1) ++bound;  // ceil(log2(p + 1))
      for (int r = 0; r < p; ++r) {
        const TreeLinks& t = tree[static_cast<std::size_t>(r)];
        EXPECT_LE(t.children.size(), 2u);
        for (int c : t.children) EXPECT_EQ(tree[static_cast<std::size_t>(c)].parent, r);
        int levels = 1;
        for (int up = r; up != root; up = tree[static_cast<std::size_t>(up)].parent) {
          ASSERT_GE(tree[static_cast<std::size_t>(up)].parent, 0)
              << p << " ranks, root " << root << ": rank " << up << " hangs from nothing";
          ASSERT_LE(++levels, p) << "a cycle";
        }
        depth = std::max(depth, levels);
      }
      EXPECT_EQ(subtree(root, tree).size(), static_cast<std::size_t>(p));
      EXPECT_LE(depth, bound) << p << " ranks, root " << root;
    }
  }
}

// A node's or rack's consecutive ranks stay together from any root: a
// subtree below the root never wraps from the last rank to the first.
TEST(BinaryTreeTest, EverySubtreeBelowTheRootIsARunOfRanks) {
  for (int p = 2; p <= 40; ++p) {
    for (int root = 0; root < p; ++root) {
      std::vector<TreeLinks> tree;
      for (int r = 0; r < p; ++r) tree.push_back(binary_tree_links(r, root, p));
      for (int r = 0; r < p; ++r) {
        if (r == root) continue;
        std::vector<int> ranks = subtree(r, tree);
        std::sort(ranks.begin(), ranks.end());
        const int lo = ranks.front(), hi = ranks.back();
        const int skipped = lo < root && root < hi ? 1 : 0;  // the root's place
        EXPECT_EQ(hi - lo + 1, static_cast<int>(ranks.size()) + skipped)
            << p << " ranks, root " << root << ": rank " << r << "'s subtree spans " << lo << ".."
            << hi;
      }
    }
  }
}

}  // namespace
}  // namespace rankshape::coll
