// matmul_bench: GFLOP/s of lib/matmul's algorithms (3D, SUMMA, HSUMMA) and
// ScaLAPACK's pdgemm side by side in one run, on the same ranks and sizes,
// under several placements of the ranks on the grid:
//   mpirun -np P matmul_bench --out matmul.csv [--algorithms 3d,summa,hsumma,pdgemm]
//          [--sizes 1024,2048x1024x512] [--placement identity,scrambled,relabelled]
//          [--panel 64] [--groups auto|balanced|2x2,4x1] [--reps 5] [--no-compute]
//
// Grids: 3D on a balanced q0 x q1 x q2 grid, the others on a balanced
// pr x pc grid (as MPI_Dims_create; --grid-3d, --grid-2d fix them).
// Placements:
//   identity    the ranks in their own order (GridComm::cartesian on the
//               world communicator);
//   scrambled   a fixed random permutation of them (MPI_Comm_split with a
//               shuffled key, seeded by --seed);
//   relabelled  relabel_comm() onto the grid's shape, once per shape, with
//               costs from --costs (measured by default), of the world
//               communicator (--relabel-from identity, the default) or of
//               the scrambled one. Both give the same kind of placement
//               (the engine works from the costs); identity is the default
//               because under SimGrid 3.32 MPI_Comm_split_type ignores the
//               key, so on a scrambled communicator a node's rank 0 is not
//               its lowest rank and hierarchical measurement (--costs
//               hierarchical or auto) fails ("node costs missing").
// pdgemm runs on the placement's grid communicator too: its BLACS context
// comes from Csys2blacs_handle on that communicator, process (i, j) at grid
// rank i * pc + j, so that our block layout and ScaLAPACK's block-cyclic one
// (mb = nb = --panel) share one process grid. Its matrices are converted
// with to_cyclic / from_cyclic outside the timed call. It exists only in
// Open MPI builds (ScaLAPACK for Open MPI); asking for it elsewhere is an
// error.
//
// A and B are generated entry by entry from a hash of (seed, row, column),
// so that every rank fills its own pieces and can recompute any entry of
// C = A B by a dot product: once per configuration (after the first call),
// every rank checks --check-samples entries of its piece of C (all of them
// when the piece is that small, always its first and last), and the largest
// error relative to sum_l |A(i,l) B(l,j)| over all ranks is printed; above
// max(k, 16) * 1e-15 the run exits with status 1 (after writing the CSV).
// --no-compute skips the local products (communication alone, e.g. for
// many simulated ranks): no check, no GFLOP/s, and no pdgemm.
//
// Each configuration runs --warmup times untimed and --reps times timed,
// every repetition started together after a barrier. Times are the median
// over repetitions of the slowest rank (each quantity on its own).
//
// Output (rank 0, written atomically at the end): CSV rows
//   algorithm,placement,p,grid,groups,m,n,k,panel,seconds,comm_seconds,
//   compute_seconds,gflops,outer_panel,outer_comm_seconds,computed,max_rel_error
// comm_seconds: 3D allgather + reduce-scatter; SUMMA and HSUMMA all
// broadcasts (outer_comm_seconds: HSUMMA's between groups); empty for
// pdgemm, which does not say. groups is HSUMMA's IxJ; gflops is 2 m n k /
// seconds.
#include <fmt/format.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cmd/mpi_main.h"
#include "lib/io/atomic_file.h"
#include "lib/matmul/grid_comm.h"
#include "lib/matmul/layout.h"
#include "lib/matmul/local.h"
#include "lib/matmul/mm3d.h"
#include "lib/matmul/summa.h"
#include "lib/model/grid.h"
#include "lib/mpi/communicator.h"
#include "lib/shape/shape.h"
#include "lib/util/random.h"

#ifdef RANKSHAPE_HAVE_SCALAPACK
#include <cblas-openblas.h>  // openblas_set_num_threads, openblas_get_config

extern "C" {
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int context);
int Csys2blacs_handle(MPI_Comm comm);
void Cfree_blacs_system_handle(int handle);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb,
               const int* irsrc, const int* icsrc, const int* context, const int* lld, int* info);
void pdgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
             const double* alpha, const double* a, const int* ia, const int* ja, const int* desca,
             const double* b, const int* ib, const int* jb, const int* descb, const double* beta,
             double* c, const int* ic, const int* jc, const int* descc);
}
#endif

namespace {

using namespace rankshape;
using namespace rankshape::matmul;

#ifdef RANKSHAPE_HAVE_SCALAPACK
constexpr bool kHaveScalapack = true;
#else
constexpr bool kHaveScalapack = false;
#endif

struct Args {
  std::string out;
  std::vector<std::string> algorithms;
  std::vector<std::string> sizes = {"1024"};
  std::vector<std::string> placements = {"identity"};
  std::vector<std::string> groups = {"auto"};
  std::string grid_2d = "auto", grid_3d = "auto";
  std::int64_t panel = 64, outer_panel = 0;
  int reps = 5, warmup = 1, check_samples = 256;
  bool no_compute = false;
  std::string costs = "measure", cost_file, relabel_algorithm = "auto", relabel_from = "identity";
  double relabel_time = 5;
  std::uint64_t seed = 1;
};

/// C (m x n) = A (m x k) B (k x n).
struct Size {
  std::int64_t m = 0, n = 0, k = 0;
};

/// "N" (square) or "MxNxK".
Size parse_size(const std::string& text) {
  std::vector<std::int64_t> v;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t x = std::min(text.find_first_of("xX", at), text.size());
    const std::string item = text.substr(at, x - at);
    std::size_t used = 0;
    long long value = -1;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || value < 1 || value > (1LL << 31)) {
      throw std::invalid_argument("--sizes: '" + text + "' is not N or MxNxK (positive integers)");
    }
    v.push_back(value);
    at = x + 1;
  }
  if (v.size() == 1) return {v[0], v[0], v[0]};
  if (v.size() == 3) return {v[0], v[1], v[2]};
  throw std::invalid_argument("--sizes: '" + text + "' is not N or MxNxK");
}

