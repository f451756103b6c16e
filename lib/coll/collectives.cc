#include "lib/coll/collectives.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

#include "lib/coll/algorithms.h"
#include "lib/coll/pipeline.h"
#include "lib/mpi/error.h"

namespace rankshape::coll {
namespace {

using mpi::check;

// Storage for count elements of a (possibly derived) datatype, laid out as
// MPI expects a user buffer of that type to be.
class TypedBuffer {
 public:
  TypedBuffer(std::int64_t count, MPI_Datatype type) {
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    check(MPI_Type_get_extent(type, &lb, &extent), "MPI_Type_get_extent");
    check(MPI_Type_get_true_extent(type, &true_lb, &true_extent), "MPI_Type_get_true_extent");
    const std::int64_t bytes = count > 0 ? (count - 1) * extent + true_extent : 0;
    storage_.resize(static_cast<std::size_t>(bytes) + 1);
    data_ = storage_.data() - true_lb;
  }
  void* get() { return data_; }

 private:
  std::vector<char> storage_;
  char* data_ = nullptr;
};

MPI_Aint extent_of(MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0;
  check(MPI_Type_get_extent(type, &lb, &extent), "MPI_Type_get_extent");
  return extent;
}

// A block's bytes: the type signature's size, which MPI requires to be
// the same on sender and receiver even when their datatypes differ.
// (MPI_Pack_size may be larger, and is under SMPI: count x extent, which
// differs between, say, a vector type and the ints it matches.)
std::int64_t packed_size(int count, MPI_Datatype type) {
  int size = 0;
  check(MPI_Type_size(type, &size), "MPI_Type_size");
  return static_cast<std::int64_t>(count) * size;
}

int as_int(std::int64_t n) {
  if (n > INT_MAX) throw std::length_error("message larger than INT_MAX bytes");
  return static_cast<int>(n);
}

// Typed data to and from its bytes, through a message to self received as
// (sent from) bytes: exactly packed_size() bytes on every MPI library,
// where MPI_Pack may add SMPI's gaps.
void pack(const void* in, int count, MPI_Datatype type, char* out, std::int64_t bytes, MPI_Comm) {
  if (count == 0) return;
  check(MPI_Sendrecv(in, count, type, 0, 0, out, as_int(bytes), MPI_BYTE, 0, 0, MPI_COMM_SELF,
                     MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
}

void unpack(const char* in, std::int64_t bytes, void* out, int count, MPI_Datatype type, MPI_Comm) {
  if (count == 0) return;
  check(MPI_Sendrecv(in, as_int(bytes), MPI_BYTE, 0, 0, out, count, type, 0, 0, MPI_COMM_SELF,
                     MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
}

// Copies count elements between two buffers of the same type.
void copy(const void* from, void* to, int count, MPI_Datatype type) {
  if (count == 0 || from == to) return;
  check(MPI_Sendrecv(from, count, type, 0, 0, to, count, type, 0, 0, MPI_COMM_SELF,
                     MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
}

char* at(void* base, std::int64_t block, int count, MPI_Aint extent) {
  return static_cast<char*>(base) + block * count * extent;
}
const char* at(const void* base, std::int64_t block, int count, MPI_Aint extent) {
  return static_cast<const char*>(base) + block * count * extent;
}

// Whether a buffer of blocks of this type for every comm rank, in rank
// order, is byte for byte the packed blocks in hierarchical order: ranks
// in hierarchical order (node by node, as launched in blocks) and a type
// whose bytes are its data, without gaps. A gather's root (an allgather's
// every rank) then receives the blocks straight into its buffer and a
// scatter's root sends them from it: no scratch of a block per rank
// (whose fresh pages cost more than the messages: glibc maps every
// allocation of 32 MiB or more afresh, 19 ms for 32 MiB here,
// bench/scratch_bench) and no copy.
bool lays_out_as_packed(const Hierarchy& h, MPI_Datatype type) {
  if (!std::is_sorted(h.order().begin(), h.order().end())) return false;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  int size = 0;
  check(MPI_Type_get_extent(type, &lb, &extent), "MPI_Type_get_extent");
  check(MPI_Type_get_true_extent(type, &true_lb, &true_extent), "MPI_Type_get_true_extent");
  check(MPI_Type_size(type, &size), "MPI_Type_size");
  return lb == 0 && true_lb == 0 && extent == size && true_extent == size;
}

// The top-level member that represents comm rank r.
int top_of(const Hierarchy& h, int r) { return h.lead(r, h.depth() - 1); }

// The comm rank that is rank 0 of the top communicator.
int first_top_member(const Hierarchy& h) {
  for (int r = 0; r < h.size(); ++r) {
    if (h.rank_in_level(r, h.depth()) == 0) return r;
  }
  return 0;
}

// Counts and displacements, in elements or bytes, of what a level leader
// holds for each member of its level j communicator: span(member) * unit
// each, in member order (= hierarchical order).
void member_layout(const Hierarchy& h, int j, std::int64_t unit, std::vector<int>& counts,
                   std::vector<int>& displs) {
  const mpi::Communicator* level = h.level(j);
  counts.assign(static_cast<std::size_t>(level->size()), 0);
  displs.assign(counts.size(), 0);
  for (int r = 0; r < h.size(); ++r) {
    const int k = h.rank_in_level(r, j);
    if (k >= 0 && (j == h.depth() || h.lead(r, j) == h.rank())) {
      counts[static_cast<std::size_t>(k)] = as_int(h.span(r, j) * unit);
    }
  }
  std::int64_t total = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    displs[k] = as_int(total);
    total += counts[k];
  }
}

// Gathers packed blocks (b bytes per comm rank) up the levels: on return
// every top member holds, in `blocks`, those of the ranks it represents in
// hierarchical order. `blocks` starts with this rank's own block.
void gather_up(const Hierarchy& h, std::vector<char>& blocks, std::int64_t b) {
  for (int j = 0; j < h.depth(); ++j) {
    const mpi::Communicator* level = h.level(j);
    if (!level) return;
    std::vector<int> counts, displs;
    std::int64_t total = 0;
    if (level->rank() == 0) {
      member_layout(h, j, b, counts, displs);
      total = static_cast<std::int64_t>(displs.back()) + counts.back();
    }
    std::vector<char> gathered(static_cast<std::size_t>(level->rank() == 0 ? total : 0));
    check(MPI_Gatherv(blocks.data(), as_int(static_cast<std::int64_t>(blocks.size())), MPI_BYTE,
                      gathered.data(), counts.data(), displs.data(), MPI_BYTE, 0, level->get()),
          "MPI_Gatherv");
    if (level->rank() != 0) return;
    blocks = std::move(gathered);
  }
}

// The reverse: the top members hold their ranks' blocks in hierarchical
// order; on return every rank's `blocks` is its own block.
void scatter_down(const Hierarchy& h, std::vector<char>& blocks, std::int64_t b) {
  for (int j = h.depth() - 1; j >= 0; --j) {
    const mpi::Communicator* level = h.level(j);
    if (!level) continue;
    std::vector<int> counts, displs;
    if (level->rank() == 0) member_layout(h, j, b, counts, displs);
    const std::int64_t mine = h.span(h.rank(), j) * b;
    std::vector<char> received(static_cast<std::size_t>(mine));
    check(MPI_Scatterv(blocks.data(), counts.data(), displs.data(), MPI_BYTE, received.data(),
                       as_int(mine), MPI_BYTE, 0, level->get()),
          "MPI_Scatterv");
    blocks = std::move(received);
  }
}

// Broadcasts data from every level leader down to its members, with the
// configured algorithm per level.
void bcast_down(const Hierarchy& h, void* data, int count, MPI_Datatype type,
                const Config& config = {}) {
  for (int j = h.depth() - 1; j >= 0; --j) {
    if (const mpi::Communicator* level = h.level(j)) {
      level_bcast(config.level(j), data, count, type, 0, level->get(), config.segment_bytes);
    }
  }
}

// The algorithm allreduce uses for the broadcast back down level j: the
// reduction's tree (binomial or k-nomial) or chain, or native.
Config downward(const Config& config) {
  Config down = config;
  for (Algorithm& a : down.levels) {
    if (a != Algorithm::kBinomial && a != Algorithm::kKnomial && a != Algorithm::kChain) {
      a = Algorithm::kNative;
    }
  }
  return down;
}

template <typename F>
int guarded(F&& f) {
  try {
    f();
    return MPI_SUCCESS;
  } catch (const mpi::MpiError& e) {
    return e.code();
  } catch (const std::length_error&) {
    return MPI_ERR_COUNT;
  } catch (const std::bad_alloc&) {
    return MPI_ERR_NO_MEM;
  }
}

// An allreduce composed of a reduce to rank 0 and a bcast from it, each
// part native or hierarchical (Config::parts).
int reduce_then_bcast(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                      const Hierarchy& h, const Config& config) {
  const Config& up = config.parts[0];
  const Config& down = config.parts[1];
  const bool is_root = h.rank() == 0;
  // Only the root may reduce in place: elsewhere recv holds the input.
  const void* in = send == MPI_IN_PLACE && !is_root ? recv : send;
  int code = up.hierarchical
                 ? reduce(in, recv, count, type, op, 0, h, up)
                 : MPI_Reduce(in, is_root ? recv : nullptr, count, type, op, 0, h.comm());
  if (code != MPI_SUCCESS) return code;
  code = down.hierarchical ? bcast(recv, count, type, 0, h, down)
                           : MPI_Bcast(recv, count, type, 0, h.comm());
  return code;
}

// An allreduce composed of a reduce_scatter_block of count / p elements
// per rank and an allgather of those blocks, each part native or
// hierarchical (Config::parts); the remainder by MPI's allreduce.
int reduce_scatter_then_allgather(const void* send, void* recv, int count, MPI_Datatype type,
                                  MPI_Op op, const Hierarchy& h, const Config& config) {
  return guarded([&] {
    const int block = count / h.size();
    const int whole = block * h.size();
    const MPI_Aint extent = extent_of(type);
    if (block > 0) {
      char* mine = at(recv, h.rank(), block, extent);
      // In place, the input is recv, whose blocks the result overwrites:
      // reduce into a buffer, then put this rank's block in place.
      std::optional<TypedBuffer> reduced;
      if (send == MPI_IN_PLACE) reduced.emplace(block, type);
      const void* in = send == MPI_IN_PLACE ? recv : send;
      void* out = reduced ? reduced->get() : mine;
      check(config.parts[0].hierarchical
                ? reduce_scatter_block(in, out, block, type, op, h, config.parts[0])
                : MPI_Reduce_scatter_block(in, out, block, type, op, h.comm()),
            "MPI_Reduce_scatter_block");
      if (reduced) copy(reduced->get(), mine, block, type);
      check(
          config.parts[1].hierarchical
              ? allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, block, type, h, config.parts[1])
              : MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, block, type, h.comm()),
          "MPI_Allgather");
    }
    if (whole < count) {
      const void* rest = send == MPI_IN_PLACE ? MPI_IN_PLACE : at(send, whole, 1, extent);
      check(MPI_Allreduce(rest, at(recv, whole, 1, extent), count - whole, type, op, h.comm()),
            "MPI_Allreduce");
    }
  });
}

}  // namespace

int bcast(void* buffer, int count, MPI_Datatype type, int root, const Hierarchy& h,
          const Config& config) {
  return guarded([&] {
    if (config.flat != Algorithm::kNative) {
      level_bcast(config.flat, buffer, count, type, root, h.comm());
      return;
    }
    // Up: the data climbs from root to its top-level representative.
    for (int j = 0; j < h.depth(); ++j) {
      const int holder = h.lead(root, j - 1), leader = h.lead(root, j);
      if (holder == leader) continue;
      if (h.rank() == holder) {
        check(MPI_Send(buffer, count, type, leader, 0, h.comm()), "MPI_Send");
      } else if (h.rank() == leader) {
        check(MPI_Recv(buffer, count, type, holder, 0, h.comm(), MPI_STATUS_IGNORE), "MPI_Recv");
      }
    }
    if (config.segment_bytes > 0 && h.depth() > 0 && can_pipeline()) {
      pipelined_bcast(buffer, count, type, top_of(h, root), h, config.segment_bytes);
      return;
    }
    if (const mpi::Communicator* top = h.level(h.depth())) {
      level_bcast(config.level(h.depth()), buffer, count, type,
                  h.rank_in_level(top_of(h, root), h.depth()), top->get(), config.segment_bytes);
    }
    // Down: every leader passes it on (root's own groups get it back).
    bcast_down(h, buffer, count, type, config);
  });
}

int reduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, int root,
           const Hierarchy& h, const Config& config) {
  return guarded([&] {
    if (config.flat != Algorithm::kNative) {
      level_reduce(config.flat, send, recv, count, type, op, root, h.comm());
      return;
    }
    const bool is_root = h.rank() == root;
    const void* mine = send == MPI_IN_PLACE ? recv : send;
    // Partial results accumulate in recv at the root, elsewhere in a buffer.
    TypedBuffer scratch(is_root ? 0 : count, type);
    void* acc = is_root ? recv : scratch.get();
    copy(mine, acc, count, type);
    int holder = top_of(h, root);
    if (config.segment_bytes > 0 && h.depth() > 0 && can_pipeline()) {
      pipelined_reduce(acc, count, type, op, h, config.segment_bytes);
      holder = first_top_member(h);
    } else {
      for (int j = 0; j <= h.depth(); ++j) {
        const mpi::Communicator* level = h.level(j);
        if (!level) break;
        const int target = j == h.depth() ? h.rank_in_level(holder, j) : 0;
        const bool receives = level->rank() == target;
        level_reduce(config.level(j), receives ? MPI_IN_PLACE : acc, receives ? acc : nullptr,
                     count, type, op, target, level->get(), config.segment_bytes);
        if (!receives) break;  // this rank's part is in
      }
    }
    if (holder != root) {
      if (h.rank() == holder) check(MPI_Send(acc, count, type, root, 0, h.comm()), "MPI_Send");
      if (is_root) {
        check(MPI_Recv(recv, count, type, holder, 0, h.comm(), MPI_STATUS_IGNORE), "MPI_Recv");
      }
    }
  });
}

int allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
              const Hierarchy& h, const Config& config) {
  if (config.parts.size() == 2) {
    return config.composition == Config::Composition::kReduceScatterAllgather
               ? reduce_scatter_then_allgather(send, recv, count, type, op, h, config)
               : reduce_then_bcast(send, recv, count, type, op, h, config);
  }
  return guarded([&] {
    if (config.flat != Algorithm::kNative) {
      level_allreduce(config.flat, send, recv, count, type, op, h.comm());
      return;
    }
    if (send != MPI_IN_PLACE) copy(send, recv, count, type);
    if (config.segment_bytes > 0 && h.depth() > 0 && can_pipeline()) {
      pipelined_allreduce(recv, count, type, op, h, config.segment_bytes);
      return;
    }
    // recv is the working buffer: partial sums go up to the top members,
    // the result comes back down and overwrites everyone's.
    for (int j = 0; j < h.depth(); ++j) {
      const mpi::Communicator* level = h.level(j);
      if (!level) break;
      const bool leads = level->rank() == 0;
      level_reduce(config.level(j), leads ? MPI_IN_PLACE : recv, leads ? recv : nullptr, count,
                   type, op, 0, level->get(), config.segment_bytes);
      if (!leads) break;
    }
    if (const mpi::Communicator* top = h.level(h.depth())) {
      level_allreduce(config.level(h.depth()), MPI_IN_PLACE, recv, count, type, op, top->get());
    }
    bcast_down(h, recv, count, type, downward(config));
  });
}

int gather(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
           MPI_Datatype recv_type, int root, const Hierarchy& h) {
  return guarded([&] {
    const bool is_root = h.rank() == root;
    // Block size: the sender's signature (the root's, for an in-place root).
    const std::int64_t b =
        is_root ? packed_size(recv_count, recv_type) : packed_size(send_count, send_type);
    std::vector<char> blocks(static_cast<std::size_t>(b));
    // An in-place root's block goes up from its place in recv, so that
    // every block the root ends with is a real one.
    if (is_root && send == MPI_IN_PLACE) {
      pack(at(recv, root, recv_count, extent_of(recv_type)), recv_count, recv_type, blocks.data(),
           b, h.comm());
    } else {
      pack(send, send_count, send_type, blocks.data(), b, h.comm());
    }
    gather_up(h, blocks, b);
    const int holder = top_of(h, root);
    const std::int64_t all = b * h.size();
    const bool direct = is_root && lays_out_as_packed(h, recv_type);
    if (const mpi::Communicator* top = h.level(h.depth())) {
      const int target = h.rank_in_level(holder, h.depth());
      std::vector<int> counts, displs;
      std::vector<char> gathered;
      char* into = nullptr;
      if (top->rank() == target) {
        member_layout(h, h.depth(), b, counts, displs);
        if (direct) {
          into = static_cast<char*>(recv);
        } else {
          gathered.resize(static_cast<std::size_t>(all));
          into = gathered.data();
        }
      }
      check(MPI_Gatherv(blocks.data(), as_int(static_cast<std::int64_t>(blocks.size())), MPI_BYTE,
                        into, counts.data(), displs.data(), MPI_BYTE, target, top->get()),
            "MPI_Gatherv");
      if (top->rank() == target && !direct) blocks = std::move(gathered);
    }
    if (holder != root) {
      if (h.rank() == holder) {
        check(MPI_Send(blocks.data(), as_int(all), MPI_BYTE, root, 0, h.comm()), "MPI_Send");
      }
      if (is_root) {
        if (!direct) blocks.resize(static_cast<std::size_t>(all));
        check(MPI_Recv(direct ? recv : blocks.data(), as_int(all), MPI_BYTE, holder, 0, h.comm(),
                       MPI_STATUS_IGNORE),
              "MPI_Recv");
      }
    }
    if (!is_root || direct) return;
    const MPI_Aint extent = extent_of(recv_type);
    for (int i = 0; i < h.size(); ++i) {
      const int r = h.order()[static_cast<std::size_t>(i)];
      unpack(blocks.data() + i * b, b, at(recv, r, recv_count, extent), recv_count, recv_type,
             h.comm());
    }
  });
}

int scatter(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
            MPI_Datatype recv_type, int root, const Hierarchy& h) {
  return guarded([&] {
    const bool is_root = h.rank() == root;
    const std::int64_t b =
        is_root ? packed_size(send_count, send_type) : packed_size(recv_count, recv_type);
    const std::int64_t all = b * h.size();
    std::vector<char> blocks;
    // The root's blocks in hierarchical order: send itself where it lays
    // out as packed, else packed into `blocks`.
    const char* source = nullptr;
    if (is_root) {
      if (lays_out_as_packed(h, send_type)) {
        source = static_cast<const char*>(send);
      } else {
        blocks.resize(static_cast<std::size_t>(all));
        const MPI_Aint extent = extent_of(send_type);
        for (int i = 0; i < h.size(); ++i) {
          const int r = h.order()[static_cast<std::size_t>(i)];
          pack(at(send, r, send_count, extent), send_count, send_type, blocks.data() + i * b, b,
               h.comm());
        }
        source = blocks.data();
      }
    }
    const int holder = top_of(h, root);
    if (holder != root) {
      if (is_root) {
        check(MPI_Send(source, as_int(all), MPI_BYTE, holder, 0, h.comm()), "MPI_Send");
      }
      if (h.rank() == holder) {
        blocks.resize(static_cast<std::size_t>(all));
        check(MPI_Recv(blocks.data(), as_int(all), MPI_BYTE, root, 0, h.comm(), MPI_STATUS_IGNORE),
              "MPI_Recv");
        source = blocks.data();
      }
    }
    if (const mpi::Communicator* top = h.level(h.depth())) {
      // The holder scatters to the top members their ranks' blocks.
      std::vector<int> counts, displs;
      member_layout(h, h.depth(), b, counts, displs);
      std::vector<char> mine(
          static_cast<std::size_t>(counts[static_cast<std::size_t>(top->rank())]));
      check(MPI_Scatterv(source, counts.data(), displs.data(), MPI_BYTE, mine.data(),
                         as_int(static_cast<std::int64_t>(mine.size())), MPI_BYTE,
                         h.rank_in_level(holder, h.depth()), top->get()),
            "MPI_Scatterv");
      blocks = std::move(mine);
    }
    scatter_down(h, blocks, b);
    if (!(is_root && recv == MPI_IN_PLACE))
      unpack(blocks.data(), b, recv, recv_count, recv_type, h.comm());
  });
}

int allgather(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
              MPI_Datatype recv_type, const Hierarchy& h, const Config& config) {
  return guarded([&] {
    if (config.flat != Algorithm::kNative) {
      level_allgather(config.flat, send, send_count, send_type, recv, recv_count, recv_type,
                      h.comm());
      return;
    }
    const std::int64_t b = packed_size(recv_count, recv_type);
    const MPI_Aint extent = extent_of(recv_type);
    std::vector<char> blocks(static_cast<std::size_t>(b));
    if (send == MPI_IN_PLACE) {
      pack(at(recv, h.rank(), recv_count, extent), recv_count, recv_type, blocks.data(), b,
           h.comm());
    } else {
      pack(send, send_count, send_type, blocks.data(), b, h.comm());
    }
    gather_up(h, blocks, b);
    const std::int64_t all = b * h.size();
    // Every rank's blocks, straight into recv where it lays out as packed
    // (each rank decides for its own buffer).
    const bool direct = lays_out_as_packed(h, recv_type);
    std::vector<char> scratch(direct ? 0 : static_cast<std::size_t>(all));
    char* const everything = direct ? static_cast<char*>(recv) : scratch.data();
    if (const mpi::Communicator* top = h.level(h.depth())) {
      std::vector<int> counts, displs;
      member_layout(h, h.depth(), b, counts, displs);
      check(
          MPI_Allgatherv(blocks.data(), as_int(static_cast<std::int64_t>(blocks.size())), MPI_BYTE,
                         everything, counts.data(), displs.data(), MPI_BYTE, top->get()),
          "MPI_Allgatherv");
    }
    bcast_down(h, everything, as_int(all), MPI_BYTE);
    if (direct) return;
    for (int i = 0; i < h.size(); ++i) {
      const int r = h.order()[static_cast<std::size_t>(i)];
      if (r == h.rank() && send == MPI_IN_PLACE) continue;
      unpack(everything + i * b, b, at(recv, r, recv_count, extent), recv_count, recv_type,
             h.comm());
    }
  });
}

int reduce_scatter_block(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                         const Hierarchy& h, const Config& config) {
  return guarded([&] {
    if (config.flat != Algorithm::kNative) {
      level_reduce_scatter_block(config.flat, send, recv, count, type, op, h.comm());
      return;
    }
    const int p = h.size();
    const MPI_Aint extent = extent_of(type);
    const void* in = send == MPI_IN_PLACE ? recv : send;
    const int total = as_int(static_cast<std::int64_t>(p) * count);
    // Everyone's p blocks in hierarchical order, reduced up the levels. In
    // that order already, a rank's input is sent up as it is, and only the
    // node leaders, which receive sums, hold p blocks of scratch (fresh
    // pages of p blocks cost more than the messages: see lays_out_as_packed).
    std::optional<TypedBuffer> work;
    const void* up = in;  // what this rank sends up
    if (!std::is_sorted(h.order().begin(), h.order().end())) {
      work.emplace(total, type);
      for (int i = 0; i < p; ++i) {
        copy(at(in, h.order()[static_cast<std::size_t>(i)], count, extent),
             at(work->get(), i, count, extent), count, type);
      }
      up = work->get();
    } else if (h.depth() > 0 && h.level(0)->rank() == 0) {
      work.emplace(total, type);
    }
    bool in_top = true;
    for (int j = 0; j < h.depth(); ++j) {
      const mpi::Communicator* level = h.level(j);
      // level_reduce: a node of one rank is a level of one (SMPI's ompi
      // reduce aborts there).
      if (level->rank() == 0) {
        level_reduce(Algorithm::kNative, up == work->get() ? MPI_IN_PLACE : up, work->get(), total,
                     type, op, 0, level->get());
        up = work->get();
      } else {
        level_reduce(Algorithm::kNative, up, nullptr, total, type, op, 0, level->get());
        in_top = false;
        break;
      }
    }
    // Top members split the reduced vector by the ranks they represent;
    // then each level scatters the parts down. Blocks stay in hierarchical
    // order, so a part is a contiguous run of blocks. With no levels below
    // the top, its members are the ranks, and each takes its block straight
    // into recv (in place when its input is there).
    std::optional<TypedBuffer> part;
    if (in_top) {
      const int top = h.depth();
      std::vector<int> counts, displs;
      member_layout(h, top, count, counts, displs);
      void* out = recv;
      if (top > 0) {
        out = part.emplace(static_cast<std::int64_t>(h.span(h.rank(), top)) * count, type).get();
      }
      check(MPI_Reduce_scatter(up == out ? MPI_IN_PLACE : up, out, counts.data(), type, op,
                               h.level(top)->get()),
            "MPI_Reduce_scatter");
    }
    // Down the levels; the last scatters straight into recv (every rank is
    // in level 0, where each holds one block).
    for (int j = h.depth() - 1; j >= 0; --j) {
      const mpi::Communicator* level = h.level(j);
      if (!level) continue;
      std::vector<int> counts, displs;
      if (level->rank() == 0) member_layout(h, j, count, counts, displs);
      const int mine = as_int(static_cast<std::int64_t>(h.span(h.rank(), j)) * count);
      std::optional<TypedBuffer> next;
      if (j > 0) next.emplace(mine, type);
      check(MPI_Scatterv(part ? part->get() : nullptr, counts.data(), displs.data(), type,
                         next ? next->get() : recv, mine, type, 0, level->get()),
            "MPI_Scatterv");
      if (next) part.emplace(std::move(*next));
    }
  });
}

int alltoall(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
             MPI_Datatype recv_type, const Hierarchy& h) {
  return guarded([&] {
    const int p = h.size();
    const std::int64_t b = packed_size(recv_count, recv_type);
    const MPI_Aint send_extent = extent_of(send == MPI_IN_PLACE ? recv_type : send_type);
    // My p blocks, packed in hierarchical order of their destinations.
    std::vector<char> mine(static_cast<std::size_t>(b * p));
    for (int i = 0; i < p; ++i) {
      const int d = h.order()[static_cast<std::size_t>(i)];
      if (send == MPI_IN_PLACE) {
        pack(at(recv, d, recv_count, send_extent), recv_count, recv_type, mine.data() + i * b, b,
             h.comm());
      } else {
        pack(at(send, d, send_count, send_extent), send_count, send_type, mine.data() + i * b, b,
             h.comm());
      }
    }
    // Node of each rank: its level 0 leader; members of a node in order.
    const int node_leader = h.depth() > 0 ? h.lead(h.rank(), 0) : h.rank();
    const mpi::Communicator* node = h.depth() > 0 ? h.level(0) : nullptr;
    const int n = node ? node->size() : 1;
    std::vector<char> from_node;  // n x p blocks: member-major, destinations in hierarchical order
    if (node) {
      from_node.resize(static_cast<std::size_t>(node->rank() == 0 ? b * p * n : 0));
      check(MPI_Gather(mine.data(), as_int(b * p), MPI_BYTE, from_node.data(), as_int(b * p),
                       MPI_BYTE, 0, node->get()),
            "MPI_Gather");
    } else {
      from_node = mine;
    }
    std::vector<char> to_members;  // n x p blocks: member-major, sources in hierarchical order
    if (h.rank() == node_leader) {
      const mpi::Communicator* leaders = h.group_leaders();
      const int g = leaders->size();
      // Destination and source ranges of every node in hierarchical order.
      std::vector<int> first(static_cast<std::size_t>(g)), size(static_cast<std::size_t>(g));
      for (int r = 0; r < p; ++r) {
        const int k = h.rank_in_group_leaders(r);
        if (k >= 0) {
          first[static_cast<std::size_t>(k)] = h.position(r);
          size[static_cast<std::size_t>(k)] = h.depth() > 0 ? h.span(r, 1) : 1;
        }
      }
      // Send to node k: for each of my members s, blocks for k's ranks.
      std::vector<int> send_counts(static_cast<std::size_t>(g)), send_displs(send_counts.size());
      std::vector<int> recv_counts(send_counts.size()), recv_displs(send_counts.size());
      std::vector<char> outgoing(static_cast<std::size_t>(b * p * n));
      std::int64_t offset = 0;
      for (int k = 0; k < g; ++k) {
        send_displs[static_cast<std::size_t>(k)] = as_int(offset);
        for (int s = 0; s < n; ++s) {
          const char* src =
              from_node.data() +
              (static_cast<std::int64_t>(s) * p + first[static_cast<std::size_t>(k)]) * b;
          std::copy(src, src + size[static_cast<std::size_t>(k)] * b, outgoing.data() + offset);
          offset += size[static_cast<std::size_t>(k)] * b;
        }
        send_counts[static_cast<std::size_t>(k)] =
            as_int(offset - send_displs[static_cast<std::size_t>(k)]);
      }
      std::int64_t in_total = 0;
      for (int k = 0; k < g; ++k) {
        recv_displs[static_cast<std::size_t>(k)] = as_int(in_total);
        recv_counts[static_cast<std::size_t>(k)] =
            as_int(size[static_cast<std::size_t>(k)] * n * b);
        in_total += recv_counts[static_cast<std::size_t>(k)];
      }
      std::vector<char> incoming(static_cast<std::size_t>(in_total));
      check(MPI_Alltoallv(outgoing.data(), send_counts.data(), send_displs.data(), MPI_BYTE,
                          incoming.data(), recv_counts.data(), recv_displs.data(), MPI_BYTE,
                          leaders->get()),
            "MPI_Alltoallv");
      // From node k: for each source s in k, blocks for my n members.
      to_members.resize(static_cast<std::size_t>(b * p * n));
      for (int k = 0; k < g; ++k) {
        for (int s = 0; s < size[static_cast<std::size_t>(k)]; ++s) {
          const int source_position = first[static_cast<std::size_t>(k)] + s;
          for (int d = 0; d < n; ++d) {
            const char* src = incoming.data() + recv_displs[static_cast<std::size_t>(k)] +
                              (static_cast<std::int64_t>(s) * n + d) * b;
            std::copy(src, src + b,
                      to_members.data() + (static_cast<std::int64_t>(d) * p + source_position) * b);
          }
        }
      }
    }
    std::vector<char> received(static_cast<std::size_t>(b * p));
    if (node) {
      check(MPI_Scatter(to_members.data(), as_int(b * p), MPI_BYTE, received.data(), as_int(b * p),
                        MPI_BYTE, 0, node->get()),
            "MPI_Scatter");
    } else {
      received = to_members;
    }
    const MPI_Aint extent = extent_of(recv_type);
    for (int i = 0; i < p; ++i) {
      unpack(received.data() + i * b, b,
             at(recv, h.order()[static_cast<std::size_t>(i)], recv_count, extent), recv_count,
             recv_type, h.comm());
    }
  });
}

int barrier(const Hierarchy& h, const Config& config) {
  return guarded([&] {
    if (config.flat != Algorithm::kNative) {
      level_barrier(config.flat, h.comm());
      return;
    }
    for (int j = 0; j <= h.depth(); ++j) {
      if (const mpi::Communicator* level = h.level(j))
        check(MPI_Barrier(level->get()), "MPI_Barrier");
    }
    for (int j = h.depth() - 1; j >= 0; --j) {
      if (const mpi::Communicator* level = h.level(j))
        check(MPI_Barrier(level->get()), "MPI_Barrier");
    }
  });
}

}  // namespace rankshape::coll
