// Level algorithms (lib/coll/algorithms.h) against the MPI library's own
// collective and against the result computed here from the known inputs of
// every rank: bcast, reduce, allreduce, allgather and
// reduce_scatter_block, each algorithm, over datatypes
// (int, double, a strided vector, a type with gaps and a nonzero true lower
// bound, a pair of uint32), operations (sum, max, a user sum, a user
// non-commutative composition of affine maps), counts (0, 1, small, not a
// multiple of the size, large), roots and MPI_IN_PLACE. Run at many rank
// counts by tests/coll/BUILD.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/coll/algorithms.h"
#include "tests/testing/clock.h"
#include "tests/testing/world.h"

namespace rankshape::coll {
namespace {

using ::rankshape::testing::hold_for;
using ::rankshape::testing::shared_now;
using ::rankshape::testing::world_rank;
using ::rankshape::testing::world_size;

// Input cell `cell` of rank r, for a call told apart by salt. Integer
// valued, so that sums of doubles are exact; negative too, for max.
template <typename T>
T value(int r, std::size_t cell, int salt) {
  return static_cast<T>(static_cast<int>(((r + 1) * 131 + cell * 7 + salt * 13) % 1000) - 500);
}
// Affine maps x -> a x + b: any 32-bit values, wrapping.
template <>
std::uint32_t value<std::uint32_t>(int r, std::size_t cell, int salt) {
  return (static_cast<std::uint32_t>(r) + 1) * 2654435761u +
         static_cast<std::uint32_t>(cell) * 40503u + static_cast<std::uint32_t>(salt) * 97u;
}

template <typename T>
T sentinel() {
  return static_cast<T>(-77);
}

// A datatype as T cells per element, of which data_cells carry data (the
// others are gaps a receive must not write).
template <typename T>
struct TypeCase {
  std::string name;
  MPI_Datatype type;
  std::size_t cells;
  std::vector<std::size_t> data_cells;
};

// One element of lower op higher, as MPI defines it for a reduction in rank
// order.
template <typename T>
struct OpCase {
  std::string name;
  MPI_Op op;
  std::function<void(const T* lower, const T* higher, T* out)> apply;
};

// x -> a x + b, composed: (f . g)(x) = f(g(x)); associative, not
// commutative. MPI: inout = in op inout.
void compose(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* f = static_cast<std::uint32_t*>(in);
  auto* g = static_cast<std::uint32_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    const std::uint32_t a = f[2 * i] * g[2 * i], b = f[2 * i] * g[2 * i + 1] + f[2 * i + 1];
    g[2 * i] = a;
    g[2 * i + 1] = b;
  }
}

// Sum of the data ints of the gappy type (ints 1 and 3 of every 4).
void sum_gappy(void* in, void* inout, int* len, MPI_Datatype*) {
  const int* a = static_cast<const int*>(in);
  int* b = static_cast<int*>(inout);
  for (int i = 0; i < *len; ++i) {
    b[4 * i + 1] += a[4 * i + 1];
    b[4 * i + 3] += a[4 * i + 3];
  }
}

// How much of the test matrix a type runs.
struct Coverage {
  bool every_root;  // else three roots
  bool large;       // count 100003, too
};
constexpr Coverage kFull = {true, true}, kEveryRoot = {true, false}, kSome = {false, false};

// Up to 8 ranks run the whole matrix. Beyond (16 ranks on two cores, where
// MPICH busy-polls and every step of a ring costs tens of milliseconds) a
// sample of it: fewer counts and roots, one MPI_IN_PLACE mode per case,
// operations after a type's first at count 7 only.
bool thorough() { return world_size() <= 8; }

// Counts: none, one, small, never a multiple of the size (nor of a power
// of two), larger, and 100003 (a prime) where asked.
std::vector<int> counts_for(Coverage k) {
  const int odd = 2 * world_size() + 1;
  if (!thorough() && !k.large) return {0, 7, odd};
  std::vector<int> counts = {0, 1, 7, odd, 1001};
  if (k.large) counts.push_back(100003);
  return counts;
}

// Every root (the algorithms work in ranks relative to it) for the small
// counts where asked, else the first, a middle and the last root. Sampled:
// four roots for count 7, one for the others.
std::vector<int> roots_for(Coverage k, int count) {
  const int p = world_size();
  std::vector<int> roots;
  if (!thorough()) {
    if (count == 7) return {0, 1, p / 2, p - 1};
    return {count % p};
  }
  if (k.every_root && count <= 2 * p + 1) {
    for (int r = 0; r < p; ++r) roots.push_back(r);
  } else {
    roots.push_back(0);
    if (p > 2) roots.push_back(p / 2);
    if (p > 1) roots.push_back(p - 1);
  }
  return roots;
}

// Both, or in the sample one chosen by `key`.
std::vector<bool> in_place_modes(int key) {
  if (thorough()) return {false, true};
  return {key % 4 == 3};
}

// "" if ours and expected agree on every data cell, else the first
// difference.
template <typename T>
std::string mismatch(const TypeCase<T>& t, const std::vector<T>& ours,
                     const std::vector<T>& expected) {
  if (ours.size() != expected.size()) return "sizes differ";
  for (std::size_t e = 0; e * t.cells < ours.size(); ++e) {
    for (std::size_t c : t.data_cells) {
      const std::size_t i = e * t.cells + c;
      if (!(ours[i] == expected[i])) {
        return "element " + std::to_string(e) + " cell " + std::to_string(c) + ": " +
               std::to_string(ours[i]) + ", expected " + std::to_string(expected[i]);
      }
    }
  }
  return "";
}

// "" if every gap cell still holds the sentinel.
template <typename T>
std::string gaps_written(const TypeCase<T>& t, const std::vector<T>& ours) {
  for (std::size_t i = 0; i < ours.size(); ++i) {
    const std::size_t c = i % t.cells;
    if (std::find(t.data_cells.begin(), t.data_cells.end(), c) != t.data_cells.end()) continue;
    if (!(ours[i] == sentinel<T>())) return "gap cell " + std::to_string(i) + " written";
  }
  return "";
}

template <typename T>
std::vector<T> input(int r, std::size_t cells, int salt) {
  std::vector<T> v(cells);
  for (std::size_t i = 0; i < cells; ++i) v[i] = value<T>(r, i, salt);
  return v;
}

// x_0 op x_1 op ... op x_{p-1}, computed here.
template <typename T>
std::vector<T> reduced(const TypeCase<T>& t, const OpCase<T>& o, int count, int p, int salt) {
  const std::size_t n = static_cast<std::size_t>(count) * t.cells;
  std::vector<T> acc = input<T>(0, n, salt), out(t.cells);
  for (int r = 1; r < p; ++r) {
    const std::vector<T> x = input<T>(r, n, salt);
    for (std::size_t e = 0; e < static_cast<std::size_t>(count); ++e) {
      o.apply(&acc[e * t.cells], &x[e * t.cells], out.data());
      for (std::size_t c : t.data_cells) acc[e * t.cells + c] = out[c];
    }
  }
  return acc;
}

struct Variant {
  Algorithm algorithm;
  std::int64_t segment_bytes;
};

class AlgorithmsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Type_vector(2, 1, 3, MPI_INT, &strided_);  // ints 0 and 3 of 4
    MPI_Type_commit(&strided_);
    // ints 1 and 3 of 4: true lower bound 4 bytes, extent 16.
    const int lengths[] = {1, 1}, displacements[] = {1, 3};
    MPI_Datatype indexed;
    MPI_Type_indexed(2, lengths, displacements, MPI_INT, &indexed);
    MPI_Type_create_resized(indexed, 0, 4 * sizeof(int), &gappy_);
    MPI_Type_free(&indexed);
    MPI_Type_commit(&gappy_);
    MPI_Type_contiguous(2, MPI_UINT32_T, &affine_);
    MPI_Type_commit(&affine_);
    MPI_Op_create(compose, 0, &compose_);
    MPI_Op_create(sum_gappy, 1, &sum_gappy_);
  }
  static void TearDownTestSuite() {
    MPI_Type_free(&strided_);
    MPI_Type_free(&gappy_);
    MPI_Type_free(&affine_);
    MPI_Op_free(&compose_);
    MPI_Op_free(&sum_gappy_);
    MPI_Comm_free(&comm_);
  }

  static TypeCase<int> int_type() { return {"int", MPI_INT, 1, {0}}; }
  static TypeCase<double> double_type() { return {"double", MPI_DOUBLE, 1, {0}}; }
  static TypeCase<int> strided_type() { return {"strided", strided_, 4, {0, 3}}; }
  static TypeCase<int> gappy_type() { return {"gappy", gappy_, 4, {1, 3}}; }
  static TypeCase<std::uint32_t> affine_type() { return {"affine", affine_, 2, {0, 1}}; }

  template <typename T>
  static std::vector<OpCase<T>> sum_and_max() {
    return {
        {"sum", MPI_SUM, [](const T* a, const T* b, T* out) { out[0] = a[0] + b[0]; }},
        {"max", MPI_MAX, [](const T* a, const T* b, T* out) { out[0] = std::max(a[0], b[0]); }}};
  }
  static std::vector<OpCase<int>> gappy_ops() {
    return {{"user sum", sum_gappy_, [](const int* a, const int* b, int* out) {
               out[1] = a[1] + b[1];
               out[3] = a[3] + b[3];
             }}};
  }
  static std::vector<OpCase<std::uint32_t>> affine_ops() {
    return {{"compose", compose_,
             [](const std::uint32_t* f, const std::uint32_t* g, std::uint32_t* out) {
               out[0] = f[0] * g[0];
               out[1] = f[0] * g[1] + f[1];
             }}};
  }

  template <typename T>
  void check_bcast(const TypeCase<T>& t, Coverage k) {
    const int p = world_size(), me = world_rank();
    // A 3-byte chain segment is less than an element: one element a segment.
    const std::vector<Variant> variants = {
        {Algorithm::kNative, 0},           {Algorithm::kBinomial, 0},  {Algorithm::kKnomial, 0},
        {Algorithm::kScatterAllgather, 0}, {Algorithm::kChain, 0},     {Algorithm::kChain, 8},
        {Algorithm::kChain, 1000},         {Algorithm::kChain, 3},     {Algorithm::kBinary, 0},
        {Algorithm::kBinary, 8},           {Algorithm::kBinary, 1000}, {Algorithm::kBinary, 3},
    };
    for (int count : counts_for(k)) {
      const std::size_t n = static_cast<std::size_t>(count) * t.cells;
      for (int root : roots_for(k, count)) {
        const int salt = count + root;
        const std::vector<T> expected = input<T>(root, n, salt);
        const std::string what =
            t.name + " count " + std::to_string(count) + " root " + std::to_string(root);
        std::vector<T> native = me == root ? expected : std::vector<T>(n, sentinel<T>());
        EXPECT_EQ(MPI_Bcast(native.data(), count, t.type, root, comm_), MPI_SUCCESS);
        EXPECT_EQ(mismatch(t, native, expected), "") << "MPI_Bcast " << what;
        for (const Variant& v : variants) {
          // Tiny segments only where their number stays modest.
          if (v.segment_bytes == 8 && count > 2 * p + 1) continue;
          if (v.segment_bytes == 3 && count > 7) continue;
          const std::string how = std::string(algorithm_name(v.algorithm)) + " segment " +
                                  std::to_string(v.segment_bytes) + " " + what;
          std::vector<T> ours = me == root ? expected : std::vector<T>(n, sentinel<T>());
          level_bcast(v.algorithm, ours.data(), count, t.type, root, comm_, v.segment_bytes);
          EXPECT_EQ(mismatch(t, ours, expected), "") << how;
          if (v.algorithm == Algorithm::kNative) continue;
          if (me == root) {
            EXPECT_EQ(ours, expected) << "root's buffer changed: " << how;
          } else {
            EXPECT_EQ(gaps_written(t, ours), "") << how;
          }
        }
      }
    }
  }

  template <typename T>
  void check_reduce(const TypeCase<T>& t, const std::vector<OpCase<T>>& ops, Coverage k) {
    const int p = world_size(), me = world_rank();
    for (const OpCase<T>& o : ops) {
      for (int count : counts_for(k)) {
        if (!thorough() && &o != &ops.front() && count != 7) continue;  // sampled
        const std::size_t n = static_cast<std::size_t>(count) * t.cells;
        const int salt = count;
        const std::vector<T> expected = reduced(t, o, count, p, salt);
        const std::vector<T> mine = input<T>(me, n, salt);
        for (int root : roots_for(k, count)) {
          const std::string what = t.name + " " + o.name + " count " + std::to_string(count) +
                                   " root " + std::to_string(root);
          // The reference never uses MPI_IN_PLACE: MPICH 4.0 crashes on it
          // at roots other than 0 (pmodels/mpich#6540).
          std::vector<T> native(n, sentinel<T>());
          EXPECT_EQ(MPI_Reduce(mine.data(), me == root ? native.data() : nullptr, count, t.type,
                               o.op, root, comm_),
                    MPI_SUCCESS);
          if (me == root) {
            EXPECT_EQ(mismatch(t, native, expected), "") << "MPI_Reduce " << what;
          }
          // Segments of 8 bytes: several in flight at small counts.
          const std::vector<Variant> variants = {
              {Algorithm::kNative, 0}, {Algorithm::kBinomial, 0},     {Algorithm::kKnomial, 0},
              {Algorithm::kChain, 0},  {Algorithm::kChain, 8},        {Algorithm::kBinary, 0},
              {Algorithm::kBinary, 8}, {Algorithm::kRabenseifner, 0},
          };
          for (const Variant& v : variants) {
            if (v.segment_bytes == 8 && count > 2 * p + 1) continue;
            const Algorithm a = v.algorithm;
            for (bool in_place : in_place_modes(count + root)) {
              const std::string how = std::string(algorithm_name(a)) + " segment " +
                                      std::to_string(v.segment_bytes) +
                                      (in_place ? " in place " : " ") + what;
              const std::vector<T> send = mine;
              std::vector<T> ours(n, sentinel<T>());
              const bool use_in_place = in_place && me == root;
              if (use_in_place) ours = mine;
              // recv is significant at the root only: elsewhere null.
              level_reduce(a, use_in_place ? MPI_IN_PLACE : send.data(),
                           me == root ? ours.data() : nullptr, count, t.type, o.op, root, comm_,
                           v.segment_bytes);
              EXPECT_EQ(send, mine) << "send buffer changed: " << how;
              if (me == root) {
                EXPECT_EQ(mismatch(t, ours, expected), "") << how;
                if (!use_in_place && a != Algorithm::kNative) {
                  EXPECT_EQ(gaps_written(t, ours), "") << how;
                }
              }
            }
          }
        }
      }
    }
  }

  template <typename T>
  void check_allreduce(const TypeCase<T>& t, const std::vector<OpCase<T>>& ops, Coverage k) {
    const int p = world_size(), me = world_rank();
    for (const OpCase<T>& o : ops) {
      for (int count : counts_for(k)) {
        if (!thorough() && &o != &ops.front() && count != 7) continue;  // sampled
        const std::size_t n = static_cast<std::size_t>(count) * t.cells;
        const int salt = count + 1;
        const std::vector<T> expected = reduced(t, o, count, p, salt);
        const std::vector<T> mine = input<T>(me, n, salt);
        const std::string what = t.name + " " + o.name + " count " + std::to_string(count);
        std::vector<T> native(n, sentinel<T>());
        EXPECT_EQ(MPI_Allreduce(mine.data(), native.data(), count, t.type, o.op, comm_),
                  MPI_SUCCESS);
        EXPECT_EQ(mismatch(t, native, expected), "") << "MPI_Allreduce " << what;
        for (Algorithm a : {Algorithm::kNative, Algorithm::kRecursiveDoubling, Algorithm::kRing,
                            Algorithm::kRabenseifner, Algorithm::kBinomial, Algorithm::kKnomial}) {
          for (bool in_place : in_place_modes(count)) {
            const std::string how =
                std::string(algorithm_name(a)) + (in_place ? " in place " : " ") + what;
            const std::vector<T> send = mine;
            std::vector<T> ours = in_place ? mine : std::vector<T>(n, sentinel<T>());
            level_allreduce(a, in_place ? MPI_IN_PLACE : send.data(), ours.data(), count, t.type,
                            o.op, comm_);
            EXPECT_EQ(send, mine) << "send buffer changed: " << how;
            EXPECT_EQ(mismatch(t, ours, expected), "") << how;
            if (!in_place && a != Algorithm::kNative) {
              EXPECT_EQ(gaps_written(t, ours), "") << how;
            }
          }
        }
      }
    }
  }

  // Every rank's block in rank order.
  template <typename T>
  void check_allgather(const TypeCase<T>& t, Coverage k) {
    const int p = world_size(), me = world_rank();
    for (int count : counts_for(k)) {
      const std::size_t n = static_cast<std::size_t>(count) * t.cells;
      const int salt = count + 2;
      std::vector<T> expected;
      for (int r = 0; r < p; ++r) {
        const std::vector<T> x = input<T>(r, n, salt);
        expected.insert(expected.end(), x.begin(), x.end());
      }
      const std::vector<T> mine = input<T>(me, n, salt);
      const std::string what = t.name + " count " + std::to_string(count);
      for (Algorithm a : {Algorithm::kNative, Algorithm::kRecursiveDoubling, Algorithm::kRing}) {
        for (bool in_place : in_place_modes(count)) {
          const std::string how =
              std::string(algorithm_name(a)) + (in_place ? " in place " : " ") + what;
          std::vector<T> ours(n * p, sentinel<T>());
          if (in_place) std::copy(mine.begin(), mine.end(), ours.begin() + n * me);
          level_allgather(a, in_place ? MPI_IN_PLACE : mine.data(), count, t.type, ours.data(),
                          count, t.type, comm_);
          EXPECT_EQ(mismatch(t, ours, expected), "") << how;
          if (!in_place && a != Algorithm::kNative) {
            EXPECT_EQ(gaps_written(t, ours), "") << how;
          }
        }
      }
    }
  }

  // Block `me` of every rank's p blocks, reduced.
  template <typename T>
  void check_reduce_scatter_block(const TypeCase<T>& t, const std::vector<OpCase<T>>& ops,
                                  Coverage k) {
    const int p = world_size(), me = world_rank();
    for (const OpCase<T>& o : ops) {
      for (int count : counts_for(k)) {
        if (!thorough() && &o != &ops.front() && count != 7) continue;  // sampled
        const std::size_t n = static_cast<std::size_t>(count) * t.cells;
        const int salt = count + 3;
        const std::vector<T> all = reduced(t, o, count * p, p, salt);
        const std::vector<T> expected(all.begin() + n * me, all.begin() + n * (me + 1));
        const std::vector<T> mine = input<T>(me, n * p, salt);
        const std::string what = t.name + " " + o.name + " count " + std::to_string(count);
        for (Algorithm a : {Algorithm::kNative, Algorithm::kRecursiveHalving}) {
          for (bool in_place : in_place_modes(count)) {
            const std::string how =
                std::string(algorithm_name(a)) + (in_place ? " in place " : " ") + what;
            const std::vector<T> send = mine;
            std::vector<T> ours = in_place ? mine : std::vector<T>(n, sentinel<T>());
            level_reduce_scatter_block(a, in_place ? MPI_IN_PLACE : send.data(), ours.data(), count,
                                       t.type, o.op, comm_);
            EXPECT_EQ(send, mine) << "send buffer changed: " << how;
            ours.resize(n);
            EXPECT_EQ(mismatch(t, ours, expected), "") << how;
            if (!in_place && a != Algorithm::kNative) {
              EXPECT_EQ(gaps_written(t, ours), "") << how;
            }
          }
        }
      }
    }
  }

  static inline MPI_Comm comm_ = MPI_COMM_NULL;
  static inline MPI_Datatype strided_, gappy_, affine_;
  static inline MPI_Op compose_, sum_gappy_;
};

