// Moving pieces of a distributed matrix between ranks.
//
// Scatter and gather pack the pieces in rank order into one buffer at the
// root (MPI_Scatterv / MPI_Gatherv). The block <-> block-cyclic conversions
// are one MPI_Alltoallv: every element's owner and local position are
// computable in both layouts, so the sender packs, per destination, its
// elements in global column-major order, and the receiver walks the
// sender's rows and columns in the same order. Example, 4 x 1 matrix,
// 2 x 1 blocks on ranks 0 and 1 -> cyclic with mb = 1: rank 0 holds rows
// {0, 1} and sends row 0 to itself, row 1 to rank 1; rank 1 holds {2, 3}
// and sends row 2 to rank 0, row 3 to itself; rank 0 ends with rows {0, 2}.
#include "lib/matmul/layout.h"

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

#include "lib/mpi/error.h"

namespace rankshape::matmul {
namespace {

using mpi::check;

int comm_rank(MPI_Comm comm) {
  int r = 0;
  check(MPI_Comm_rank(comm, &r), "MPI_Comm_rank");
  return r;
}
int comm_size(MPI_Comm comm) {
  int p = 0;
  check(MPI_Comm_size(comm, &p), "MPI_Comm_size");
  return p;
}

// Collective: when any rank's error is not empty, every rank throws
// std::invalid_argument with the lowest failing rank's message.
void agree(MPI_Comm comm, const char* what, const std::string& error) {
  const int rank = comm_rank(comm), size = comm_size(comm);
  const int mine = error.empty() ? size : rank;
  int first = size;
  check(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (first == size) return;
  int length = rank == first ? static_cast<int>(error.size()) : 0;
  check(MPI_Bcast(&length, 1, MPI_INT, first, comm), "MPI_Bcast");
  std::string text = rank == first ? error : std::string(static_cast<std::size_t>(length), ' ');
  check(MPI_Bcast(text.data(), length, MPI_CHAR, first, comm), "MPI_Bcast");
  throw std::invalid_argument(std::string(what) + ": rank " + std::to_string(first) + ": " + text);
}

// MPI counts and displacements are ints.
int to_count(std::int64_t n, const char* what) {
  if (n < 0 || n > INT_MAX) {
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(n) +
                                " elements exceed MPI's int counts");
  }
  return static_cast<int>(n);
}

std::int64_t area(const Piece& p) { return p.rows.size * p.cols.size; }

std::string block_size_error(const Block& b, std::int64_t rows, std::int64_t cols) {
  if (b.rows == rows && b.cols == cols && static_cast<std::int64_t>(b.data.size()) == rows * cols) {
    return "";
  }
  return "its Block is " + std::to_string(b.rows) + " x " + std::to_string(b.cols) + " with " +
         std::to_string(b.data.size()) + " elements; expected " + std::to_string(rows) + " x " +
         std::to_string(cols);
}

// Checks that are the same on every rank (no communication needed).
void check_pieces(const char* what, std::int64_t rows, std::int64_t cols,
                  const std::vector<Piece>& pieces, int root, MPI_Comm comm) {
  const int size = comm_size(comm);
  if (static_cast<int>(pieces.size()) != size) {
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(pieces.size()) +
                                " pieces for " + std::to_string(size) + " ranks");
  }
  if (root < 0 || root >= size) {
    throw std::invalid_argument(std::string(what) + ": root " + std::to_string(root) +
                                " outside the communicator of " + std::to_string(size));
  }
  if (rows < 0 || cols < 0) throw std::invalid_argument(std::string(what) + ": negative size");
  std::int64_t total = 0;
  for (const Piece& p : pieces) {
    if (p.rows.begin < 0 || p.rows.size < 0 || p.rows.end() > rows || p.cols.begin < 0 ||
        p.cols.size < 0 || p.cols.end() > cols) {
      throw std::invalid_argument(std::string(what) + ": a piece lies outside the " +
                                  std::to_string(rows) + " x " + std::to_string(cols) + " matrix");
    }
    total += area(p);
  }
  to_count(total, what);
}

// Per-rank counts and displacements of the pieces packed in rank order.
struct Counts {
  std::vector<int> count, displ;
};
Counts piece_counts(const std::vector<Piece>& pieces) {
  Counts c;
  int at = 0;
  for (const Piece& p : pieces) {
    c.count.push_back(static_cast<int>(area(p)));
    c.displ.push_back(at);
    at += c.count.back();
  }
  return c;
}

void check_layout(const char* what, const BlockLayout& l, MPI_Comm comm) {
  if (l.prow < 1 || l.pcol < 1 || l.rows < 0 || l.cols < 0) {
    throw std::invalid_argument(std::string(what) + ": bad block layout");
  }
  const int size = comm_size(comm);
  if (static_cast<std::int64_t>(l.prow) * l.pcol != size) {
    throw std::invalid_argument(std::string(what) + ": a " + std::to_string(l.prow) + " x " +
                                std::to_string(l.pcol) + " layout on " + std::to_string(size) +
                                " ranks");
  }
}

void check_layout(const char* what, const CyclicLayout& l, MPI_Comm comm) {
  if (l.prow < 1 || l.pcol < 1 || l.rows < 0 || l.cols < 0 || l.mb < 1 || l.nb < 1) {
    throw std::invalid_argument(std::string(what) + ": bad block-cyclic layout");
  }
  const int size = comm_size(comm);
  if (static_cast<std::int64_t>(l.prow) * l.pcol != size) {
    throw std::invalid_argument(std::string(what) + ": a " + std::to_string(l.prow) + " x " +
                                std::to_string(l.pcol) + " block-cyclic grid on " +
                                std::to_string(size) + " ranks");
  }
}

// One dimension of a distribution: for every global index its owner (a
// process coordinate) and its local index there; for every process the
// global indices it holds, increasing.
struct DimMap {
  std::vector<int> owner;
  std::vector<std::int64_t> local;
  std::vector<std::vector<std::int64_t>> globals;
};

DimMap block_dim(std::int64_t n, int parts) {
  DimMap d;
  d.owner.resize(static_cast<std::size_t>(n));
  d.local.resize(static_cast<std::size_t>(n));
  d.globals.resize(static_cast<std::size_t>(parts));
  for (int i = 0; i < parts; ++i) {
    const Range r = part(n, parts, i);
    for (std::int64_t g = r.begin; g < r.end(); ++g) {
      d.owner[static_cast<std::size_t>(g)] = i;
      d.local[static_cast<std::size_t>(g)] = g - r.begin;
      d.globals[static_cast<std::size_t>(i)].push_back(g);
    }
  }
  return d;
}

DimMap cyclic_dim(std::int64_t n, std::int64_t nb, int parts) {
  DimMap d;
  d.owner.resize(static_cast<std::size_t>(n));
  d.local.resize(static_cast<std::size_t>(n));
  d.globals.resize(static_cast<std::size_t>(parts));
  for (std::int64_t g = 0; g < n; ++g) {
    const int p = static_cast<int>((g / nb) % parts);
    d.owner[static_cast<std::size_t>(g)] = p;
    d.local[static_cast<std::size_t>(g)] = (g / (nb * parts)) * nb + g % nb;
    d.globals[static_cast<std::size_t>(p)].push_back(g);
  }
  return d;
}

// A 2D distribution over a row-major process grid (rank = i * pcol + j).
struct Dist {
  DimMap rows, cols;
  int pcol = 1;
};

// Collective: mine (laid out by `from`) to the same matrix laid out by
// `to`, with one MPI_Alltoallv.
Block redistribute(const char* what, const Dist& from, const Dist& to, const Block& mine,
                   MPI_Comm comm) {
  const int me = comm_rank(comm), size = comm_size(comm);
  const auto at = [](auto& v, std::int64_t i) -> auto& { return v[static_cast<std::size_t>(i)]; };
  const std::vector<std::int64_t>& my_rows = at(from.rows.globals, me / from.pcol);
  const std::vector<std::int64_t>& my_cols = at(from.cols.globals, me % from.pcol);
  const std::int64_t mr = static_cast<std::int64_t>(my_rows.size());
  const std::int64_t mc = static_cast<std::int64_t>(my_cols.size());
  agree(comm, what, block_size_error(mine, mr, mc));

  // Send: my elements in column-major order, each appended to its
  // destination's run.
  std::vector<std::int64_t> row_count(to.rows.globals.size()), col_count(to.cols.globals.size());
  for (std::int64_t g : my_rows) ++at(row_count, at(to.rows.owner, g));
  for (std::int64_t g : my_cols) ++at(col_count, at(to.cols.owner, g));
  std::vector<int> send_count(static_cast<std::size_t>(size)), send_displ(send_count.size());
  int total = 0;
  for (int d = 0; d < size; ++d) {
    at(send_count, d) = static_cast<int>(at(row_count, d / to.pcol) * at(col_count, d % to.pcol));
    at(send_displ, d) = total;
    total += at(send_count, d);
  }
  std::vector<double> send(static_cast<std::size_t>(total));
  std::vector<int> cursor = send_displ;
  std::vector<int> row_dest(static_cast<std::size_t>(mr));  // destination process row * pcol
  for (std::int64_t li = 0; li < mr; ++li)
    at(row_dest, li) = at(to.rows.owner, at(my_rows, li)) * to.pcol;
  for (std::int64_t lj = 0; lj < mc; ++lj) {
    const int dest_col = at(to.cols.owner, at(my_cols, lj));
    const double* column = mine.data.data() + lj * mr;
    for (std::int64_t li = 0; li < mr; ++li) {
      send[static_cast<std::size_t>(at(cursor, at(row_dest, li) + dest_col)++)] = column[li];
    }
  }

  // Receive: from source (sr, sc), its rows that are mine, in order, and
  // likewise its columns; elements arrive column-major over those.
  const int tr = me / to.pcol, tc = me % to.pcol;
  const auto mine_of = [&](const std::vector<std::int64_t>& globals, const DimMap& dim, int coord) {
    std::vector<std::int64_t> local;
    for (std::int64_t g : globals) {
      if (at(dim.owner, g) == coord) local.push_back(at(dim.local, g));
    }
    return local;
  };
  std::vector<std::vector<std::int64_t>> rows_from, cols_from;
  for (const auto& g : from.rows.globals) rows_from.push_back(mine_of(g, to.rows, tr));
  for (const auto& g : from.cols.globals) cols_from.push_back(mine_of(g, to.cols, tc));
  std::vector<int> recv_count(static_cast<std::size_t>(size)), recv_displ(recv_count.size());
  total = 0;
  for (int s = 0; s < size; ++s) {
    at(recv_count, s) =
        static_cast<int>(at(rows_from, s / from.pcol).size() * at(cols_from, s % from.pcol).size());
    at(recv_displ, s) = total;
    total += at(recv_count, s);
  }
  std::vector<double> recv(static_cast<std::size_t>(total));
  check(MPI_Alltoallv(send.data(), send_count.data(), send_displ.data(), MPI_DOUBLE, recv.data(),
                      recv_count.data(), recv_displ.data(), MPI_DOUBLE, comm),
        "MPI_Alltoallv");

  Block out(static_cast<std::int64_t>(at(to.rows.globals, tr).size()),
            static_cast<std::int64_t>(at(to.cols.globals, tc).size()));
  for (int s = 0; s < size; ++s) {
    std::size_t k = static_cast<std::size_t>(at(recv_displ, s));
    const std::vector<std::int64_t>& rows = at(rows_from, s / from.pcol);
    for (std::int64_t lj : at(cols_from, s % from.pcol)) {
      for (std::int64_t li : rows) out.at(li, lj) = recv[k++];
    }
  }
  return out;
}

}  // namespace