std::string dims_text(const std::vector<int>& dims) {
  std::string s;
  for (int d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

std::vector<int> grid_dims(const std::string& text, int p, int ndims, const char* option) {
  if (text == "auto")
    return complete_grid(p, std::vector<int>(static_cast<std::size_t>(ndims), 0)).dims();
  const Grid g = Grid::parse(text);
  if (g.ndims() != ndims || g.size() != p) {
    throw std::invalid_argument(
        fmt::format("{}: '{}' is not a {}-dim grid of {} ranks", option, text, ndims, p));
  }
  return g.dims();
}

/// HSUMMA's groups: rows x cols of them tile the grid (0 x 0: not HSUMMA).
struct Grouping {
  int rows = 0, cols = 0;
};

/// HSUMMA's groupings on a pr x pc grid.
std::vector<Grouping> groupings(const std::vector<std::string>& spec, int pr, int pc) {
  std::vector<Grouping> out;
  for (const std::string& s : spec) {
    if (s == "auto" || s == "balanced") {
      for (int i = 1; i <= pr; ++i) {
        if (pr % i != 0) continue;
        for (int j = 1; j <= pc; ++j) {
          if (pc % j != 0) continue;
          if (s == "auto" || (i <= 2 * j && j <= 2 * i)) out.push_back({i, j});
        }
      }
      continue;
    }
    const Grid g = Grid::parse(s);
    if (g.ndims() != 2 || pr % g.dim(0) != 0 || pc % g.dim(1) != 0) {
      throw std::invalid_argument(fmt::format(
          "--groups: '{}' does not tile the {}x{} grid (IxJ, I | {}, J | {})", s, pr, pc, pr, pc));
    }
    out.push_back({g.dim(0), g.dim(1)});
  }
  return out;
}

// --- Matrices -----------------------------------------------------------

constexpr std::uint64_t kSaltA = 0x41, kSaltB = 0x42;

/// Entry (i, j) of matrix `salt`, uniform in [-1, 1): the same on every rank.
double entry(std::uint64_t seed, std::uint64_t salt, std::int64_t i, std::int64_t j) {
  std::uint64_t z = (seed * 0x2545f4914f6cdd1dULL) ^ (salt << 56) ^
                    (static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL) ^
                    (static_cast<std::uint64_t>(j) * 0xc2b2ae3d27d4eb4fULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
}

/// This rank's piece of matrix `salt`; zeros when nothing is computed.
Block fill(const Piece& p, std::uint64_t seed, std::uint64_t salt, bool values) {
  Block b(p.rows.size, p.cols.size);
  if (!values) return b;
  for (std::int64_t c = 0; c < p.cols.size; ++c) {
    for (std::int64_t r = 0; r < p.rows.size; ++r) {
      b.at(r, c) = entry(seed, salt, p.rows.begin + r, p.cols.begin + c);
    }
  }
  return b;
}

/// The largest error of c (this rank's piece of C) at some of its entries,
/// relative to sum_l |A(i,l) B(l,j)|.
double check_piece(const Block& c, const Piece& p, std::int64_t k, std::uint64_t seed,
                   int samples) {
  const std::int64_t count = p.rows.size * p.cols.size;
  if (count == 0) return 0;
  std::vector<std::int64_t> which;
  if (count <= samples) {
    for (std::int64_t e = 0; e < count; ++e) which.push_back(e);
  } else {
    which = {0, count - 1};
    SplitMix64 rng(seed + 0x5eedULL +
                   static_cast<std::uint64_t>(p.rows.begin * 65537 + p.cols.begin));
    while (static_cast<int>(which.size()) < samples) {
      which.push_back(static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(count))));
    }
  }
  double worst = 0;
  for (std::int64_t e : which) {
    const std::int64_t r = e % p.rows.size, col = e / p.rows.size;
    const std::int64_t i = p.rows.begin + r, j = p.cols.begin + col;
    long double sum = 0, scale = 0;
    for (std::int64_t l = 0; l < k; ++l) {
      const long double x =
          static_cast<long double>(entry(seed, kSaltA, i, l)) * entry(seed, kSaltB, l, j);
      sum += x;
      scale += std::fabs(x);
    }
    const double error = static_cast<double>(std::fabs(c.at(r, col) - sum));
    worst = std::max(worst, scale > 0 ? error / static_cast<double>(scale) : error);
  }
  return worst;
}

// --- Timing --------------------------------------------------------------

/// One call on one rank (MPI_Wtime seconds).
struct Sample {
  double total = 0, comm = 0, compute = 0, outer = 0;
};

/// Medians over repetitions of the slowest rank.
struct Result {
  Sample median;
  double max_rel_error = -1;  // -1: not checked
};

/// What a configuration runs: one call (fills the sample's parts; the
/// total is timed outside) and this rank's piece of C in block layout.
struct Bench {
  std::function<Block(Sample&)> call;
  std::function<Block(const Block&)> to_block = [](const Block& c) { return c; };
  Piece c_piece;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

Result measure(const Bench& bench, const GridComm& grid, const Args& a, const Size& s) {
  const bool compute = !a.no_compute;
  Result result;
  std::vector<double> times;  // 4 per timed repetition
  for (int rep = 0; rep < a.warmup + a.reps; ++rep) {
    MPI_Barrier(grid.comm());
    Sample t;
    const double start = MPI_Wtime();
    Block c = bench.call(t);
    t.total = MPI_Wtime() - start;
    if (rep == 0 && compute) {
      const double error =
          check_piece(bench.to_block(c), bench.c_piece, s.k, a.seed, a.check_samples);
      MPI_Allreduce(&error, &result.max_rel_error, 1, MPI_DOUBLE, MPI_MAX, grid.comm());
    }
    if (rep >= a.warmup) times.insert(times.end(), {t.total, t.comm, t.compute, t.outer});
  }
  MPI_Allreduce(MPI_IN_PLACE, times.data(), static_cast<int>(times.size()), MPI_DOUBLE, MPI_MAX,
                grid.comm());
  std::vector<double> part[4];
  for (std::size_t i = 0; i < times.size(); ++i) part[i % 4].push_back(times[i]);
  result.median = {median(part[0]), median(part[1]), median(part[2]), median(part[3])};
  return result;
}

// --- The algorithms -------------------------------------------------------

Bench bench_3d(const GridComm& grid, const Size& s, const Args& a) {
  const MatmulSizes ms{s.m, s.k, s.n};
  const bool compute = !a.no_compute;
  auto pa = std::make_shared<Block>(
      fill(piece_a_3d(ms, grid.dims(), grid.coords()), a.seed, kSaltA, compute));
  auto pb = std::make_shared<Block>(
      fill(piece_b_3d(ms, grid.dims(), grid.coords()), a.seed, kSaltB, compute));
  Bench b;
  b.c_piece = piece_c_3d(ms, grid.dims(), grid.coords());
  b.call = [&grid, ms, pa, pb, compute](Sample& t) {
    Timings tm;
    Block c = multiply_3d(grid, ms, *pa, *pb, &tm, compute);
    t.comm = tm.allgather + tm.reduce_scatter;
    t.compute = tm.multiply;
    return c;
  };
  return b;
}

/// SUMMA's (and pdgemm's) blocks: A(i, j) is rows part i of m, columns part
/// j of k; B(i, j) rows part i of k, columns part j of n.
Piece piece_a_2d(const GridComm& g, const Size& s) {
  return {part(s.m, g.dim(0), g.coord(0)), part(s.k, g.dim(1), g.coord(1))};
}
Piece piece_b_2d(const GridComm& g, const Size& s) {
  return {part(s.k, g.dim(0), g.coord(0)), part(s.n, g.dim(1), g.coord(1))};
}
Piece piece_c_2d(const GridComm& g, const Size& s) {
  return {part(s.m, g.dim(0), g.coord(0)), part(s.n, g.dim(1), g.coord(1))};
}

/// SUMMA (hsumma == nullptr) or HSUMMA.
Bench bench_summa(const GridComm& grid, std::shared_ptr<const Hsumma> hsumma, const Size& s,
                  const Args& a) {
  const bool compute = !a.no_compute;
  auto pa = std::make_shared<Block>(fill(piece_a_2d(grid, s), a.seed, kSaltA, compute));
  auto pb = std::make_shared<Block>(fill(piece_b_2d(grid, s), a.seed, kSaltB, compute));
  const std::int64_t panel = a.panel, outer = a.outer_panel > 0 ? a.outer_panel : a.panel;
  Bench b;
  b.c_piece = piece_c_2d(grid, s);
  b.call = [&grid, hsumma, s, pa, pb, panel, outer, compute](Sample& t) {
    SummaTimings st;
    Block c = hsumma ? hsumma->multiply(s.m, s.n, s.k, *pa, *pb, outer, panel, &st, compute)
                     : summa(grid, s.m, s.n, s.k, *pa, *pb, panel, &st, compute);
    t.comm = st.bcast_seconds;
    t.compute = st.multiply_seconds;
    t.outer = st.outer_bcast_seconds;
    return c;
  };
  return b;
}

#ifdef RANKSHAPE_HAVE_SCALAPACK
/// A BLACS process grid on a grid communicator: process (i, j) is grid
/// rank i * pc + j ("Row" order), as in our block layout.
class BlacsGrid {
 public:
  explicit BlacsGrid(const GridComm& grid)
      : handle_(Csys2blacs_handle(grid.comm())), context_(handle_) {
    Cblacs_gridinit(&context_, "Row", grid.dim(0), grid.dim(1));
    int pr = 0, pc = 0, row = -1, col = -1;
    Cblacs_gridinfo(context_, &pr, &pc, &row, &col);
    if (pr != grid.dim(0) || pc != grid.dim(1) || row != grid.coord(0) || col != grid.coord(1)) {
      throw std::runtime_error(fmt::format(
          "BLACS put grid rank {} at ({}, {}) of {}x{}; expected ({}, {}) of {}x{}", grid.rank(),
          row, col, pr, pc, grid.coord(0), grid.coord(1), grid.dim(0), grid.dim(1)));
    }
  }
  ~BlacsGrid() {
    Cblacs_gridexit(context_);
    Cfree_blacs_system_handle(handle_);
  }
  BlacsGrid(const BlacsGrid&) = delete;
  BlacsGrid& operator=(const BlacsGrid&) = delete;
  int context() const { return context_; }

 private:
  int handle_, context_;
};

int to_int(std::int64_t v, const char* what) {
  if (v > INT32_MAX) throw std::invalid_argument(std::string("pdgemm: ") + what + " exceeds int");
  return static_cast<int>(v);
}

/// A descriptor for a rows x cols matrix in layout l on the context.
std::vector<int> descriptor(const CyclicLayout& l, int context, int row) {
  std::vector<int> desc(9);
  const int m = to_int(l.rows, "rows"), n = to_int(l.cols, "columns");
  const int mb = to_int(l.mb, "panel"), nb = to_int(l.nb, "panel"), zero = 0;
  const int lld = to_int(std::max<std::int64_t>(1, numroc(l.rows, l.mb, row, l.prow)), "rows");
  int info = 0;
  descinit_(desc.data(), &m, &n, &mb, &nb, &zero, &zero, &context, &lld, &info);
  if (info != 0) throw std::runtime_error(fmt::format("descinit_ failed: info = {}", info));
  return desc;
}

Bench bench_pdgemm(const GridComm& grid, const Size& s, const Args& a) {
  const int pr = grid.dim(0), pc = grid.dim(1);
  const BlockLayout la{s.m, s.k, pr, pc}, lb{s.k, s.n, pr, pc}, lc{s.m, s.n, pr, pc};
  const CyclicLayout ca{s.m, s.k, a.panel, a.panel, pr, pc}, cb{s.k, s.n, a.panel, a.panel, pr, pc},
      cc{s.m, s.n, a.panel, a.panel, pr, pc};
  struct State {
    std::unique_ptr<BlacsGrid> blacs;
    Block a, b;
    std::vector<int> da, db, dc;
    std::int64_t c_rows = 0, c_cols = 0;
  };
  auto st = std::make_shared<State>();
  st->blacs = std::make_unique<BlacsGrid>(grid);
  st->a = to_cyclic(la, fill(piece_a_2d(grid, s), a.seed, kSaltA, true), ca, grid.comm());
  st->b = to_cyclic(lb, fill(piece_b_2d(grid, s), a.seed, kSaltB, true), cb, grid.comm());
  const int row = grid.coord(0), context = st->blacs->context();
  st->da = descriptor(ca, context, row);
  st->db = descriptor(cb, context, row);
  st->dc = descriptor(cc, context, row);
  st->c_rows = numroc(s.m, a.panel, row, pr);
  st->c_cols = numroc(s.n, a.panel, grid.coord(1), pc);
  const int m = to_int(s.m, "m"), n = to_int(s.n, "n"), k = to_int(s.k, "k");
  Bench b;
  b.c_piece = piece_c_2d(grid, s);
  b.call = [st, m, n, k](Sample&) {
    Block c(st->c_rows, st->c_cols);
    const double one = 1, zero = 0;
    const int i1 = 1;
    pdgemm_("N", "N", &m, &n, &k, &one, st->a.data.data(), &i1, &i1, st->da.data(),
            st->b.data.data(), &i1, &i1, st->db.data(), &zero, c.data.data(), &i1, &i1,
            st->dc.data());
    return c;
  };
  b.to_block = [&grid, cc, lc](const Block& c) { return from_cyclic(cc, c, lc, grid.comm()); };
  return b;
}
#endif

// --- Placements -----------------------------------------------------------

/// The communicators of every placement and grid shape, made on first use.
/// Grids borrow the shaped communicators, so they are declared after them
/// (and freed before).
class Placements {
 public:
  Placements(const Args& a, int p) : args_(a) {
    // A fixed random order: rank r takes position order[r].
    std::vector<int> order(static_cast<std::size_t>(p));
    for (int i = 0; i < p; ++i) order[static_cast<std::size_t>(i)] = i;
    SplitMix64 rng(a.seed ^ 0x5c7a3b1eULL);
    shuffle(order, rng);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    scrambled_ = std::make_unique<mpi::Communicator>(
        mpi::Communicator(MPI_COMM_WORLD, mpi::Ownership::kBorrow)
            .split(0, order[static_cast<std::size_t>(rank_)]));
  }

  const GridComm& grid(const std::string& placement, const std::vector<int>& dims) {
    auto& grids = grids_[placement];
    auto it = grids.find(dims);
    if (it != grids.end()) return it->second;
    if (placement == "identity") {
      return grids.emplace(dims, GridComm::cartesian(MPI_COMM_WORLD, dims)).first->second;
    }
    if (placement == "scrambled") {
      return grids.emplace(dims, GridComm::cartesian(scrambled_->get(), dims)).first->second;
    }
    if (placement != "relabelled") {
      throw std::invalid_argument("--placement: unknown placement '" + placement +
                                  "' (identity, scrambled, relabelled)");
    }
    ShapeOptions o;
    o.source = parse_cost_source(args_.costs);
    o.cost_file = args_.cost_file;
    o.algorithm = args_.relabel_algorithm;
    o.time_limit = args_.relabel_time;
    o.seed = args_.seed;
    MPI_Comm from = MPI_COMM_WORLD;
    if (args_.relabel_from == "scrambled") {
      from = scrambled_->get();
    } else if (args_.relabel_from != "identity") {
      throw std::invalid_argument("--relabel-from: '" + args_.relabel_from +
                                  "' is not identity or scrambled");
    }
    const double start = MPI_Wtime();
    const ShapedComm& s = shaped_.emplace(dims, relabel_comm(from, Grid(dims), o)).first->second;
    const double seconds = MPI_Wtime() - start;
    if (rank_ == 0) {
      const ShapeReport& r = s.report();
      std::cout << fmt::format(
                       "# relabelled {} (from {}): costs {}, algorithm {}, objective {:.6g} -> "
                       "{:.6g}, measure {:.3f} s, relabel {:.3f} s, in all {:.3f} s{}\n",
                       dims_text(dims), args_.relabel_from, r.cost_source, r.algorithm,
                       r.before.value.primary, r.after.value.primary, r.measure_seconds,
                       r.relabel_seconds, seconds, r.time_limited ? " (time-limited)" : "")
                << std::flush;
    }
    return grids.emplace(dims, GridComm::shaped(s)).first->second;
  }

 private:
  const Args& args_;
  int rank_ = 0;
  std::unique_ptr<mpi::Communicator> scrambled_;
  std::map<std::vector<int>, ShapedComm> shaped_;
  std::map<std::string, std::map<std::vector<int>, GridComm>> grids_;
};

// --- The run ---------------------------------------------------------------

std::string csv_number(double v) { return v < 0 ? "" : fmt::format("{:.9g}", v); }

int run(const Args& a) {
  int rank = 0, p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const bool compute = !a.no_compute;
  for (const std::string& name : a.algorithms) {
    if (name != "3d" && name != "summa" && name != "hsumma" && name != "pdgemm") {
      throw std::invalid_argument("--algorithms: unknown algorithm '" + name +
                                  "' (3d, summa, hsumma, pdgemm)");
    }
    if (name == "pdgemm" && !kHaveScalapack) {
      throw std::invalid_argument(
          "--algorithms pdgemm: this build has no ScaLAPACK (it is linked in Open MPI builds "
          "only, not under --config=mpich or --config=smpi)");
    }
    if (name == "pdgemm" && !compute) {
      throw std::invalid_argument(
          "--algorithms pdgemm: pdgemm cannot skip its local products; "
          "drop --no-compute or pdgemm");
    }
  }
  std::vector<Size> sizes;
  for (const std::string& s : a.sizes) sizes.push_back(parse_size(s));
  if (a.panel < 1) throw std::invalid_argument("--panel: must be at least 1");
  if (a.outer_panel != 0 && a.outer_panel < a.panel) {
    throw std::invalid_argument("--outer-panel: must be 0 (= --panel) or at least --panel");
  }
  const std::vector<int> dims3 = grid_dims(a.grid_3d, p, 3, "--grid-3d");
  const std::vector<int> dims2 = grid_dims(a.grid_2d, p, 2, "--grid-2d");
  const bool has_hsumma =
      std::find(a.algorithms.begin(), a.algorithms.end(), "hsumma") != a.algorithms.end();
  const auto groups =
      has_hsumma ? groupings(a.groups, dims2[0], dims2[1]) : std::vector<Grouping>{};
#ifdef RANKSHAPE_HAVE_SCALAPACK
  // One thread per rank, as the local product.
  openblas_set_num_threads(1);
#endif
  // On every rank: a bad RANKSHAPE_LOCAL_GEMM stops them all here, not
  // rank 0 alone.
  const std::string backend = local_backend();
  if (rank == 0) {
    std::cout << fmt::format(
        "# matmul_bench: {} ranks, 3D grid {}, 2D grid {}, local product {}{}, {}\n", p,
        dims_text(dims3), dims_text(dims2), backend,
#ifdef RANKSHAPE_HAVE_SCALAPACK
        fmt::format(", pdgemm on {}", openblas_get_config()),
#else
        "",
#endif
        compute ? "computing" : "communication only (--no-compute)");
    std::cout << fmt::format(
                     "{:<7} {:<10} {:>8} {:>6} {:>17} {:>5} {:>11} {:>11} {:>11} {:>9} {:>9}\n",
                     "algo", "placement", "grid", "groups", "m x n x k", "panel", "seconds",
                     "comm_s", "compute_s", "GFLOP/s", "rel_err")
              << std::flush;
  }
  Placements placements(a, p);
  std::ostringstream csv;
  csv << "algorithm,placement,p,grid,groups,m,n,k,panel,seconds,comm_seconds,compute_seconds,"
         "gflops,outer_panel,outer_comm_seconds,computed,max_rel_error\n";
  bool wrong = false;
  for (const std::string& placement : a.placements) {
    for (const Size& s : sizes) {
      for (const std::string& algorithm : a.algorithms) {
        const bool is_3d = algorithm == "3d";
        const GridComm& grid = placements.grid(placement, is_3d ? dims3 : dims2);
        std::vector<Grouping> sweep = {{0, 0}};
        if (algorithm == "hsumma") sweep = groups;
        for (const Grouping& g : sweep) {
          Bench bench;
          std::shared_ptr<const Hsumma> hsumma;
          if (is_3d) {
            bench = bench_3d(grid, s, a);
          } else if (algorithm == "summa") {
            bench = bench_summa(grid, nullptr, s, a);
          } else if (algorithm == "hsumma") {
            hsumma = std::make_shared<const Hsumma>(grid, g.rows, g.cols);
            bench = bench_summa(grid, hsumma, s, a);
          } else {
#ifdef RANKSHAPE_HAVE_SCALAPACK
            bench = bench_pdgemm(grid, s, a);
#endif
          }
          const Result r = measure(bench, grid, a, s);
          const double tol = std::max<double>(static_cast<double>(s.k), 16) * 1e-15;
          const bool bad = compute && !(r.max_rel_error <= tol);
          wrong = wrong || bad;
          const double flops =
              2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
          const double gflops = compute && r.median.total > 0 ? flops / r.median.total / 1e9 : -1;
          const bool ours = algorithm != "pdgemm";
          const bool panelled = algorithm == "summa" || algorithm == "hsumma" || !ours;
          const std::string group_text =
              algorithm == "hsumma" ? fmt::format("{}x{}", g.rows, g.cols) : "";
          const std::int64_t outer = a.outer_panel > 0 ? a.outer_panel : a.panel;
          csv << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", algorithm,
                             placement, p, dims_text(grid.dims()), group_text, s.m, s.n, s.k,
                             panelled ? std::to_string(a.panel) : "", csv_number(r.median.total),
                             ours ? csv_number(r.median.comm) : "",
                             ours ? csv_number(r.median.compute) : "", csv_number(gflops),
                             algorithm == "hsumma" ? std::to_string(outer) : "",
                             algorithm == "hsumma" ? csv_number(r.median.outer) : "",
                             compute ? 1 : 0, csv_number(r.max_rel_error));
          if (rank == 0) {
            std::cout << fmt::format(
                             "{:<7} {:<10} {:>8} {:>6} {:>17} {:>5} {:>11.6f} {:>11} {:>11} {:>9} "
                             "{:>9}{}\n",
                             algorithm, placement, dims_text(grid.dims()), group_text,
                             fmt::format("{}x{}x{}", s.m, s.n, s.k),
                             panelled ? std::to_string(a.panel) : "-", r.median.total,
                             ours ? fmt::format("{:.6f}", r.median.comm) : "-",
                             ours ? fmt::format("{:.6f}", r.median.compute) : "-",
                             gflops < 0 ? "-" : fmt::format("{:.2f}", gflops),
                             r.max_rel_error < 0 ? "-" : fmt::format("{:.1e}", r.max_rel_error),
                             bad ? "  WRONG" : "")
                      << std::flush;
          }
        }
      }
    }
  }
  if (rank == 0) {
    const std::string text = csv.str();
    write_file_atomically(a.out, [&](std::ostream& out) { out << text; });
    if (wrong) std::cerr << "matmul_bench: error: some product is wrong (see WRONG above)\n";
  }
  return wrong ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CLI::App app(
      "GFLOP/s of 3D, SUMMA, HSUMMA and ScaLAPACK's pdgemm on the same ranks and sizes, under "
      "identity, scrambled and relabelled placements.",
      "matmul_bench");
  Args a;
  a.algorithms = kHaveScalapack ? std::vector<std::string>{"3d", "summa", "hsumma", "pdgemm"}
                                : std::vector<std::string>{"3d", "summa", "hsumma"};
  app.add_option("--out", a.out, "CSV to write (rank 0)")->required();
  app.add_option("--algorithms", a.algorithms, "3d, summa, hsumma, pdgemm (Open MPI builds)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--sizes", a.sizes, "matrix sizes: N (square) or MxNxK (C is M x N)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--placement", a.placements, "identity, scrambled, relabelled")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--grid-3d", a.grid_3d, "3D grid Q0xQ1xQ2, or auto (balanced)")
      ->capture_default_str();
  app.add_option("--grid-2d", a.grid_2d, "2D grid PRxPC (SUMMA, HSUMMA, pdgemm), or auto")
      ->capture_default_str();
  app.add_option("--panel", a.panel, "SUMMA panel b; HSUMMA's inner panel; pdgemm's mb = nb")
      ->capture_default_str();
  app.add_option("--outer-panel", a.outer_panel, "HSUMMA's outer panel M (0: = --panel)")
      ->capture_default_str();
  app.add_option("--groups", a.groups,
                 "HSUMMA groupings IxJ (I | PR, J | PC); auto: every one; balanced: those "
                 "with I and J within a factor of 2 (every power-of-2 group count on a "
                 "power-of-2 grid)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--reps", a.reps, "timed repetitions")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--warmup", a.warmup, "untimed repetitions first")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_flag("--no-compute", a.no_compute,
               "skip the local products: communication only (no check, no pdgemm)");
  app.add_option("--check-samples", a.check_samples, "entries of C each rank checks")
      ->check(CLI::Range(2, 1 << 24))
      ->capture_default_str();
  app.add_option("--costs", a.costs,
                 "relabelled: cost source (auto, measure, hierarchical, model, file)")
      ->capture_default_str();
  app.add_option("--cost-file", a.cost_file, "relabelled with --costs file: the cost file");
  app.add_option("--relabel-from", a.relabel_from,
                 "relabelled: relabel the identity or the scrambled communicator")
      ->capture_default_str();
  app.add_option("--relabel-algorithm", a.relabel_algorithm, "relabelled: engine algorithm")
      ->capture_default_str();
  app.add_option("--relabel-time", a.relabel_time, "relabelled: seconds each rank may search")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--seed", a.seed, "matrices, scrambled order and relabelling")
      ->capture_default_str();
  return parse_run_finalize(app, argc, argv, [&] { return run(a); });
}
