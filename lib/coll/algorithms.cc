// Collective algorithms over point-to-point messages, one communicator at a
// time. Ranks are relative to the root where the algorithm is symmetric
// (v = (rank - root) mod p; the trees, on a power-of-two count, v = rank
// XOR root: see Relative); reductions that must keep rank order run over
// real ranks. Data is split into chunks of whole elements: n elements in k
// chunks, the first n % k of them one element longer.
//
// With p = 5 ranks, root 0 (p = 4 or 6 where that shows more):
//   binomial bcast:  0->4; 0->2; 0->1, 2->3 (three rounds, halving distance).
//   k-nomial bcast (radix k = 4, p = 6): 0->4, then 0->1, 0->2, 0->3 and
//       4->5; a parent sends to its k - 1 children of a round at once.
//   scatter-allgather bcast (p = 4, chunks c0..c3): scatter 0->2 {c2,c3},
//       0->1 {c1}, 2->3 {c3}; then a ring: in each of p-1 steps every rank
//       passes the chunk it got last to rank+1, so all hold c0..c3.
//   chain bcast: 0->1->2->3->4 in segments; 1 forwards segment i while
//       segment i+1 is on its way from 0.
//   binomial reduce: 1->0, 3->2; 2->0; 4->0. Every receiver computes
//       mine op child: its child holds the next higher ranks, so the result
//       is x0 op x1 op ... op x4 whatever the op.
//   k-nomial reduce (k = 4, p = 6): 1, 2, 3 -> 0 and 5 -> 4 at once; then
//       4 -> 0. Children are combined in rank order, each holding the run
//       of ranks that follows its parent's.
//   chain reduce: 4->3->2->1->0 in segments; 3 sends x3 op x4 of segment i
//       on while segment i+1 is on its way from 4, so every link carries
//       the message once (the bandwidth of a chain bcast, reversed).
//   recursive doubling allreduce (p = 6: 4 active): fold 0->1, 2->3; ranks
//       1, 3, 4, 5 exchange at distance 1 then 2 (lower rank's partial on
//       the left); unfold 1->0, 3->2.
//   ring allreduce (p = 3, chunks c0..c2): reduce-scatter in p-1 steps, each
//       rank sending chunk (r - s) to r+1, which adds it into its own copy;
//       rank r then holds chunk r+1 complete; an allgather ring spreads them.
//   Rabenseifner allreduce (p = 4): fold as above; halving, nearest
//       partner first (MPICH's order: the largest exchanges stay among
//       neighbouring ranks, on one node when ranks are placed in blocks):
//       0<->1 and 2<->3 swap halves (0 and 2 keep c0,c1), then 0<->2 and
//       1<->3 swap quarters, so rank r holds chunk bitreverse(r) complete
//       (0: c0, 1: c2, 2: c1, 3: c3); doubling reverses it, farthest
//       partner first.
//   Rabenseifner reduce (p = 4, root 0): the same halving, then a gather,
//       farthest first: 2->0 {c1}, 3->1 {c3}; 1->0 {c2,c3}. To root 2 the
//       ranks are numbered rank XOR 2: the same pairs exchange, and the
//       gather ends at 2.
//   recursive doubling allgather (p = 4, blocks b0..b3): 0<->1 and 2<->3
//       swap their own blocks, then 0<->2 and 1<->3 swap the pairs they
//       hold ({b0,b1} for {b2,b3}).
//   recursive halving reduce_scatter_block (p = 4): farthest partner
//       first, the doubling's mirror: 0<->2 and 1<->3 swap halves (0 and 1
//       keep b0,b1, adding in the partner's copies), then 0<->1 and 2<->3
//       swap quarters, so rank r holds block r reduced.
#include "lib/coll/algorithms.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "lib/mpi/error.h"

namespace rankshape::coll {
namespace {

using mpi::check;

// Every point-to-point message of these algorithms; comm is private to the
// caller, and between two ranks messages are matched in the order sent.
constexpr int kTag = 2718;
constexpr std::int64_t kDefaultSegmentBytes = 64 * 1024;
// Chain: sends in flight per rank before the oldest must complete.
constexpr int kPendingSends = 16;

struct Names {
  Algorithm algorithm;
  std::string_view name;
};
constexpr std::array<Names, 11> kNames = {{
    {Algorithm::kNative, "native"},
    {Algorithm::kBinomial, "binomial"},
    {Algorithm::kKnomial, "knomial"},
    {Algorithm::kScatterAllgather, "scatter-allgather"},
    {Algorithm::kChain, "chain"},
    {Algorithm::kBinary, "binary"},
    {Algorithm::kRecursiveDoubling, "recursive-doubling"},
    {Algorithm::kRing, "ring"},
    {Algorithm::kRabenseifner, "rabenseifner"},
    {Algorithm::kRecursiveHalving, "recursive-halving"},
    {Algorithm::kLinear, "linear"},
}};

struct Layout {
  MPI_Aint extent = 0;
  MPI_Aint true_lb = 0;
  MPI_Aint true_extent = 0;
  int size = 0;  // bytes of data per element
};

Layout layout_of(MPI_Datatype type) {
  Layout l;
  MPI_Aint lb = 0;
  check(MPI_Type_get_extent(type, &lb, &l.extent), "MPI_Type_get_extent");
  check(MPI_Type_get_true_extent(type, &l.true_lb, &l.true_extent), "MPI_Type_get_true_extent");
  check(MPI_Type_size(type, &l.size), "MPI_Type_size");
  return l;
}

// Storage for count elements of a (possibly derived) datatype, laid out as
// MPI expects a user buffer of that type to be: (count - 1) * extent +
// true_extent bytes, addressed from true_lb.
class TypedBuffer {
 public:
  TypedBuffer(std::int64_t count, const Layout& l) {
    const std::int64_t bytes = count > 0 ? (count - 1) * l.extent + l.true_extent : 0;
    storage_.resize(static_cast<std::size_t>(bytes) + 1);
    data_ = storage_.data() - l.true_lb;
  }
  void* get() { return data_; }