Range part(std::int64_t n, int parts, int i) {
  if (n < 0 || parts < 1 || i < 0 || i >= parts) {
    throw std::invalid_argument(
        "part: need n >= 0 and 0 <= i < parts, got n = " + std::to_string(n) +
        ", parts = " + std::to_string(parts) + ", i = " + std::to_string(i));
  }
  const std::int64_t base = n / parts, extra = n % parts;
  return Range{i * base + std::min<std::int64_t>(i, extra), base + (i < extra ? 1 : 0)};
}

std::vector<Piece> block_pieces(const BlockLayout& layout) {
  std::vector<Piece> pieces;
  for (int i = 0; i < layout.prow; ++i) {
    for (int j = 0; j < layout.pcol; ++j)
      pieces.push_back({layout.row_part(i), layout.col_part(j)});
  }
  return pieces;
}

Block scatter_pieces(std::int64_t rows, std::int64_t cols, const std::vector<Piece>& pieces,
                     const Block& whole, int root, MPI_Comm comm) {
  constexpr const char* kWhat = "scatter_pieces";
  check_pieces(kWhat, rows, cols, pieces, root, comm);
  const int me = comm_rank(comm);
  agree(comm, kWhat, me == root ? block_size_error(whole, rows, cols) : "");
  const Counts c = piece_counts(pieces);
  std::vector<double> packed;
  if (me == root) {
    packed.resize(static_cast<std::size_t>(c.displ.back() + c.count.back()));
    double* out = packed.data();
    for (const Piece& p : pieces) {
      for (std::int64_t j = p.cols.begin; j < p.cols.end(); ++j) {
        const double* column = whole.data.data() + j * rows + p.rows.begin;
        out = std::copy(column, column + p.rows.size, out);
      }
    }
  }
  const Piece& mine = pieces[static_cast<std::size_t>(me)];
  Block block(mine.rows.size, mine.cols.size);
  check(MPI_Scatterv(packed.data(), c.count.data(), c.displ.data(), MPI_DOUBLE, block.data.data(),
                     static_cast<int>(area(mine)), MPI_DOUBLE, root, comm),
        "MPI_Scatterv");
  return block;
}

