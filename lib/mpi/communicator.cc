#include "lib/mpi/communicator.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <utility>
#include <vector>

namespace rankshape::mpi {

Communicator::Communicator(MPI_Comm comm, Ownership ownership)
    : comm_(comm), ownership_(ownership) {
  if (comm == MPI_COMM_NULL) {
    throw std::invalid_argument("rankshape needs a communicator, got MPI_COMM_NULL");
  }
  try {
    int inter = 0;
    check(MPI_Comm_test_inter(comm, &inter), "MPI_Comm_test_inter");
    if (inter) {
      throw std::invalid_argument(
          "rankshape works on intra-communicators; got an inter-communicator");
    }
    check(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
    if (ownership == Ownership::kTake) {
      check(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    }
  } catch (...) {
    // The destructor will not run: release what we were given to own.
    release();
    throw;
  }
}

Communicator::~Communicator() { release(); }

Communicator::Communicator(Communicator&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      ownership_(std::exchange(other.ownership_, Ownership::kBorrow)),
      rank_(other.rank_),
      size_(other.size_) {}

Communicator& Communicator::operator=(Communicator&& other) noexcept {
  if (this != &other) {
    release();
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    ownership_ = std::exchange(other.ownership_, Ownership::kBorrow);
    rank_ = other.rank_;
    size_ = other.size_;
  }
  return *this;
}

void Communicator::release() noexcept {
  int finalized = 0;
  MPI_Finalized(&finalized);
  // Freeing after MPI_Finalize is erroneous; the communicator is gone anyway.
  if (ownership_ == Ownership::kTake && comm_ != MPI_COMM_NULL && !finalized) {
    MPI_Comm_free(&comm_);
  }
  comm_ = MPI_COMM_NULL;
}

Communicator Communicator::dup() const {
  MPI_Comm out = MPI_COMM_NULL;
  check(MPI_Comm_dup(comm_, &out), "MPI_Comm_dup");
  return Communicator(out, Ownership::kTake);
}

Communicator Communicator::split(int color, int key) const {
  if (color < 0) throw std::invalid_argument("split: color must be >= 0");
  return Communicator(split_comm(comm_, color, key), Ownership::kTake);
}

Communicator Communicator::split_by_node() const {
  MPI_Comm out = MPI_COMM_NULL;
  check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &out),
        "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
  Communicator node(out, Ownership::kTake);
  // SimGrid 3.32 ignores the key: order the node's ranks as in this
  // communicator (callers take rank 0 for the lowest).
  if (simulated()) return node.split(0, rank_);
  return node;
}

Communicator Communicator::cartesian(const std::vector<int>& dims,
                                     const std::vector<int>& periods) const {
  long long positions = 1;
  for (int d : dims) positions *= d;
  if (dims.empty() || dims.size() != periods.size() || positions != size_) {
    throw std::invalid_argument("cartesian: " + std::to_string(dims.size()) + " dims and " +
                                std::to_string(periods.size()) + " periods for " +
                                std::to_string(size_) + " ranks");
  }
  MPI_Comm out = MPI_COMM_NULL;
  check(MPI_Cart_create(comm_, static_cast<int>(dims.size()), dims.data(), periods.data(), 0, &out),
        "MPI_Cart_create");
  return Communicator(out, Ownership::kTake);
}

Communicator Communicator::distributed_graph(const std::vector<int>& neighbours,
                                             const std::vector<int>& weights) const {
  if (!weights.empty() && weights.size() != neighbours.size()) {
    throw std::invalid_argument("distributed_graph: " + std::to_string(neighbours.size()) +
                                " neighbours and " + std::to_string(weights.size()) + " weights");
  }
  const int degree = static_cast<int>(neighbours.size());
  // MPI wants non-null arrays even for degree 0 (some implementations read them).
  const int none = 0;
  const int* list = degree > 0 ? neighbours.data() : &none;
  const int* w = weights.empty() ? MPI_UNWEIGHTED : degree > 0 ? weights.data() : MPI_WEIGHTS_EMPTY;
  MPI_Comm out = MPI_COMM_NULL;
  check(MPI_Dist_graph_create_adjacent(comm_, degree, list, w, degree, list, w, MPI_INFO_NULL, 0,
                                       &out),
        "MPI_Dist_graph_create_adjacent");
  return Communicator(out, Ownership::kTake);
}

void Communicator::barrier() const { check(MPI_Barrier(comm_), "MPI_Barrier"); }

int Communicator::allreduce_max(int value) const {
  int result = 0;
  check(MPI_Allreduce(&value, &result, 1, MPI_INT, MPI_MAX, comm_), "MPI_Allreduce");
  return result;
}

std::vector<int> Communicator::allgather(int value) const {
  std::vector<int> all(size_);
  check(MPI_Allgather(&value, 1, MPI_INT, all.data(), 1, MPI_INT, comm_), "MPI_Allgather");
  return all;
}

std::string Communicator::processor_name() {
  char name[MPI_MAX_PROCESSOR_NAME];
  int length = 0;
  check(MPI_Get_processor_name(name, &length), "MPI_Get_processor_name");
  return std::string(name, length);
}

bool simulated() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  if (MPI_Get_library_version(version, &length) != MPI_SUCCESS) return false;
  const std::string v(version, static_cast<std::size_t>(length));
  return v.find("SMPI") != std::string::npos || v.find("SimGrid") != std::string::npos;
}

namespace {

// MPI_Comm_split without SMPI's split. SimGrid 3.32's split gathers every
// (color, key) at rank 0, and nearly all of its time goes to a list walk in
// each completion of that gather: 33 s of real time at 1,024 ranks, 335 s at
// 2,048, not done after 58 min at 4,096. Its MPI_Comm_create sends nothing
// but a broadcast of the new communicator's id inside the group.
MPI_Comm split_by_allgather(MPI_Comm comm, int color, int key) {
  int size = 0;
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  const int mine[2] = {color, key};
  std::vector<int> all(2 * static_cast<std::size_t>(size));
  check(MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, comm), "MPI_Allgather");
  if (color == MPI_UNDEFINED) return MPI_COMM_NULL;
  std::vector<std::pair<int, int>> members;  // (key, rank in comm): the split's order
  for (int r = 0; r < size; ++r) {
    const std::size_t at = 2 * static_cast<std::size_t>(r);
    if (all[at] == color) members.emplace_back(all[at + 1], r);
  }
  std::sort(members.begin(), members.end());
  std::vector<int> ranks;
  ranks.reserve(members.size());
  for (const auto& member : members) ranks.push_back(member.second);

  MPI_Group parent = MPI_GROUP_NULL;
  check(MPI_Comm_group(comm, &parent), "MPI_Comm_group");
  MPI_Group group = MPI_GROUP_NULL;
  // Groups are freed before any error is reported, and their frees checked.
  const int incl = MPI_Group_incl(parent, static_cast<int>(ranks.size()), ranks.data(), &group);
  const int parent_freed = MPI_Group_free(&parent);
  check(incl, "MPI_Group_incl");
  check(parent_freed, "MPI_Group_free");
  MPI_Comm out = MPI_COMM_NULL;
  const int create = MPI_Comm_create_group(comm, group, 0, &out);
  const int group_freed = MPI_Group_free(&group);
  check(create, "MPI_Comm_create_group");
  check(group_freed, "MPI_Group_free");
  return out;
}

}  // namespace

std::optional<Communicator> split_members(MPI_Comm comm, int color, int key) {
  const MPI_Comm out = split_comm(comm, color < 0 ? MPI_UNDEFINED : color, key);
  if (out == MPI_COMM_NULL) return std::nullopt;
  return Communicator(out, Ownership::kTake);
}

MPI_Comm split_comm(MPI_Comm comm, int color, int key) {
  if (simulated()) return split_by_allgather(comm, color, key);
  MPI_Comm out = MPI_COMM_NULL;
  check(MPI_Comm_split(comm, color, key, &out), "MPI_Comm_split");
  return out;
}

int call_error_handler(MPI_Comm comm, int code) {
  if (simulated()) {
    MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
    if (PMPI_Comm_get_errhandler(comm, &handler) == MPI_SUCCESS) {
      const bool returns = handler == MPI_ERRORS_RETURN;
      const bool fatal = handler == MPI_ERRORS_ARE_FATAL;
      PMPI_Errhandler_free(&handler);
      if (returns) return code;
      if (fatal) {
        // SMPI's MPI_Abort ends the simulation with status 0.
        std::fprintf(stderr, "MPI error %d on a communicator whose errors are fatal: aborting\n",
                     code);
        std::abort();
      }
    }
  }
  PMPI_Comm_call_errhandler(comm, code);
  return code;
}

}  // namespace rankshape::mpi
