// An MPI communicator with RAII ownership.
//
// Wrapping is explicit about ownership: Ownership::kBorrow never frees (use
// it for MPI_COMM_WORLD and for communicators the caller keeps), kTake frees
// in the destructor. Copies are not allowed (an MPI_Comm_dup is collective
// and must be asked for: dup()); moves transfer ownership. Every
// communicator this class creates returns errors as codes
// (MPI_ERRORS_RETURN) and every code is checked.
#ifndef RANKSHAPE_LIB_MPI_COMMUNICATOR_H_
#define RANKSHAPE_LIB_MPI_COMMUNICATOR_H_

#include <mpi.h>

#include <optional>
#include <string>
#include <vector>

#include "lib/mpi/error.h"

namespace rankshape::mpi {

enum class Ownership { kBorrow, kTake };

class Communicator {
 public:
  /// Throws std::invalid_argument for MPI_COMM_NULL and for
  /// inter-communicators (rankshape works on intra-communicators only).
  Communicator(MPI_Comm comm, Ownership ownership);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  Communicator(Communicator&& other) noexcept;
  Communicator& operator=(Communicator&& other) noexcept;

  MPI_Comm get() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool owns() const { return ownership_ == Ownership::kTake; }

  /// Collective: an owned duplicate with MPI_ERRORS_RETURN set.
  [[nodiscard]] Communicator dup() const;
  /// Collective: MPI_Comm_split. color must be >= 0 (MPI_UNDEFINED would
  /// yield MPI_COMM_NULL, which this class does not hold).
  [[nodiscard]] Communicator split(int color, int key) const;
  /// Collective: the ranks sharing this rank's node (MPI_COMM_TYPE_SHARED).
  [[nodiscard]] Communicator split_by_node() const;
  /// Collective: MPI_Cart_create with these dims and periods (0 or 1 each)
  /// and no reordering, so rank i keeps its place; the grid must cover
  /// every rank. Throws std::invalid_argument if it does not.
  [[nodiscard]] Communicator cartesian(const std::vector<int>& dims,
                                       const std::vector<int>& periods) const;
  /// Collective: MPI_Dist_graph_create_adjacent without reordering, this
  /// rank's neighbours (ranks of this communicator) in and out alike, with
  /// weights (one per neighbour, >= 0; empty: MPI_UNWEIGHTED).
  [[nodiscard]] Communicator distributed_graph(const std::vector<int>& neighbours,
                                               const std::vector<int>& weights) const;

  void barrier() const;
  /// Collective: the maximum of value over all ranks.
  int allreduce_max(int value) const;
  /// Collective: every rank's value, in rank order.
  std::vector<int> allgather(int value) const;
  /// This rank's processor (host) name.
  static std::string processor_name();

 private:
  void release() noexcept;

  MPI_Comm comm_ = MPI_COMM_NULL;
  Ownership ownership_ = Ownership::kBorrow;
  int rank_ = 0;
  int size_ = 0;
};

/// True under SimGrid's SMPI (simulated time; some calls missing or
/// defective there).
bool simulated();

/// Collective over comm: MPI_Comm_split's communicator (members ordered by
/// key, ties by rank in comm), or MPI_COMM_NULL when color is MPI_UNDEFINED.
/// The caller frees it. Under SMPI it is built from an allgather of every
/// (color, key) and MPI_Comm_create_group, because SimGrid 3.32's split
/// takes hours at 4,096 simulated ranks.
MPI_Comm split_comm(MPI_Comm comm, int color, int key);

/// Collective over comm: MPI_Comm_split that leaves the ranks with a
/// negative color without a communicator (they create none, so no unused
/// communicator is built for them).
std::optional<Communicator> split_members(MPI_Comm comm, int color, int key);

/// Reports code through comm's error handler, as an MPI call would
/// (MPI_ERRORS_ARE_FATAL aborts), and returns it. SMPI 3.32's
/// MPI_Comm_call_errhandler crashes on the predefined handlers, so there
/// MPI_ERRORS_RETURN is skipped and MPI_ERRORS_ARE_FATAL is MPI_Abort.
int call_error_handler(MPI_Comm comm, int code);

}  // namespace rankshape::mpi

#endif  // RANKSHAPE_LIB_MPI_COMMUNICATOR_H_