Block gather_pieces(std::int64_t rows, std::int64_t cols, const std::vector<Piece>& pieces,
                    const Block& mine, int root, MPI_Comm comm) {
  constexpr const char* kWhat = "gather_pieces";
  check_pieces(kWhat, rows, cols, pieces, root, comm);
  const int me = comm_rank(comm);
  const Piece& own = pieces[static_cast<std::size_t>(me)];
  agree(comm, kWhat, block_size_error(mine, own.rows.size, own.cols.size));
  const Counts c = piece_counts(pieces);
  std::vector<double> packed(me == root ? static_cast<std::size_t>(c.displ.back() + c.count.back())
                                        : 0);
  check(MPI_Gatherv(mine.data.data(), static_cast<int>(area(own)), MPI_DOUBLE, packed.data(),
                    c.count.data(), c.displ.data(), MPI_DOUBLE, root, comm),
        "MPI_Gatherv");
  if (me != root) return Block();
  Block whole(rows, cols);
  const double* in = packed.data();
  for (const Piece& p : pieces) {
    for (std::int64_t j = p.cols.begin; j < p.cols.end(); ++j) {
      std::copy(in, in + p.rows.size, whole.data.data() + j * rows + p.rows.begin);
      in += p.rows.size;
    }
  }
  return whole;
}

