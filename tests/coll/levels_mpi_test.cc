// Hierarchy::machine_groups: sockets (hwloc packages) below nodes, only when
// they add a level; every rank gets the same tables; a Hierarchy accepts
// them. Sockets come from a synthetic topology of 2 packages of 2 PUs
// (PU os indexes 0, 1 in package 0 and 2, 3 in package 1), written to an
// XML file, with each rank's PU given instead of its binding.
#include <gtest/gtest.h>
#include <hwloc.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/coll/hierarchy.h"
#include "lib/mpi/communicator.h"
#include "tests/testing/world.h"

namespace rankshape::coll {
namespace {

using Tables = std::vector<std::vector<int>>;

using ::rankshape::testing::world_rank;
using ::rankshape::testing::world_size;

using Topology = std::unique_ptr<hwloc_topology, void (*)(hwloc_topology_t)>;

// A loaded topology: synthetic description, XML file, or (both empty) this
// machine.
Topology load(const std::string& synthetic, const std::string& xml) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) throw std::runtime_error("hwloc_topology_init");
  Topology t(raw, hwloc_topology_destroy);
  if (!synthetic.empty() && hwloc_topology_set_synthetic(raw, synthetic.c_str()) != 0)
    throw std::runtime_error("hwloc_topology_set_synthetic " + synthetic);
  if (!xml.empty() && hwloc_topology_set_xml(raw, xml.c_str()) != 0)
    throw std::runtime_error("hwloc_topology_set_xml " + xml);
  if (hwloc_topology_load(raw) != 0) throw std::runtime_error("hwloc_topology_load");
  return t;
}

