#include "lib/io/launch_files.h"

#include <gtest/gtest.h>

#include "tests/testing/files.h"

namespace rankshape {
namespace {

// Two hosts of two cores; the labelling swaps the hosts' ranks around.
Placement two_hosts() { return Placement({{"a", 0}, {"a", 1}, {"b", 0}, {"b", 1}}); }
Labelling swapped() { return Labelling({OldRank(2), OldRank(0), OldRank(3), OldRank(1)}); }

TEST(LaunchFilesTest, OpenMpiRankfileNamesHostAndPhysicalCpuOfEveryNewRank) {
  const std::string text = launch_file_text(two_hosts(), swapped(), LaunchFormat::kOpenMpi);
  EXPECT_NE(text.find("rank 0=b slot=0\nrank 1=a slot=0\nrank 2=b slot=1\nrank 3=a slot=1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rmaps_rank_file_physical 1"), std::string::npos);
}

TEST(LaunchFilesTest, HydraMachinefileHasOneLinePerRankInOrder) {
  const std::string text = launch_file_text(two_hosts(), swapped(), LaunchFormat::kMpich);
  EXPECT_NE(text.find("\nb:1\na:1\nb:1\na:1\n"), std::string::npos) << text;
  // Alternating hosts: Hydra starts a proxy per line, every rank is its
  // proxy's first, and one list cannot give them cores 0 and 1.
  EXPECT_FALSE(core_binding_list(two_hosts(), swapped(), LaunchFormat::kMpich).has_value());
  EXPECT_EQ(launch_command(two_hosts(), swapped(), LaunchFormat::kMpich, "m").find("bind-to"),
            std::string::npos);
  // Consecutive lines of a host are one proxy, numbered 0, 1, ...
  const Labelling grouped({OldRank(2), OldRank(3), OldRank(0), OldRank(1)});
  EXPECT_EQ(launch_command(two_hosts(), grouped, LaunchFormat::kMpich, "m"),
            "mpiexec -f m -n 4 -bind-to user:0,1 ./app");
  // A shorter run that is a prefix of the longest still fits one list.
  const Placement uneven({{"a", 3}, {"a", 5}, {"b", 3}});
  EXPECT_EQ(core_binding_list(uneven, Labelling::identity(3), LaunchFormat::kMpich),
            (std::vector<int>{3, 5}));
}

TEST(LaunchFilesTest, SlurmHostfileIsHostsOnlyAndCoresGoToTheCommand) {
  // Slurm numbers all of a node's tasks, consecutive or not.
  EXPECT_EQ(launch_file_text(two_hosts(), swapped(), LaunchFormat::kSlurm), "b\na\nb\na\n");
  EXPECT_EQ(launch_command(two_hosts(), swapped(), LaunchFormat::kSlurm, "h"),
            "SLURM_HOSTFILE=h srun --distribution=arbitrary -n 4 --cpu-bind=map_cpu:0,1 ./app");
}

TEST(LaunchFilesTest, DifferentCoreOrdersPerHostLeaveCoresToTheLauncher) {
  const Labelling l({OldRank(0), OldRank(1), OldRank(3), OldRank(2)});
  EXPECT_FALSE(core_binding_list(two_hosts(), l, LaunchFormat::kSlurm).has_value());
  EXPECT_FALSE(core_binding_list(two_hosts(), l, LaunchFormat::kOpenMpi).has_value());
  const std::string command = launch_command(two_hosts(), l, LaunchFormat::kSlurm, "h");
  EXPECT_EQ(command.find("map_cpu"), std::string::npos);
  EXPECT_NE(command.find("cores left to the launcher"), std::string::npos);
}

TEST(LaunchFilesTest, BadInputIsRefusedAndNothingIsWritten) {
  EXPECT_THROW(parse_launch_format("pbs"), std::invalid_argument);
  EXPECT_EQ(parse_launch_format("hydra"), LaunchFormat::kMpich);
  EXPECT_THROW(launch_file_text(two_hosts(), Labelling::identity(3), LaunchFormat::kOpenMpi),
               std::invalid_argument);
  const std::string path = testing::scratch_path("launch_bad");
  EXPECT_THROW(write_launch_file(path, two_hosts(), Labelling::identity(5), LaunchFormat::kSlurm),
               std::invalid_argument);
  EXPECT_EQ(testing::read_all(path), "");
  write_launch_file(path, two_hosts(), Labelling::identity(4), LaunchFormat::kSlurm);
  EXPECT_EQ(testing::read_all(path), "a\na\nb\nb\n");
}

}  // namespace
}  // namespace rankshape