TEST_F(AlgorithmsTest, BcastMatchesMpi) {
  check_bcast(int_type(), kFull);
  check_bcast(double_type(), kSome);
  check_bcast(strided_type(), kSome);
  check_bcast(gappy_type(), kSome);
  check_bcast(affine_type(), kSome);
}

TEST_F(AlgorithmsTest, ReduceMatchesMpi) {
  check_reduce(int_type(), sum_and_max<int>(), kFull);
  check_reduce(double_type(), sum_and_max<double>(), kSome);
  check_reduce(gappy_type(), gappy_ops(), kSome);
  check_reduce(affine_type(), affine_ops(), kEveryRoot);
}

TEST_F(AlgorithmsTest, AllreduceMatchesMpi) {
  check_allreduce(int_type(), sum_and_max<int>(), kFull);
  check_allreduce(double_type(), sum_and_max<double>(), kSome);
  check_allreduce(gappy_type(), gappy_ops(), kSome);
  check_allreduce(affine_type(), affine_ops(), kSome);
}

TEST_F(AlgorithmsTest, AllgatherMatchesMpi) {
  check_allgather(int_type(), kSome);
  check_allgather(double_type(), kSome);
  check_allgather(strided_type(), kSome);
  check_allgather(gappy_type(), kSome);
}

