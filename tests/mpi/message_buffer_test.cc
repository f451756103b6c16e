// MessageBuffer: filled memory of its size on MPI libraries, one block
// shared by all simulated ranks under SMPI; moves hand the memory over.
#include "lib/mpi/message_buffer.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <limits>
#include <new>
#include <utility>

namespace rankshape::mpi {
namespace {

TEST(MessageBufferTest, MovesHandTheMemoryOver) {
  MessageBuffer a(4096, 7);
  EXPECT_EQ(a.size(), 4096u);
  char* const memory = a.data();
  MessageBuffer b = std::move(a);
  EXPECT_EQ(b.data(), memory);
  EXPECT_EQ(b.size(), 4096u);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state
  EXPECT_EQ(a.size(), 0u);       // NOLINT(bugprone-use-after-move)
  MessageBuffer c(16);
  c = std::move(b);
  EXPECT_EQ(c.data(), memory);
  MessageBuffer empty(0);
  EXPECT_NE(empty.data(), nullptr);
}

#ifdef SMPI_H
// Under SMPI: what one simulated rank writes, every rank reads (SMPI's
// default, global shared allocation), so a buffer per rank costs one.
TEST(MessageBufferTest, SimulatedRanksShareOneBlock) {
  MessageBuffer buffer(1 << 20);
  int rank = 0;
  ASSERT_EQ(MPI_Comm_rank(MPI_COMM_WORLD, &rank), MPI_SUCCESS);
  if (rank == 0) buffer.data()[12345] = 42;
  ASSERT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
  EXPECT_EQ(buffer.data()[12345], 42);
  ASSERT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
}
#else
TEST(MessageBufferTest, EveryByteHoldsTheFill) {
  const MessageBuffer buffer(100000, 0x5a);
  for (std::size_t i = 0; i < buffer.size(); ++i) ASSERT_EQ(buffer.data()[i], 0x5a) << i;
}

// AddressSanitizer aborts on such a request instead of failing it.
#ifndef __SANITIZE_ADDRESS__
TEST(MessageBufferTest, MemoryThatCannotBeHadThrowsABadAllocThatSaysSo) {
  try {
    const MessageBuffer buffer(std::numeric_limits<std::size_t>::max() / 2);
    FAIL() << "no error for " << buffer.size() << " bytes";
  } catch (const std::bad_alloc& e) {
    EXPECT_STREQ(e.what(), "out of memory for a message buffer");
  }
}
#endif
#endif

}  // namespace
}  // namespace rankshape::mpi