// The synthetic machine as an XML file of this rank's own, removed at the end.
class SyntheticXml {
 public:
  SyntheticXml() {
    const char* dir = std::getenv("TEST_TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/levels_mpi_test.XXXXXX";
    const int fd = mkstemp(path_.data());
    if (fd < 0) throw std::runtime_error("mkstemp " + path_);
    close(fd);
    const Topology t = load(kSynthetic, "");
    if (hwloc_topology_export_xml(t.get(), path_.c_str(), 0) != 0)
      throw std::runtime_error("hwloc_topology_export_xml " + path_);
  }
  ~SyntheticXml() { unlink(path_.c_str()); }
  SyntheticXml(const SyntheticXml&) = delete;
  SyntheticXml& operator=(const SyntheticXml&) = delete;
  const std::string& path() const { return path_; }

  static constexpr const char* kSynthetic = "package:2 core:2 pu:1";
  // The package of PU os index pu in the synthetic machine.
  static int package_of(int pu) { return pu / 2; }

 private:
  std::string path_;
};

// Every rank's PU, from a rule on (rank, size).
template <typename Rule>
std::vector<int> pus(Rule rule) {
  std::vector<int> out;
  for (int r = 0; r < world_size(); ++r) out.push_back(rule(r, world_size()));
  return out;
}

// Checks got against the definition, whatever the nodes are: the last table
// is the nodes; a socket level, when present, groups exactly the ranks
// sharing node and package, and is neither the nodes nor all singletons;
// when absent, such a level would have been one of those. Returns the
// number of levels.
int check_levels(const Tables& got, const Tables& nodes, const std::vector<int>& pu) {
  const std::size_t p = static_cast<std::size_t>(world_size());
  std::map<std::pair<int, int>, int> count;  // (node, package) -> ranks
  for (std::size_t r = 0; r < p; ++r) ++count[{nodes[0][r], SyntheticXml::package_of(pu[r])}];
  const std::set<int> node_ids(nodes[0].begin(), nodes[0].end());
  const bool socket_level = count.size() != node_ids.size() && count.size() != p;
  EXPECT_EQ(got.size(), socket_level ? 2u : 1u);
  if (got.empty()) return 0;
  EXPECT_EQ(got.back(), nodes[0]);
  if (got.size() == 2) {
    const std::vector<int>& sockets = got[0];
    EXPECT_EQ(sockets.size(), p);
    for (std::size_t a = 0; a < p && a < sockets.size(); ++a) {
      for (std::size_t b = 0; b < p && b < sockets.size(); ++b) {
        const bool same_socket = sockets[a] == sockets[b];
        const bool same_place = nodes[0][a] == nodes[0][b] &&
                                SyntheticXml::package_of(pu[a]) == SyntheticXml::package_of(pu[b]);
        EXPECT_EQ(same_socket, same_place) << "ranks " << a << " and " << b;
      }
    }
  }
  // Identical on every rank.
  std::vector<int> flat;
  for (const auto& t : got) flat.insert(flat.end(), t.begin(), t.end());
  std::vector<int> root = flat;
  int n = static_cast<int>(root.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  root.resize(static_cast<std::size_t>(n));
  MPI_Bcast(root.data(), n, MPI_INT, 0, MPI_COMM_WORLD);
  EXPECT_EQ(flat, root) << "tables differ from rank 0's";
  return static_cast<int>(got.size());
}

bool one_node(const Tables& nodes) {
  return std::set<int>(nodes[0].begin(), nodes[0].end()).size() == 1;
}

TEST(MachineGroups, SyntheticTopologyHasTwoPackagesOfTwoPus) {
  const Topology t = load(SyntheticXml::kSynthetic, "");
  ASSERT_EQ(hwloc_get_nbobjs_by_type(t.get(), HWLOC_OBJ_PACKAGE), 2);
  for (int pu = 0; pu < 4; ++pu) {
    const hwloc_obj_t obj = hwloc_get_pu_obj_by_os_index(t.get(), static_cast<unsigned>(pu));
    ASSERT_NE(obj, nullptr) << "PU " << pu;
    const hwloc_obj_t package = hwloc_get_ancestor_obj_by_type(t.get(), HWLOC_OBJ_PACKAGE, obj);
    ASSERT_NE(package, nullptr) << "PU " << pu;
    EXPECT_EQ(static_cast<int>(package->logical_index), SyntheticXml::package_of(pu));
  }
}

// Ranks dealt over the two packages: sockets {even ranks}, {odd ranks}.
TEST(MachineGroups, RanksDealtOverTwoPackages) {
  const SyntheticXml xml;
  const std::vector<int> pu = pus([](int r, int) { return 2 * (r % 2); });
  const Tables nodes = Hierarchy::node_groups(MPI_COMM_WORLD);
  const Tables got = Hierarchy::machine_groups(MPI_COMM_WORLD, xml.path(), pu);
  const int levels = check_levels(got, nodes, pu);
  const int p = world_size(), me = world_rank();
  if (one_node(nodes)) {
    // One rank, or one rank per package: no socket level.
    EXPECT_EQ(levels, p >= 3 ? 2 : 1);
    if (levels == 2) {
      std::vector<int> dealt;
      for (int r = 0; r < p; ++r) dealt.push_back(r % 2);
      EXPECT_EQ(got[0], dealt);
    }
  }
  const Hierarchy h(MPI_COMM_WORLD, got);
  EXPECT_EQ(h.depth(), levels);
  if (levels == 2) {
    EXPECT_TRUE(h.useful());
    int mine = 0;
    for (int r = 0; r < p; ++r) mine += got[0][r] == got[0][me];
    ASSERT_NE(h.level(0), nullptr);
    EXPECT_EQ(h.level(0)->size(), mine);
    if (one_node(nodes)) {
      // Leaders 0 and 1 meet at the node level; the order lists evens first.
      EXPECT_EQ(h.level(1) != nullptr, me < 2);
      if (h.level(1)) {
        EXPECT_EQ(h.level(1)->size(), 2);
      }
      EXPECT_FALSE(h.ordered());
      EXPECT_EQ(h.order()[1], 2);
    }
  }
}

// The first half of the ranks on package 0, the rest on package 1.
TEST(MachineGroups, RanksInBlocksOnTwoPackages) {
  const SyntheticXml xml;
  const std::vector<int> pu = pus([](int r, int p) { return 4 * r / p; });
  const Tables nodes = Hierarchy::node_groups(MPI_COMM_WORLD);
  const Tables got = Hierarchy::machine_groups(MPI_COMM_WORLD, xml.path(), pu);
  const int levels = check_levels(got, nodes, pu);
  const int p = world_size();
  if (one_node(nodes)) {
    EXPECT_EQ(levels, p >= 3 ? 2 : 1);
    if (levels == 2) {
      std::vector<int> blocks;
      for (int r = 0; r < p; ++r) blocks.push_back(4 * r / p / 2);
      EXPECT_EQ(got[0], blocks);
    }
  }
  const Hierarchy h(MPI_COMM_WORLD, got);
  EXPECT_EQ(h.depth(), levels);
  if (levels == 2) {
    EXPECT_TRUE(h.useful());
  }
  // Contiguous increasing blocks on one node keep comm's order.
  if (one_node(nodes)) {
    EXPECT_TRUE(h.ordered());
  }
}

// Every rank on package 0 (PUs 0 and 1): the sockets are the nodes.
TEST(MachineGroups, OnePackageGivesNodesOnly) {
  const SyntheticXml xml;
  const std::vector<int> pu = pus([](int r, int) { return r % 2; });
  const Tables nodes = Hierarchy::node_groups(MPI_COMM_WORLD);
  const Tables got = Hierarchy::machine_groups(MPI_COMM_WORLD, xml.path(), pu);
  EXPECT_EQ(check_levels(got, nodes, pu), 1);
  EXPECT_EQ(got, nodes);
  EXPECT_EQ(Hierarchy(MPI_COMM_WORLD, got).depth(), 1);
}

// This machine, with the real binding: with one package (or under SMPI,
// where hwloc would see the real host) nothing is added to the nodes.
TEST(MachineGroups, ThisMachineWithoutOverrides) {
  const Tables nodes = Hierarchy::node_groups(MPI_COMM_WORLD);
  const Tables got = Hierarchy::machine_groups(MPI_COMM_WORLD);
  const Topology here = load("", "");
  if (mpi::simulated() || hwloc_get_nbobjs_by_type(here.get(), HWLOC_OBJ_PACKAGE) <= 1) {
    EXPECT_EQ(got, nodes);
  } else {
    // Several packages: sockets only if the ranks are bound inside them.
    ASSERT_GE(got.size(), 1u);
    ASSERT_LE(got.size(), 2u);
    EXPECT_EQ(got.back(), nodes[0]);
    EXPECT_EQ(Hierarchy(MPI_COMM_WORLD, got).depth(), static_cast<int>(got.size()));
  }
  // Under SMPI a PU list without a topology file is ignored too.
  if (mpi::simulated()) {
    EXPECT_EQ(Hierarchy::machine_groups(MPI_COMM_WORLD, "", pus([](int r, int) { return r; })),
              nodes);
  }
}

TEST(MachineGroups, BadArgumentsThrowOnEveryRank) {
  const SyntheticXml xml;
  EXPECT_THROW(
      Hierarchy::machine_groups(MPI_COMM_WORLD, xml.path(), std::vector<int>(world_size() + 1, 0)),
      std::invalid_argument);
  EXPECT_THROW(
      Hierarchy::machine_groups(MPI_COMM_WORLD, xml.path(), pus([](int, int) { return -1; })),
      std::invalid_argument);
  // PU 4 is beyond the synthetic machine (rank 0's only).
  EXPECT_THROW(Hierarchy::machine_groups(MPI_COMM_WORLD, xml.path(),
                                         pus([](int r, int) { return r == 0 ? 4 : 0; })),
               std::invalid_argument);
  EXPECT_THROW(Hierarchy::machine_groups(MPI_COMM_WORLD, xml.path() + ".missing",
                                         pus([](int, int) { return 0; })),
               std::runtime_error);
}

}  // namespace
}  // namespace rankshape::coll