// Send and receive types that differ in all but their signature: packed
// ints sent, two ints of every four received (the strided type).
TEST_F(AlgorithmsTest, AllgatherTakesASendTypeOtherThanItsReceiveType) {
  const int p = world_size(), me = world_rank(), count = 3;
  const TypeCase<int> t = strided_type();
  std::vector<int> expected(static_cast<std::size_t>(count) * t.cells * p);
  for (int r = 0; r < p; ++r) {
    for (int e = 0; e < count; ++e) {
      for (int c = 0; c < 2; ++c) {
        expected[(static_cast<std::size_t>(r) * count + e) * t.cells + t.data_cells[c]] =
            value<int>(r, static_cast<std::size_t>(2 * e + c), 4);
      }
    }
  }
  const std::vector<int> packed = input<int>(me, 2 * count, 4);
  for (Algorithm a : {Algorithm::kRecursiveDoubling, Algorithm::kRing}) {
    std::vector<int> ours(expected.size(), sentinel<int>());
    level_allgather(a, packed.data(), 2 * count, MPI_INT, ours.data(), count, t.type, comm_);
    EXPECT_EQ(mismatch(t, ours, expected), "") << algorithm_name(a);
    EXPECT_EQ(gaps_written(t, ours), "") << algorithm_name(a);
  }
}

