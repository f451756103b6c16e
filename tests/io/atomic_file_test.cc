#include "lib/io/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <string>

#include "tests/testing/files.h"

namespace rankshape {
namespace {

using testing::read_all;
using testing::scratch_path;

size_t files_in(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(AtomicFileTest, ReplacesTheFileWhole) {
  const std::string dir = scratch_path("atomic1");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/out.txt";
  write_file_atomically(path, [](std::ostream& out) { out << "first\n"; });
  EXPECT_EQ(read_all(path), "first\n");
  write_file_atomically(path, [](std::ostream& out) { out << "second\n"; });
  EXPECT_EQ(read_all(path), "second\n");
  EXPECT_EQ(files_in(dir), 1u);
}

TEST(AtomicFileTest, AFailingWriterLeavesTheOldFileAndNoTemporary) {
  const std::string dir = scratch_path("atomic2");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/out.txt";
  write_file_atomically(path, [](std::ostream& out) { out << "old\n"; });
  EXPECT_THROW(write_file_atomically(path,
                                     [](std::ostream& out) {
                                       out << "half";
                                       throw std::runtime_error("interrupted");
                                     }),
               std::runtime_error);
  EXPECT_EQ(read_all(path), "old\n");
  EXPECT_EQ(files_in(dir), 1u);
}

TEST(AtomicFileTest, AFailedRenameRemovesTheTemporary) {
  // Everything is written and synced, then the rename onto a directory
  // fails: the error names the target and the temporary is gone.
  const std::string dir = scratch_path("atomic3");
  std::filesystem::create_directories(dir + "/target_is_a_dir");
  try {
    write_file_atomically(dir + "/target_is_a_dir", [](std::ostream& out) { out << "x\n"; });
    FAIL() << "renaming over a directory must fail";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("target_is_a_dir"), std::string::npos) << e.what();
  }
  EXPECT_EQ(files_in(dir), 1u);  // only the directory, no temporary left
}

TEST(AtomicFileTest, AReadOnlyLocationFailsCleanly) {
  // /proc refuses new files even to root (chmod would not stop root).
  const std::string path = "/proc/rankshape-atomic-file-test.txt";
  try {
    write_file_atomically(path, [](std::ostream& out) { out << "x\n"; });
    FAIL() << "writing into /proc must fail";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(AtomicFileTest, AFullDiskLeavesTheOldFileAndNoTemporary) {
  // A file-size limit fails writes past it the way a full disk does
  // (EFBIG instead of ENOSPC); SIGXFSZ would otherwise end the process.
  const std::string dir = scratch_path("atomic4");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/out.txt";
  write_file_atomically(path, [](std::ostream& out) { out << "old\n"; });
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  bool failed = false;
  std::string message;
  try {
    write_file_atomically(path, [](std::ostream& out) { out << std::string(1 << 20, 'x'); });
  } catch (const std::runtime_error& e) {
    failed = true;
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(failed) << "a write past the limit must fail";
  EXPECT_NE(message.find("write failed"), std::string::npos) << message;
  EXPECT_EQ(read_all(path), "old\n");
  EXPECT_EQ(files_in(dir), 1u);
}

}  // namespace
}  // namespace rankshape
