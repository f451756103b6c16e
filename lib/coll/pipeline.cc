#include "lib/coll/pipeline.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "lib/mpi/communicator.h"
#include "lib/mpi/error.h"

namespace rankshape::coll {
namespace {

using mpi::check;

// One non-blocking call per segment on one communicator.
struct Stage {
  enum Kind { kBcast, kReduce, kAllreduce } kind;
  MPI_Comm comm;
  int root;      // in comm
  bool is_root;  // this rank is root: reduce in place
};

// Segment s: `count` elements at `data` (an offset into the buffer).
struct Segments {
  char* base;
  int count;
  MPI_Aint extent;
  int per_segment;
  int number() const { return count == 0 ? 0 : (count + per_segment - 1) / per_segment; }
  char* data(int s) const { return base + static_cast<MPI_Aint>(s) * per_segment * extent; }
  int size(int s) const { return std::min(per_segment, count - s * per_segment); }
};

Segments segments_of(void* buffer, int count, MPI_Datatype type, std::int64_t segment_bytes) {
  MPI_Aint lb = 0, extent = 0;
  check(MPI_Type_get_extent(type, &lb, &extent), "MPI_Type_get_extent");
  int size = 0;
  check(MPI_Type_size(type, &size), "MPI_Type_size");
  const std::int64_t per = std::max<std::int64_t>(1, segment_bytes / std::max(size, 1));
  return {static_cast<char*>(buffer), count, extent,
          static_cast<int>(std::min<std::int64_t>(per, count > 0 ? count : 1))};
}

// Runs every stage on every segment. Stage k of segment s starts once
// stage k - 1 of s has finished and stage k of s - 1 has started: each
// communicator sees its calls in segment order on every rank, as MPI
// requires of collectives. At most kWindow segments are in flight.
void run(const std::vector<Stage>& stages, const Segments& seg, MPI_Datatype type, MPI_Op op) {
  constexpr int kWindow = 8;
  const int n = seg.number();
  const int k_count = static_cast<int>(stages.size());
  if (n == 0 || k_count == 0) return;
  std::vector<int> next_stage(static_cast<std::size_t>(n), 0);
  std::vector<int> next_segment(static_cast<std::size_t>(k_count), 0);
  std::vector<char> busy(static_cast<std::size_t>(n), 0);
  std::vector<MPI_Request> active;
  std::vector<int> owner;
  int done = 0;
  while (done < n) {
    for (bool posted = true; posted;) {
      posted = false;
      for (int k = 0; k < k_count; ++k) {
        const int s = next_segment[static_cast<std::size_t>(k)];
        if (s >= n || busy[static_cast<std::size_t>(s)] ||
            next_stage[static_cast<std::size_t>(s)] != k)
          continue;
        if (k == 0 && s >= next_segment.back() + kWindow) continue;
        const Stage& st = stages[static_cast<std::size_t>(k)];
        MPI_Request request = MPI_REQUEST_NULL;
        void* data = seg.data(s);
        const int count = seg.size(s);
        switch (st.kind) {
          case Stage::kBcast:
            check(MPI_Ibcast(data, count, type, st.root, st.comm, &request), "MPI_Ibcast");
            break;
          case Stage::kReduce:
            check(MPI_Ireduce(st.is_root ? MPI_IN_PLACE : data, st.is_root ? data : nullptr, count,
                              type, op, st.root, st.comm, &request),
                  "MPI_Ireduce");
            break;
          case Stage::kAllreduce:
            check(MPI_Iallreduce(MPI_IN_PLACE, data, count, type, op, st.comm, &request),
                  "MPI_Iallreduce");
            break;
        }
        ++next_segment[static_cast<std::size_t>(k)];
        posted = true;
        if (request == MPI_REQUEST_NULL) {
          // Finished at once (SMPI does that on one-rank communicators).
          if (++next_stage[static_cast<std::size_t>(s)] == k_count) ++done;
          continue;
        }
        active.push_back(request);
        owner.push_back(s);
        busy[static_cast<std::size_t>(s)] = 1;
      }
    }
    if (active.empty()) continue;
    int index = MPI_UNDEFINED;
    check(MPI_Waitany(static_cast<int>(active.size()), active.data(), &index, MPI_STATUS_IGNORE),
          "MPI_Waitany");
    if (index == MPI_UNDEFINED) throw std::logic_error("pipeline: MPI_Waitany found no request");
    const int s = owner[static_cast<std::size_t>(index)];
    active.erase(active.begin() + index);
    owner.erase(owner.begin() + index);
    busy[static_cast<std::size_t>(s)] = 0;
    if (++next_stage[static_cast<std::size_t>(s)] == k_count) ++done;
  }
}

// The highest level this rank is a member of.
int highest(const Hierarchy& h) {
  int top = 0;
  while (top < h.depth() && h.level(top + 1)) ++top;
  return top;
}

// Downward broadcasts: receive at the highest level (unless this rank
// holds the data there, or the top has just allreduced), then pass on as
// root of every level below.
void add_down(std::vector<Stage>& stages, const Hierarchy& h, int top_root, bool top_done) {
  const int high = highest(h);
  if (high < h.depth()) {
    stages.push_back({Stage::kBcast, h.level_down(high)->get(), 0, false});
  } else if (!top_done) {
    const int root = h.rank_in_level(top_root, high);
    stages.push_back({Stage::kBcast, h.level_down(high)->get(), root, h.rank() == top_root});
  }
  for (int j = high - 1; j >= 0; --j) {
    stages.push_back({Stage::kBcast, h.level_down(j)->get(), 0, true});
  }
}

// Upward reductions: as root of every level below the highest, then as a
// member at the highest; at the top, a reduce to its first member or an
// allreduce.
void add_up(std::vector<Stage>& stages, const Hierarchy& h, bool allreduce_top) {
  const int high = highest(h);
  for (int j = 0; j < high; ++j) stages.push_back({Stage::kReduce, h.level(j)->get(), 0, true});
  const mpi::Communicator* level = h.level(high);
  if (high == h.depth() && allreduce_top) {
    stages.push_back({Stage::kAllreduce, level->get(), 0, false});
  } else {
    stages.push_back({Stage::kReduce, level->get(), 0, level->rank() == 0});
  }
}

}  // namespace

bool can_pipeline() {
  static const bool simulated = mpi::simulated();
  return !simulated;
}

void pipelined_bcast(void* buffer, int count, MPI_Datatype type, int top_root, const Hierarchy& h,
                     std::int64_t segment_bytes) {
  std::vector<Stage> stages;
  add_down(stages, h, top_root, false);
  run(stages, segments_of(buffer, count, type, segment_bytes), type, MPI_OP_NULL);
}

void pipelined_reduce(void* acc, int count, MPI_Datatype type, MPI_Op op, const Hierarchy& h,
                      std::int64_t segment_bytes) {
  std::vector<Stage> stages;
  add_up(stages, h, false);
  run(stages, segments_of(acc, count, type, segment_bytes), type, op);
}

void pipelined_allreduce(void* buffer, int count, MPI_Datatype type, MPI_Op op, const Hierarchy& h,
                         std::int64_t segment_bytes) {
  std::vector<Stage> stages;
  add_up(stages, h, true);
  add_down(stages, h, 0, true);
  run(stages, segments_of(buffer, count, type, segment_bytes), type, op);
}

}  // namespace rankshape::coll