TEST_F(AlgorithmsTest, ReduceScatterBlockMatchesMpi) {
  check_reduce_scatter_block(int_type(), sum_and_max<int>(), kSome);
  check_reduce_scatter_block(double_type(), sum_and_max<double>(), kSome);
  check_reduce_scatter_block(gappy_type(), gappy_ops(), kSome);
  // Not commutative: the native call, in rank order.
  check_reduce_scatter_block(affine_type(), affine_ops(), kSome);
}

// The non-commutative composition really depends on order: a reduction in
// any other order than 0..p-1 would give another map.
TEST_F(AlgorithmsTest, CompositionIsNotCommutative) {
  const std::uint32_t f[2] = {3, 5}, g[2] = {7, 11};
  std::uint32_t fg[2] = {g[0], g[1]}, gf[2] = {f[0], f[1]};
  int one = 1;
  compose(const_cast<std::uint32_t*>(f), fg, &one, nullptr);
  compose(const_cast<std::uint32_t*>(g), gf, &one, nullptr);
  EXPECT_EQ(fg[0], gf[0]);
  EXPECT_NE(fg[1], gf[1]);
}

// The last rank enters late (3 ms; simulated under SMPI): nobody leaves
// before it entered.
TEST_F(AlgorithmsTest, BarrierHoldsEveryRankUntilTheLastEnters) {
  const int p = world_size(), me = world_rank();
  for (Algorithm a : {Algorithm::kNative, Algorithm::kLinear}) {
    if (me == p - 1) hold_for(3e-3);
    const double entered = shared_now();
    level_barrier(a, comm_);
    const double left = shared_now();
    std::vector<double> times(2 * static_cast<std::size_t>(p));
    const double mine[2] = {entered, left};
    MPI_Allgather(mine, 2, MPI_DOUBLE, times.data(), 2, MPI_DOUBLE, MPI_COMM_WORLD);
    double last_in = 0, first_out = times[1];
    for (int r = 0; r < p; ++r) {
      last_in = std::max(last_in, times[2 * static_cast<std::size_t>(r)]);
      first_out = std::min(first_out, times[2 * static_cast<std::size_t>(r) + 1]);
    }
    EXPECT_GE(first_out, last_in) << algorithm_name(a);
  }
}