Block scatter_blocks(const BlockLayout& layout, const Block& whole, int root, MPI_Comm comm) {
  check_layout("scatter_blocks", layout, comm);
  return scatter_pieces(layout.rows, layout.cols, block_pieces(layout), whole, root, comm);
}

Block gather_blocks(const BlockLayout& layout, const Block& mine, int root, MPI_Comm comm) {
  check_layout("gather_blocks", layout, comm);
  return gather_pieces(layout.rows, layout.cols, block_pieces(layout), mine, root, comm);
}

std::int64_t numroc(std::int64_t n, std::int64_t nb, int iproc, int nprocs) {
  if (n < 0 || nb < 1 || nprocs < 1 || iproc < 0 || iproc >= nprocs) {
    throw std::invalid_argument("numroc: need n >= 0, nb >= 1 and 0 <= iproc < nprocs");
  }
  const std::int64_t blocks = n / nb;
  std::int64_t count = (blocks / nprocs) * nb;
  const std::int64_t extra = blocks % nprocs;
  if (iproc < extra) {
    count += nb;
  } else if (iproc == extra) {
    count += n % nb;
  }
  return count;
}

Block to_cyclic(const BlockLayout& from, const Block& mine, const CyclicLayout& to, MPI_Comm comm) {
  constexpr const char* kWhat = "to_cyclic";
  check_layout(kWhat, from, comm);
  check_layout(kWhat, to, comm);
  if (from.rows != to.rows || from.cols != to.cols) {
    throw std::invalid_argument("to_cyclic: the layouts describe matrices of different sizes");
  }
  to_count(from.rows * from.cols, kWhat);
  const Dist f{block_dim(from.rows, from.prow), block_dim(from.cols, from.pcol), from.pcol};
  const Dist t{cyclic_dim(to.rows, to.mb, to.prow), cyclic_dim(to.cols, to.nb, to.pcol), to.pcol};
  return redistribute(kWhat, f, t, mine, comm);
}

Block from_cyclic(const CyclicLayout& from, const Block& mine, const BlockLayout& to,
                  MPI_Comm comm) {
  constexpr const char* kWhat = "from_cyclic";
  check_layout(kWhat, from, comm);
  check_layout(kWhat, to, comm);
  if (from.rows != to.rows || from.cols != to.cols) {
    throw std::invalid_argument("from_cyclic: the layouts describe matrices of different sizes");
  }
  to_count(from.rows * from.cols, kWhat);
  const Dist f{cyclic_dim(from.rows, from.mb, from.prow), cyclic_dim(from.cols, from.nb, from.pcol),
               from.pcol};
  const Dist t{block_dim(to.rows, to.prow), block_dim(to.cols, to.pcol), to.pcol};
  return redistribute(kWhat, f, t, mine, comm);
}

}  // namespace rankshape::matmul