 private:
  std::vector<char> storage_;
  char* data_ = nullptr;
};

// Element i of a buffer of elements with the given extent.
char* at(void* base, std::int64_t i, const Layout& l) {
  return static_cast<char*>(base) + i * l.extent;
}

// First element of chunk c when n elements are split into k chunks, the
// first n % k one element longer than the others.
std::int64_t chunk_start(std::int64_t n, int k, int c) {
  return c * (n / k) + std::min<std::int64_t>(c, n % k);
}

// Copies count elements between two buffers of the same type: one memcpy
// when the elements fill their extents without gaps, else through MPI_Pack
// (which writes only the type's data, never the gaps).
void copy(const void* from, void* to, std::int64_t count, MPI_Datatype type, const Layout& l) {
  if (count == 0 || from == to) return;
  if (l.size == l.true_extent && (count == 1 || l.extent == l.true_extent)) {
    std::memcpy(static_cast<char*>(to) + l.true_lb, static_cast<const char*>(from) + l.true_lb,
                static_cast<std::size_t>(count * l.size));
    return;
  }
  const int n = static_cast<int>(count);
  int bytes = 0;
  check(MPI_Pack_size(n, type, MPI_COMM_SELF, &bytes), "MPI_Pack_size");
  std::vector<char> packed(static_cast<std::size_t>(bytes) + 1);
  int position = 0;
  check(MPI_Pack(from, n, type, packed.data(), bytes, &position, MPI_COMM_SELF), "MPI_Pack");
  position = 0;
  check(MPI_Unpack(packed.data(), bytes, &position, to, n, type, MPI_COMM_SELF), "MPI_Unpack");
}

void send_to(const void* buffer, std::int64_t count, MPI_Datatype type, int to, MPI_Comm comm) {
  check(MPI_Send(buffer, static_cast<int>(count), type, to, kTag, comm), "MPI_Send");
}
void receive_from(void* buffer, std::int64_t count, MPI_Datatype type, int from, MPI_Comm comm) {
  check(MPI_Recv(buffer, static_cast<int>(count), type, from, kTag, comm, MPI_STATUS_IGNORE),
        "MPI_Recv");
}
void exchange(const void* out, std::int64_t out_count, int to, void* in, std::int64_t in_count,
              int from, MPI_Datatype type, MPI_Comm comm) {
  check(MPI_Sendrecv(out, static_cast<int>(out_count), type, to, kTag, in,
                     static_cast<int>(in_count), type, from, kTag, comm, MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
}
// inout = in op inout.
void combine(const void* in, void* inout, std::int64_t count, MPI_Datatype type, MPI_Op op) {
  if (count == 0) return;
  check(MPI_Reduce_local(in, inout, static_cast<int>(count), type, op), "MPI_Reduce_local");
}

bool commutative(MPI_Op op) {
  int c = 0;
  check(MPI_Op_commutative(op, &c), "MPI_Op_commutative");
  return c != 0;
}

struct Shape {
  int p = 1;
  int me = 0;
};
Shape shape_of(MPI_Comm comm) {
  Shape s;
  check(MPI_Comm_size(comm, &s.p), "MPI_Comm_size");
  check(MPI_Comm_rank(comm, &s.me), "MPI_Comm_rank");
  return s;
}

void check_arguments(int count, std::optional<int> root, const Shape& s, const char* call) {
  if (count < 0) throw mpi::MpiError(call, MPI_ERR_COUNT);
  if (root && (*root < 0 || *root >= s.p)) throw mpi::MpiError(call, MPI_ERR_ROOT);
}

[[noreturn]] void not_for(Algorithm a, const char* collective) {
  throw std::invalid_argument("algorithm '" + std::string(algorithm_name(a)) +
                              "' does not apply to " + collective);
}

// Tree positions relative to the tree's root. A subtree of the binomial
// and k-nomial trees is an aligned block of positions ([v, v + 2^k) with v
// a multiple of 2^k). On a power-of-two count, v = rank XOR root maps each
// such block onto an aligned block of ranks, as root 0's tree has them:
// ranks placed node by node (and nodes rack by rack) then keep a subtree
// on as few nodes and racks whatever the root. The rotation v = (rank -
// root) mod p shifts the blocks: a k-nomial tree over 32 leaders in racks
// of 8 has 5 edges between racks from leader 0, 9 from leader 1 rotated,
// 5 from any leader numbered XOR.
struct Relative {
  Relative(int tree_root, int ranks)
      : root(tree_root), p(ranks), flip((ranks & (ranks - 1)) == 0) {}
  int of(int rank) const { return flip ? rank ^ root : (rank - root + p) % p; }
  int real(int v) const { return flip ? v ^ root : (v + root) % p; }
  int root, p;
  bool flip;
};

// ---- bcast ----------------------------------------------------------------

void binomial_bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
                    const Shape& s) {
  const Relative rel(root, s.p);
  const int v = rel.of(s.me);
  int mask = 1;
  for (; mask < s.p; mask <<= 1) {
    if (v & mask) {
      receive_from(buffer, count, type, rel.real(v - mask), comm);
      break;
    }
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (v + mask < s.p) send_to(buffer, count, type, rel.real(v + mask), comm);
  }
}

constexpr int kRadix = kKnomialRadix;

// v's parent in the k-nomial tree over relative ranks (v > 0), and the
// place value of the digit that links them: v = parent + d * place.
std::pair<int, int> knomial_parent(int v) {
  int place = 1;
  while ((v / place) % kRadix == 0) place *= kRadix;
  return {v - (v / place) % kRadix * place, place};
}

// The place value of v's lowest round of children: v's link to its
// parent (the top for v = 0, above p).
int knomial_children_below(int v, int p) {
  if (v != 0) return knomial_parent(v).second;
  int place = 1;
  while (place < p) place *= kRadix;
  return place;
}

void knomial_bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
                   const Shape& s) {
  const Relative rel(root, s.p);
  const int v = rel.of(s.me);
  if (v != 0) receive_from(buffer, count, type, rel.real(knomial_parent(v).first), comm);
  // Far subtrees first; a round's children at once, one round after the
  // other (posting every round at once would share the parent's link
  // among all its children, and hold back the far subtrees' roots).
  for (int place = knomial_children_below(v, s.p) / kRadix; place > 0; place /= kRadix) {
    std::vector<MPI_Request> sent;
    for (int d = 1; d < kRadix && v + d * place < s.p; ++d) {
      sent.emplace_back();
      check(MPI_Isend(buffer, count, type, rel.real(v + d * place), kTag, comm, &sent.back()),
            "MPI_Isend");
    }
    check(MPI_Waitall(static_cast<int>(sent.size()), sent.data(), MPI_STATUSES_IGNORE),
          "MPI_Waitall");
  }
}

void scatter_allgather_bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
                             const Shape& s) {
  const Layout l = layout_of(type);
  const int p = s.p, v = (s.me - root + p) % p;
  // Chunk c belongs to relative rank c; a subtree [v, v + mask) gets its
  // chunks in one message.
  auto start = [&](int c) { return chunk_start(count, p, std::min(c, p)); };
  auto real = [&](int x) { return (x + root) % p; };
  int mask = 1;
  for (; mask < p; mask <<= 1) {
    if (v & mask) {
      const std::int64_t n = start(v + mask) - start(v);
      if (n > 0) receive_from(at(buffer, start(v), l), n, type, real(v - mask), comm);
      break;
    }
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (v + mask >= p) continue;
    const std::int64_t n = start(v + 2 * mask) - start(v + mask);
    if (n > 0) send_to(at(buffer, start(v + mask), l), n, type, real(v + mask), comm);
  }
  if (scatter_allgather_doubles(static_cast<std::int64_t>(count) * l.size, p)) {
    // Recursive doubling: in the step of `mask`, v and v ^ mask swap the
    // chunks of their aligned blocks of mask ranks (MPICH's order).
    for (mask = 1; mask < p; mask <<= 1) {
      const int mine = v & ~(mask - 1), theirs = (v ^ mask) & ~(mask - 1);
      exchange(at(buffer, start(mine), l), start(mine + mask) - start(mine), real(v ^ mask),
               at(buffer, start(theirs), l), start(theirs + mask) - start(theirs), real(v ^ mask),
               type, comm);
    }
    return;
  }
  // Ring allgather: in step i, pass on chunk v - i, receive chunk v - i - 1.
  const int right = real(v + 1), left = real(v - 1 + p);
  for (int i = 0; i < p - 1; ++i) {
    const int out = (v - i + p) % p, in = (v - i - 1 + 2 * p) % p;
    exchange(at(buffer, start(out), l), start(out + 1) - start(out), right,
             at(buffer, start(in), l), start(in + 1) - start(in), left, type, comm);
  }
}

// count elements cut into segments of about `bytes`: whole elements, at
// least one each.
struct Segments {
  Segments(int elements, std::int64_t bytes, const Layout& l)
      : count(elements),
        per(l.size > 0 ? std::max<std::int64_t>(1, bytes / l.size) : std::max(elements, 1)),
        number((count + per - 1) / per) {}
  std::int64_t first(std::int64_t i) const { return i * per; }
  int length(std::int64_t i) const {
    return static_cast<int>(std::min<std::int64_t>(per, count - i * per));
  }
  std::int64_t count, per, number;
};

// One rank's part of a pipeline (a chain, a tree) that moves count
// elements of buffer segment by segment from rank `from` (-1: none) to the
// ranks `to`: segment i arrives in place, arrived(first element, length)
// runs on it, and it goes on to each of `to`. Two receives are posted at
// once (segments i and i + 1), up to kPendingSends sends are in flight.
template <typename Arrived>
void run_pipeline(void* buffer, int count, MPI_Datatype type, int from, const std::vector<int>& to,
                  MPI_Comm comm, std::int64_t segment_bytes, Arrived arrived) {
  const Layout l = layout_of(type);
  const Segments cut(count, segment_bytes > 0 ? segment_bytes : kDefaultSegmentBytes, l);
  std::array<MPI_Request, 2> receives = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  std::array<MPI_Request, kPendingSends> sends;
  sends.fill(MPI_REQUEST_NULL);
  std::int64_t sent = 0;
  auto post_receive = [&](std::int64_t i) {
    check(MPI_Irecv(at(buffer, cut.first(i), l), cut.length(i), type, from, kTag, comm,
                    &receives[static_cast<std::size_t>(i % 2)]),
          "MPI_Irecv");
  };
  if (from >= 0) post_receive(0);
  for (std::int64_t i = 0; i < cut.number; ++i) {
    if (from >= 0) {
      if (i + 1 < cut.number) post_receive(i + 1);
      check(MPI_Wait(&receives[static_cast<std::size_t>(i % 2)], MPI_STATUS_IGNORE), "MPI_Wait");
      arrived(cut.first(i), cut.length(i));
    }
    for (int next : to) {
      MPI_Request& slot = sends[static_cast<std::size_t>(sent++ % kPendingSends)];
      check(MPI_Wait(&slot, MPI_STATUS_IGNORE), "MPI_Wait");
      check(MPI_Isend(at(buffer, cut.first(i), l), cut.length(i), type, next, kTag, comm, &slot),
            "MPI_Isend");
    }
  }
  check(MPI_Waitall(kPendingSends, sends.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

void chain_bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
                 const Shape& s, std::int64_t segment_bytes) {
  const int v = (s.me - root + s.p) % s.p;
  const int prev = v > 0 ? (s.me - 1 + s.p) % s.p : -1;
  std::vector<int> next;
  if (v + 1 < s.p) next.push_back((s.me + 1) % s.p);
  run_pipeline(buffer, count, type, prev, next, comm, segment_bytes, [](std::int64_t, int) {});
}

// A binary tree over numbers 0..p-1 whose every subtree is a run of
// consecutive numbers: the subtree of [lo, hi) has lo at its root and the
// two halves of [lo + 1, hi), the first the larger, as its subtrees. So a
// run of ranks on one node or rack stays a run of subtrees: few messages
// leave it. Finds v's parent (-1 for 0) and children.
void binary_tree_place(int v, int p, int& parent, std::vector<int>& children) {
  parent = -1;
  int lo = 0, hi = p;
  while (lo != v) {
    const int split = lo + 1 + (hi - lo) / 2;  // first of the second half
    parent = lo;
    if (v < split) {
      hi = split;
      lo = lo + 1;
    } else {
      lo = split;
    }
  }
  children.clear();
  const int split = lo + 1 + (hi - lo) / 2;
  if (lo + 1 < hi) children.push_back(lo + 1);
  if (split < hi) children.push_back(split);
}

void binary_bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
                  const Shape& s, std::int64_t segment_bytes) {
  const TreeLinks tree = binary_tree_links(s.me, root, s.p);
  const std::int64_t bytes = static_cast<std::int64_t>(count) * layout_of(type).size;
  run_pipeline(buffer, count, type, tree.parent, tree.children, comm,
               segment_bytes > 0 ? segment_bytes : binary_segment_bytes(bytes),
               [](std::int64_t, int) {});
}

// ---- reduce ---------------------------------------------------------------

// The end of a reduce: `head` holds the result in `result` and passes it
// to the root (into recv), unless it is the root.
void hand_to_root(const void* result, void* recv, int count, MPI_Datatype type, const Layout& l,
                  bool is_head, bool is_root, int head, int root, MPI_Comm comm) {
  if (is_head) {
    if (is_root) {
      copy(result, recv, count, type, l);
    } else {
      send_to(result, count, type, root, comm);
    }
  } else if (is_root) {
    receive_from(recv, count, type, head, comm);
  }
}

// Where a reduction tree hangs and what this rank feeds into it. A
// commutative op may be combined in any order: the tree hangs from the
// root. Otherwise it hangs from rank 0 over real ranks, so that every
// subtree is a run of consecutive ranks, and rank 0 sends to the root.
struct ReduceTree {
  ReduceTree(const void* send_buffer, void* recv_buffer, MPI_Datatype type, MPI_Op op, int root,
             const Shape& s)
      : l(layout_of(type)),
        is_root(s.me == root),
        in(is_root && send_buffer == MPI_IN_PLACE ? recv_buffer : send_buffer),
        any_order(commutative(op)),
        top(any_order ? root : 0),
        rel(top, s.p),
        v(rel.of(s.me)),
        p(s.p) {}
  /// The real rank of tree position x.
  int real(int x) const { return rel.real(x); }

  Layout l;
  bool is_root;
  const void* in;  // this rank's data
  bool any_order;
  int top;  // the tree's root
  Relative rel;
  int v;  // this rank's position, relative to top
  int p;
};

void binomial_reduce(const void* send_buffer, void* recv_buffer, int count, MPI_Datatype type,
                     MPI_Op op, int root, MPI_Comm comm, const Shape& s) {
  const ReduceTree t(send_buffer, recv_buffer, type, op, root, s);
  const bool receives = t.v % 2 == 0 && t.v + 1 < s.p;
  const bool acc_is_recv = t.any_order && t.is_root;  // accumulate in place
  TypedBuffer a(receives && !acc_is_recv ? count : 0, t.l), b(receives ? count : 0, t.l);
  const void* partial = t.in;  // what this rank holds: its own data, then more
  void* acc = nullptr;
  void* scratch = b.get();
  if (receives || acc_is_recv) {
    acc = acc_is_recv ? recv_buffer : a.get();
    copy(t.in, acc, count, type, t.l);
    partial = acc;
  }
  for (int mask = 1; mask < s.p; mask <<= 1) {
    if (t.v & mask) {
      send_to(partial, count, type, t.real(t.v - mask), comm);
      break;
    }
    if (t.v + mask >= s.p) continue;
    receive_from(scratch, count, type, t.real(t.v + mask), comm);
    if (t.any_order) {
      combine(scratch, acc, count, type, op);
    } else {
      combine(acc, scratch, count, type, op);  // scratch = acc op child
      std::swap(acc, scratch);
      partial = acc;
    }
  }
  hand_to_root(partial, recv_buffer, count, type, t.l, s.me == t.top, t.is_root, t.top, root, comm);
}

// As binomial_reduce, over a k-nomial tree: a round's children (the runs
// of ranks after this one's, nearest first) are received at once, then
// combined in rank order.
void knomial_reduce(const void* send_buffer, void* recv_buffer, int count, MPI_Datatype type,
                    MPI_Op op, int root, MPI_Comm comm, const Shape& s) {
  const ReduceTree t(send_buffer, recv_buffer, type, op, root, s);
  const int below = knomial_children_below(t.v, s.p);
  const bool receives = t.v + 1 < s.p && below > 1;
  const bool acc_is_recv = t.any_order && t.is_root;
  TypedBuffer a(receives && !acc_is_recv ? count : 0, t.l);
  std::vector<TypedBuffer> children;
  if (receives) {
    children.reserve(kRadix - 1);  // no copies: a TypedBuffer points into itself
    for (int d = 1; d < kRadix; ++d) children.emplace_back(count, t.l);
  }
  const void* partial = t.in;
  void* acc = nullptr;
  if (receives || acc_is_recv) {
    acc = acc_is_recv ? recv_buffer : a.get();
    copy(t.in, acc, count, type, t.l);
    partial = acc;
  }
  std::vector<MPI_Request> got;
  for (int place = 1; place < below && t.v + place < s.p; place *= kRadix) {
    got.clear();
    for (int d = 1; d < kRadix && t.v + d * place < s.p; ++d) {
      got.emplace_back();
      check(MPI_Irecv(children[static_cast<std::size_t>(d - 1)].get(), count, type,
                      t.real(t.v + d * place), kTag, comm, &got.back()),
            "MPI_Irecv");
    }
    check(MPI_Waitall(static_cast<int>(got.size()), got.data(), MPI_STATUSES_IGNORE),
          "MPI_Waitall");
    for (std::size_t d = 0; d < got.size(); ++d) {
      // acc holds the run up to this child's: acc = acc op child.
      void* child = children[d].get();
      if (t.any_order) {
        combine(child, acc, count, type, op);
      } else {
        combine(acc, child, count, type, op);
        copy(child, acc, count, type, t.l);
      }
    }
  }
  if (t.v != 0) send_to(partial, count, type, t.real(knomial_parent(t.v).first), comm);
  hand_to_root(partial, recv_buffer, count, type, t.l, s.me == t.top, t.is_root, t.top, root, comm);
}

// The chain runs from the far end (v = p - 1) to its head (v = 0), v
// relative to `top`: the root for a commutative op, else rank 0, so that
// each rank combines its own data on the left of the higher ranks' partial
// result and the head then passes the whole result to the root.
void chain_reduce(const void* send_buffer, void* recv_buffer, int count, MPI_Datatype type,
                  MPI_Op op, int root, MPI_Comm comm, const Shape& s, std::int64_t segment_bytes) {
  const Layout l = layout_of(type);
  const bool is_root = s.me == root;
  // Only read, and by the far end sent as it is; at() takes void*.
  void* in = const_cast<void*>(is_root && send_buffer == MPI_IN_PLACE ? recv_buffer : send_buffer);
  const int top = commutative(op) ? root : 0;
  const int v = (s.me - top + s.p) % s.p;
  const int from = v + 1 < s.p ? (s.me + 1) % s.p : -1;
  const int to = v > 0 ? (s.me - 1 + s.p) % s.p : -1;
  // The higher ranks' partial results arrive in acc, each segment in its
  // own place, and leave with this rank's part combined on the left.
  TypedBuffer acc(from >= 0 ? count : 0, l);
  void* partial = from >= 0 ? acc.get() : in;
  std::vector<int> next;
  if (to >= 0) next.push_back(to);
  run_pipeline(partial, count, type, from, next, comm, segment_bytes,
               [&](std::int64_t first, int n) {
                 combine(at(in, first, l), at(partial, first, l), n, type, op);
               });
  hand_to_root(partial, recv_buffer, count, type, l, s.me == top, is_root, top, root, comm);
}

// The mirror of binary_bcast: segment by segment, each rank combines its
// part with its children's results and sends that to its parent. A
// subtree is a run of consecutive numbers, the rank before its children's
// runs, so numbering from 0 (not the root) where the operation does not
// commute combines in rank order: the rank, then the first subtree's
// result, then the second's.
void binary_reduce(const void* send_buffer, void* recv_buffer, int count, MPI_Datatype type,
                   MPI_Op op, int root, MPI_Comm comm, const Shape& s, std::int64_t segment_bytes) {
  const Layout l = layout_of(type);
  const bool is_root = s.me == root;
  // Only read, and by a leaf sent as it is; at() takes void*.
  void* in = const_cast<void*>(is_root && send_buffer == MPI_IN_PLACE ? recv_buffer : send_buffer);
  const int top = commutative(op) ? root : 0;
  const TreeLinks tree = binary_tree_links(s.me, top, s.p);
  const std::vector<int>& children = tree.children;
  const Segments cut(count,
                     segment_bytes > 0
                         ? segment_bytes
                         : binary_segment_bytes(static_cast<std::int64_t>(count) * l.size),
                     l);
  // Each child's results arrive in their own buffer, each segment in its
  // place, two receives posted per child; the last child's buffer ends up
  // holding this rank's result.
  std::vector<TypedBuffer> from_child;
  for (std::size_t k = 0; k < children.size(); ++k) from_child.emplace_back(count, l);
  std::vector<std::array<MPI_Request, 2>> receives(children.size(),
                                                   {MPI_REQUEST_NULL, MPI_REQUEST_NULL});
  auto post_receive = [&](std::size_t k, std::int64_t i) {
    check(MPI_Irecv(at(from_child[k].get(), cut.first(i), l), cut.length(i), type, children[k],
                    kTag, comm, &receives[k][static_cast<std::size_t>(i % 2)]),
          "MPI_Irecv");
  };
  std::array<MPI_Request, kPendingSends> sends;
  sends.fill(MPI_REQUEST_NULL);
  for (std::size_t k = 0; k < children.size(); ++k) post_receive(k, 0);
  void* result = children.empty() ? in : from_child.back().get();
  for (std::int64_t i = 0; i < cut.number; ++i) {
    for (std::size_t k = 0; k < children.size(); ++k) {
      if (i + 1 < cut.number) post_receive(k, i + 1);
      check(MPI_Wait(&receives[k][static_cast<std::size_t>(i % 2)], MPI_STATUS_IGNORE), "MPI_Wait");
    }
    if (children.size() == 2) {
      combine(at(from_child[0].get(), cut.first(i), l), at(from_child[1].get(), cut.first(i), l),
              cut.length(i), type, op);
    }
    if (!children.empty())
      combine(at(in, cut.first(i), l), at(result, cut.first(i), l), cut.length(i), type, op);
    if (tree.parent >= 0) {
      MPI_Request& slot = sends[static_cast<std::size_t>(i % kPendingSends)];
      check(MPI_Wait(&slot, MPI_STATUS_IGNORE), "MPI_Wait");
      check(MPI_Isend(at(result, cut.first(i), l), cut.length(i), type, tree.parent, kTag, comm,
                      &slot),
            "MPI_Isend");
    }
  }
  check(MPI_Waitall(kPendingSends, sends.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  hand_to_root(result, recv_buffer, count, type, l, s.me == top, is_root, top, root, comm);
}

// ---- allreduce ------------------------------------------------------------

// The non-power-of-two fold: of the first 2 * rem ranks, each even one hands
// its data to the odd one above and waits; the rest, renumbered 0..pof2-1
// in rank order, do the power-of-two algorithm. A rooted algorithm numbers
// them XOR the root's number (`flip`), so that number 0, where its result
// ends, is the root (or the odd rank the root folded into) and every
// exchange is between the same two ranks as from root 0.
struct Fold {
  int pof2 = 1;
  int rem = 0;
  int active = -1;  // this rank's number among the pof2, or -1
  int flip = 0;
  int real(int a) const {
    const int b = a ^ flip;
    return b < rem ? 2 * b + 1 : b + rem;
  }
};

// root: -1, or the rank that number 0 should be.
Fold fold_of(const Shape& s, int root = -1) {
  Fold f;
  while (f.pof2 * 2 <= s.p) f.pof2 *= 2;
  f.rem = s.p - f.pof2;
  const auto number = [&](int r) { return r < 2 * f.rem ? r / 2 : r - f.rem; };
  if (root >= 0) f.flip = number(root);
  if (s.me >= 2 * f.rem || s.me % 2 == 1) f.active = number(s.me) ^ f.flip;
  return f;
}

// Before: every rank's data in acc. After: the odd ranks below 2 * rem hold
// even op odd in acc. scratch holds count elements.
void fold_in(void* acc, void* scratch, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
             const Shape& s, const Fold& f) {
  if (s.me >= 2 * f.rem) return;
  if (s.me % 2 == 0) {
    send_to(acc, count, type, s.me + 1, comm);
  } else {
    receive_from(scratch, count, type, s.me - 1, comm);
    combine(scratch, acc, count, type, op);
  }
}

void fold_out(void* acc, int count, MPI_Datatype type, MPI_Comm comm, const Shape& s,
              const Fold& f) {
  if (s.me >= 2 * f.rem) return;
  if (s.me % 2 == 0) {
    receive_from(acc, count, type, s.me + 1, comm);
  } else {
    send_to(acc, count, type, s.me - 1, comm);
  }
}

void recursive_doubling_allreduce(void* result, int count, MPI_Datatype type, MPI_Op op,
                                  MPI_Comm comm, const Shape& s) {
  const Layout l = layout_of(type);
  const bool any_order = commutative(op);
  const Fold f = fold_of(s);
  TypedBuffer a(count, l);
  void* acc = result;
  void* scratch = a.get();
  fold_in(acc, scratch, count, type, op, comm, s, f);
  if (f.active >= 0) {
    for (int mask = 1; mask < f.pof2; mask <<= 1) {
      const int partner = f.real(f.active ^ mask);
      exchange(acc, count, partner, scratch, count, partner, type, comm);
      if (partner < s.me || any_order) {
        combine(scratch, acc, count, type, op);  // acc = lower op higher
      } else {
        combine(acc, scratch, count, type, op);
        std::swap(acc, scratch);
      }
    }
    copy(acc, result, count, type, l);
  }
  fold_out(result, count, type, comm, s, f);
}

void ring_allreduce(void* result, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                    const Shape& s) {
  const Layout l = layout_of(type);
  const int p = s.p, r = s.me;
  auto start = [&](int c) { return chunk_start(count, p, c); };
  auto length = [&](int c) { return start(c + 1) - start(c); };
  TypedBuffer a(start(1), l);  // the longest chunk
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  for (int i = 0; i < p - 1; ++i) {
    const int out = (r - i + p) % p, in = (r - i - 1 + p) % p;
    exchange(at(result, start(out), l), length(out), right, a.get(), length(in), left, type, comm);
    combine(a.get(), at(result, start(in), l), length(in), type, op);
  }
  for (int i = 0; i < p - 1; ++i) {
    const int out = (r + 1 - i + p) % p, in = (r - i + p) % p;
    exchange(at(result, start(out), l), length(out), right, at(result, start(in), l), length(in),
             left, type, comm);
  }
}

// Recursive halving among the fold's active ranks (a commutative op),
// nearest partner first: at distance d this rank keeps the half of
// [lo, hi) that its bit d selects and adds the partner's copy of it into
// its own, until active rank a holds chunk bitreverse(a) of pof2 reduced
// in result: returns [lo, hi), that one chunk. Partners agree on the
// lower bits, so they halve the same range. scratch holds count elements.
std::pair<int, int> halve(void* result, void* scratch, int count, MPI_Datatype type, MPI_Op op,
                          MPI_Comm comm, const Layout& l, const Fold& f) {
  auto start = [&](int c) { return chunk_start(count, f.pof2, c); };
  int lo = 0, hi = f.pof2;
  for (int mask = 1; mask < f.pof2; mask <<= 1) {
    const int partner = f.real(f.active ^ mask), mid = (lo + hi) / 2;
    const bool lower = (f.active & mask) == 0;
    const int keep_lo = lower ? lo : mid, keep_hi = lower ? mid : hi;
    const int give_lo = lower ? mid : lo, give_hi = lower ? hi : mid;
    const std::int64_t kept = start(keep_hi) - start(keep_lo);
    exchange(at(result, start(give_lo), l), start(give_hi) - start(give_lo), partner, scratch, kept,
             partner, type, comm);
    combine(scratch, at(result, start(keep_lo), l), kept, type, op);
    lo = keep_lo;
    hi = keep_hi;
  }
  return {lo, hi};
}

void rabenseifner_allreduce(void* result, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                            const Shape& s) {
  const Layout l = layout_of(type);
  const Fold f = fold_of(s);
  TypedBuffer a(count, l);
  fold_in(result, a.get(), count, type, op, comm, s, f);
  if (f.active >= 0) {
    auto start = [&](int c) { return chunk_start(count, f.pof2, c); };
    auto [lo, hi] = halve(result, a.get(), count, type, op, comm, l, f);
    // Doubling, the halving undone from its last step: swap whole ranges
    // with the partner, which holds the other half of the range they split.
    for (int mask = f.pof2 / 2; mask > 0; mask >>= 1) {
      const int partner = f.real(f.active ^ mask), width = hi - lo;
      const bool lower = (f.active & mask) == 0;
      const int other_lo = lower ? hi : lo - width, other_hi = other_lo + width;
      exchange(at(result, start(lo), l), start(hi) - start(lo), partner,
               at(result, start(other_lo), l), start(other_hi) - start(other_lo), partner, type,
               comm);
      lo = std::min(lo, other_lo);
      hi = std::max(hi, other_hi);
    }
  }
  fold_out(result, count, type, comm, s, f);
}

// Rabenseifner's reduce (a commutative op): recursive halving as in the
// allreduce, then the chunks are gathered to active number 0 (the root,
// see Fold), the halving
// undone from its last step (at distance d, farthest first, a rank whose
// bit d is set sends its range to the partner, which holds the other half
// of the range they split, and drops out), which passes the result to the
// root: every rank sends about 2 (p - 1) / p of the message in all, a tree
// log2(p) whole ones.
void rabenseifner_reduce(const void* send_buffer, void* recv_buffer, int count, MPI_Datatype type,
                         MPI_Op op, int root, MPI_Comm comm, const Shape& s) {
  const Layout l = layout_of(type);
  const bool is_root = s.me == root;
  const void* in = is_root && send_buffer == MPI_IN_PLACE ? recv_buffer : send_buffer;
  TypedBuffer work(count, l), scratch(count, l);
  copy(in, work.get(), count, type, l);
  const Fold f = fold_of(s, root);
  fold_in(work.get(), scratch.get(), count, type, op, comm, s, f);
  if (f.active >= 0) {
    auto start = [&](int c) { return chunk_start(count, f.pof2, c); };
    auto [lo, hi] = halve(work.get(), scratch.get(), count, type, op, comm, l, f);
    for (int mask = f.pof2 / 2; mask > 0; mask >>= 1) {
      if (f.active & mask) {
        send_to(at(work.get(), start(lo), l), start(hi) - start(lo), type, f.real(f.active ^ mask),
                comm);
        break;
      }
      const int width = hi - lo;
      receive_from(at(work.get(), start(hi), l), start(hi + width) - start(hi), type,
                   f.real(f.active | mask), comm);
      hi += width;
    }
  }
  const int head = f.real(0);
  hand_to_root(work.get(), recv_buffer, count, type, l, s.me == head, is_root, head, root, comm);
}

// ---- allgather and reduce_scatter_block -----------------------------------

bool power_of_two(int p) { return p > 0 && (p & (p - 1)) == 0; }

// Block i of a buffer of blocks of `count` elements.
char* block(void* base, int i, int count, const Layout& l) {
  return at(base, static_cast<std::int64_t>(i) * count, l);
}

// Recursive doubling (p a power of two), nearest partner first: at
// distance d a rank swaps the d blocks it holds for its partner's d.
void recursive_doubling_allgather(void* recv, int count, MPI_Datatype type, MPI_Comm comm,
                                  const Shape& s, const Layout& l) {
  for (int mask = 1; mask < s.p; mask <<= 1) {
    const int partner = s.me ^ mask;
    const std::int64_t n = static_cast<std::int64_t>(mask) * count;
    exchange(block(recv, s.me & ~(mask - 1), count, l), n, partner,
             block(recv, partner & ~(mask - 1), count, l), n, partner, type, comm);
  }
}

// The ring: at step i a rank passes on to its right the block it got at
// step i - 1 (its own first).
void ring_allgather(void* recv, int count, MPI_Datatype type, MPI_Comm comm, const Shape& s,
                    const Layout& l) {
  const int right = (s.me + 1) % s.p, left = (s.me - 1 + s.p) % s.p;
  for (int i = 0; i < s.p - 1; ++i) {
    const int out = (s.me - i + s.p) % s.p, in = (s.me - i - 1 + s.p) % s.p;
    exchange(block(recv, out, count, l), count, right, block(recv, in, count, l), count, left, type,
             comm);
  }
}

// Recursive halving (p a power of two, a commutative op), farthest partner
// first, the mirror of recursive doubling's allgather: at distance d a rank
// keeps the half of its d * 2 blocks that holds its own block, adding in
// the partner's copy of it, and gives away the other half.
void recursive_halving_reduce_scatter(const void* in, void* recv, int count, MPI_Datatype type,
                                      MPI_Op op, MPI_Comm comm, const Shape& s, const Layout& l) {
  const std::int64_t total = static_cast<std::int64_t>(s.p) * count;
  TypedBuffer work(total, l), scratch(total / 2, l);
  copy(in, work.get(), total, type, l);
  int lo = 0;
  for (int mask = s.p / 2; mask > 0; mask >>= 1) {
    const bool upper = (s.me & mask) != 0;
    const int keep = upper ? lo + mask : lo, give = upper ? lo : lo + mask;
    const std::int64_t n = static_cast<std::int64_t>(mask) * count;
    exchange(block(work.get(), give, count, l), n, s.me ^ mask, scratch.get(), n, s.me ^ mask, type,
             comm);
    combine(scratch.get(), block(work.get(), keep, count, l), n, type, op);
    lo = keep;
  }
  copy(block(work.get(), s.me, count, l), recv, count, type, l);  // lo == s.me
}

}  // namespace

TreeLinks binary_tree_links(int rank, int root, int p) {
  // Number 0 is the root and the other ranks follow in rank order, so a
  // subtree's run of numbers is a run of ranks (the root's place skipped),
  // never wrapping from the last rank to the first as rotation would.
  const auto number_of = [root](int r) { return r == root ? 0 : r < root ? r + 1 : r; };
  const auto rank_of = [root](int v) { return v == 0 ? root : v <= root ? v - 1 : v; };
  TreeLinks links;
  binary_tree_place(number_of(rank), p, links.parent, links.children);
  if (links.parent >= 0) links.parent = rank_of(links.parent);
  for (int& c : links.children) c = rank_of(c);
  return links;
}

std::string_view algorithm_name(Algorithm a) {
  for (const Names& n : kNames) {
    if (n.algorithm == a) return n.name;
  }
  throw std::invalid_argument("unknown collective algorithm " +
                              std::to_string(static_cast<int>(a)));
}

std::int64_t binary_segment_bytes(std::int64_t bytes) {
  const double balanced = std::sqrt(static_cast<double>(std::max<std::int64_t>(bytes, 0)) * 4096);
  return std::clamp<std::int64_t>(std::llround(balanced), 8 << 10, 1 << 20);
}

std::optional<Algorithm> algorithm_named(std::string_view name) {
  for (const Names& n : kNames) {
    if (n.name == name) return n.algorithm;
  }
  return std::nullopt;
}

void level_bcast(Algorithm a, void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
                 std::int64_t segment_bytes) {
  if (a != Algorithm::kNative && a != Algorithm::kBinomial && a != Algorithm::kKnomial &&
      a != Algorithm::kScatterAllgather && a != Algorithm::kChain && a != Algorithm::kBinary) {
    not_for(a, "bcast");
  }
  if (segment_bytes < 0) throw std::invalid_argument("negative chain segment size");
  if (a == Algorithm::kNative) {
    check(MPI_Bcast(buffer, count, type, root, comm), "MPI_Bcast");
    return;
  }
  const Shape s = shape_of(comm);
  check_arguments(count, root, s, "level_bcast");
  if (count == 0 || s.p == 1) return;
  switch (a) {
    case Algorithm::kBinomial:
      binomial_bcast(buffer, count, type, root, comm, s);
      break;
    case Algorithm::kKnomial:
      knomial_bcast(buffer, count, type, root, comm, s);
      break;
    case Algorithm::kScatterAllgather:
      scatter_allgather_bcast(buffer, count, type, root, comm, s);
      break;
    case Algorithm::kBinary:
      binary_bcast(buffer, count, type, root, comm, s, segment_bytes);
      break;
    default:
      chain_bcast(buffer, count, type, root, comm, s, segment_bytes);
      break;
  }
}

void level_reduce(Algorithm a, const void* send, void* recv, int count, MPI_Datatype type,
                  MPI_Op op, int root, MPI_Comm comm, std::int64_t segment_bytes) {
  if (a != Algorithm::kNative && a != Algorithm::kBinomial && a != Algorithm::kKnomial &&
      a != Algorithm::kChain && a != Algorithm::kBinary && a != Algorithm::kRabenseifner) {
    not_for(a, "reduce");
  }
  if (segment_bytes < 0) throw std::invalid_argument("negative chain segment size");
  const Shape s = shape_of(comm);
  // Rabenseifner's halving combines out of rank order: binomial instead.
  if (a == Algorithm::kRabenseifner && !commutative(op)) a = Algorithm::kBinomial;
  if (a == Algorithm::kNative && s.p == 1) {
    // Nothing to combine. SimGrid 3.32's ompi selector aborts on a reduce
    // over one rank (its binary tree sends to a rank that does not exist),
    // and a node that holds one of the job's ranks has such a level.
    check_arguments(count, root, s, "level_reduce");
    if (send != MPI_IN_PLACE) copy(send, recv, count, type, layout_of(type));
    return;
  }
  if (a == Algorithm::kNative) {
    if (send == MPI_IN_PLACE && s.me == root && root != 0) {
      // MPICH 4.0 crashes on MPI_IN_PLACE at a root other than 0
      // (pmodels/mpich#6540): reduce from a copy instead.
      check_arguments(count, root, s, "level_reduce");
      const Layout l = layout_of(type);
      TypedBuffer mine(count, l);
      copy(recv, mine.get(), count, type, l);
      check(MPI_Reduce(mine.get(), recv, count, type, op, root, comm), "MPI_Reduce");
    } else {
      check(MPI_Reduce(send, recv, count, type, op, root, comm), "MPI_Reduce");
    }
    return;
  }
  check_arguments(count, root, s, "level_reduce");
  if (count == 0) return;
  if (a == Algorithm::kChain) {
    chain_reduce(send, recv, count, type, op, root, comm, s, segment_bytes);
  } else if (a == Algorithm::kBinary) {
    binary_reduce(send, recv, count, type, op, root, comm, s, segment_bytes);
  } else if (a == Algorithm::kRabenseifner) {
    rabenseifner_reduce(send, recv, count, type, op, root, comm, s);
  } else if (a == Algorithm::kKnomial) {
    knomial_reduce(send, recv, count, type, op, root, comm, s);
  } else {
    binomial_reduce(send, recv, count, type, op, root, comm, s);
  }
}

void level_allreduce(Algorithm a, const void* send, void* recv, int count, MPI_Datatype type,
                     MPI_Op op, MPI_Comm comm) {
  const bool tree = a == Algorithm::kBinomial || a == Algorithm::kKnomial;
  if (!tree && a != Algorithm::kNative && a != Algorithm::kRecursiveDoubling &&
      a != Algorithm::kRing && a != Algorithm::kRabenseifner) {
    not_for(a, "allreduce");
  }
  const bool ordered_only = a == Algorithm::kRing || a == Algorithm::kRabenseifner;
  if (a == Algorithm::kNative || (ordered_only && !commutative(op))) {
    check(MPI_Allreduce(send, recv, count, type, op, comm), "MPI_Allreduce");
    return;
  }
  const Shape s = shape_of(comm);
  check_arguments(count, std::nullopt, s, "level_allreduce");
  if (count == 0) return;
  // recv is the working buffer from here on.
  if (send != MPI_IN_PLACE) copy(send, recv, count, type, layout_of(type));
  if (s.p == 1) return;
  switch (a) {
    case Algorithm::kBinomial:
    case Algorithm::kKnomial:
      // The tree's reduce, then its bcast: fewer latencies than recursive
      // doubling where its all-at-once steps queue on shared links.
      level_reduce(a, s.me == 0 ? MPI_IN_PLACE : recv, s.me == 0 ? recv : nullptr, count, type, op,
                   0, comm);
      level_bcast(a, recv, count, type, 0, comm);
      break;
    case Algorithm::kRecursiveDoubling:
      recursive_doubling_allreduce(recv, count, type, op, comm, s);
      break;
    case Algorithm::kRing:
      ring_allreduce(recv, count, type, op, comm, s);
      break;
    default:
      rabenseifner_allreduce(recv, count, type, op, comm, s);
      break;
  }
}

void level_allgather(Algorithm a, const void* send, int send_count, MPI_Datatype send_type,
                     void* recv, int recv_count, MPI_Datatype recv_type, MPI_Comm comm) {
  if (a != Algorithm::kNative && a != Algorithm::kRecursiveDoubling && a != Algorithm::kRing) {
    not_for(a, "allgather");
  }
  if (a == Algorithm::kNative) {
    check(MPI_Allgather(send, send_count, send_type, recv, recv_count, recv_type, comm),
          "MPI_Allgather");
    return;
  }
  const Shape s = shape_of(comm);
  check_arguments(recv_count, std::nullopt, s, "level_allgather");
  if (recv_count == 0) return;
  const Layout l = layout_of(recv_type);
  // This rank's own block first, through a message to self: the send and
  // receive types may differ.
  if (send != MPI_IN_PLACE) {
    check(MPI_Sendrecv(send, send_count, send_type, 0, kTag, block(recv, s.me, recv_count, l),
                       recv_count, recv_type, 0, kTag, MPI_COMM_SELF, MPI_STATUS_IGNORE),
          "MPI_Sendrecv");
  }
  if (s.p == 1) return;
  if (a == Algorithm::kRecursiveDoubling && power_of_two(s.p)) {
    recursive_doubling_allgather(recv, recv_count, recv_type, comm, s, l);
  } else {
    ring_allgather(recv, recv_count, recv_type, comm, s, l);
  }
}

void level_reduce_scatter_block(Algorithm a, const void* send, void* recv, int count,
                                MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (a != Algorithm::kNative && a != Algorithm::kRecursiveHalving) {
    not_for(a, "reduce_scatter_block");
  }
  const Shape s = shape_of(comm);
  // Halving combines out of rank order, and pairs every rank.
  if (a == Algorithm::kNative || !power_of_two(s.p) || !commutative(op)) {
    check(MPI_Reduce_scatter_block(send, recv, count, type, op, comm), "MPI_Reduce_scatter_block");
    return;
  }
  check_arguments(count, std::nullopt, s, "level_reduce_scatter_block");
  if (count == 0) return;
  const Layout l = layout_of(type);
  recursive_halving_reduce_scatter(send == MPI_IN_PLACE ? recv : send, recv, count, type, op, comm,
                                   s, l);
}

void level_barrier(Algorithm a, MPI_Comm comm) {
  if (a != Algorithm::kNative && a != Algorithm::kLinear) not_for(a, "barrier");
  const Shape s = shape_of(comm);
  if (a == Algorithm::kNative) {
    check(MPI_Barrier(comm), "MPI_Barrier");
    return;
  }
  if (s.p == 1) return;
  if (s.me != 0) {
    check(MPI_Send(nullptr, 0, MPI_BYTE, 0, kTag, comm), "MPI_Send");
    check(MPI_Recv(nullptr, 0, MPI_BYTE, 0, kTag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
    return;
  }
  std::vector<MPI_Request> requests(static_cast<std::size_t>(s.p - 1));
  for (int r = 1; r < s.p; ++r) {
    check(
        MPI_Irecv(nullptr, 0, MPI_BYTE, r, kTag, comm, &requests[static_cast<std::size_t>(r - 1)]),
        "MPI_Irecv");
  }
  check(MPI_Waitall(s.p - 1, requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  for (int r = 1; r < s.p; ++r) {
    check(
        MPI_Isend(nullptr, 0, MPI_BYTE, r, kTag, comm, &requests[static_cast<std::size_t>(r - 1)]),
        "MPI_Isend");
  }
  check(MPI_Waitall(s.p - 1, requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

}  // namespace rankshape::coll