TEST_F(AlgorithmsTest, RejectsAlgorithmsThatDoNotApply) {
  int x = 1, y = 0;
  for (Algorithm a : {Algorithm::kRecursiveDoubling, Algorithm::kRing, Algorithm::kRabenseifner}) {
    EXPECT_THROW(level_bcast(a, &x, 1, MPI_INT, 0, comm_), std::invalid_argument);
  }
  for (Algorithm a :
       {Algorithm::kScatterAllgather, Algorithm::kRecursiveDoubling, Algorithm::kRing}) {
    EXPECT_THROW(level_reduce(a, &x, &y, 1, MPI_INT, MPI_SUM, 0, comm_), std::invalid_argument);
  }
  EXPECT_THROW(level_reduce(Algorithm::kChain, &x, &y, 1, MPI_INT, MPI_SUM, 0, comm_, -1),
               std::invalid_argument);
  for (Algorithm a : {Algorithm::kScatterAllgather, Algorithm::kChain}) {
    EXPECT_THROW(level_allreduce(a, &x, &y, 1, MPI_INT, MPI_SUM, comm_), std::invalid_argument);
  }
  EXPECT_THROW(level_bcast(Algorithm::kChain, &x, 1, MPI_INT, 0, comm_, -1), std::invalid_argument);
  EXPECT_THROW(level_bcast(Algorithm::kBinary, &x, 1, MPI_INT, 0, comm_, -1),
               std::invalid_argument);
  EXPECT_THROW(level_reduce(Algorithm::kBinary, &x, &y, 1, MPI_INT, MPI_SUM, 0, comm_, -1),
               std::invalid_argument);
  std::vector<int> all(static_cast<std::size_t>(world_size()), 0);
  for (Algorithm a :
       {Algorithm::kBinomial, Algorithm::kRabenseifner, Algorithm::kRecursiveHalving}) {
    EXPECT_THROW(level_allgather(a, &x, 1, MPI_INT, all.data(), 1, MPI_INT, comm_),
                 std::invalid_argument);
  }
  for (Algorithm a : {Algorithm::kRing, Algorithm::kRecursiveDoubling, Algorithm::kRabenseifner}) {
    EXPECT_THROW(level_reduce_scatter_block(a, all.data(), &y, 1, MPI_INT, MPI_SUM, comm_),
                 std::invalid_argument);
  }
  for (Algorithm a : {Algorithm::kBinomial, Algorithm::kRing}) {
    EXPECT_THROW(level_barrier(a, comm_), std::invalid_argument);
  }
  EXPECT_THROW(level_bcast(Algorithm::kLinear, &x, 1, MPI_INT, 0, comm_), std::invalid_argument);
}

TEST_F(AlgorithmsTest, NamesRoundTrip) {
  for (Algorithm a :
       {Algorithm::kNative, Algorithm::kBinomial, Algorithm::kKnomial, Algorithm::kScatterAllgather,
        Algorithm::kChain, Algorithm::kBinary, Algorithm::kRecursiveDoubling, Algorithm::kRing,
        Algorithm::kRabenseifner, Algorithm::kRecursiveHalving, Algorithm::kLinear}) {
    EXPECT_EQ(algorithm_named(algorithm_name(a)), a) << algorithm_name(a);
  }
  EXPECT_EQ(algorithm_name(Algorithm::kScatterAllgather), "scatter-allgather");
  EXPECT_EQ(algorithm_named("recursive-doubling"), Algorithm::kRecursiveDoubling);
  EXPECT_FALSE(algorithm_named("Ring").has_value());
  EXPECT_FALSE(algorithm_named("").has_value());
}

}  // namespace
}  // namespace rankshape::coll
