// The graph topology constructors as drop-ins (PMPI interposition):
// MPI_Dist_graph_create_adjacent, MPI_Dist_graph_create and
// MPI_Graph_create with reorder relabel the ranks by the edges the program
// declares (their weights when given, 1 each otherwise), so that heavy
// edges sit on cheap links. Open MPI remaps only distributed graphs
// (topo/treematch: a flat network, and in 4.1 neighbour lists left
// untranslated, open-mpi/ompi#8939); MPICH reorders nothing.
//
// What a call with reorder does, collectively over `old`:
//   1. every rank reads its settings from the environment (below); one bad
//      value anywhere fails the call on every rank;
//   2. every rank's declaration is gathered (Allgatherv), and with it the
//      traffic graph: an edge for every declared (source, destination) pair
//      that is not a self-loop, both directions adding up;
//   3. relabel_graph_comm() places the graph's vertices (lib/shape/shape.h);
//   4. rank 0 of `old` writes the report, if RANKSHAPE_REPORT asks for one;
//   5. the process that gets new rank k takes the role of vertex k: it makes
//      the real topology (PMPI_..., reorder = 0) on the relabelled
//      communicator with the declaration old rank k made, so its neighbour
//      queries (MPI_Dist_graph_neighbors, MPI_Graph_neighbors) and
//      neighbour collectives give vertex k's neighbours, in the order and
//      with the weights the program declared, whichever process now holds
//      it. MPI_Graph_create's arguments are the whole graph on every rank
//      (checked to be the same).
// Example: 4 ranks on nodes {0, 2} and {1, 3}; vertices 0-1 and 2-3 talk
// heavily. The drop-in gives new ranks 0, 1 to world ranks 0, 2 (one node)
// and 2, 3 to world ranks 1, 3; MPI_Dist_graph_neighbors on new rank 1
// (world rank 2) returns vertex 1's neighbours as world rank 1 declared
// them.
//
// Passed through untouched to PMPI_*: reorder == 0, MPI_COMM_NULL, an
// inter-communicator, MPI_Graph_create whose nnodes is not the size of
// `old`, and RANKSHAPE_GRAPH=off.
//
// Environment (read on every rank; an empty value counts as unset; the
// ranks check that they agree on every value but RANKSHAPE_GRAPH, read
// before any communication). Besides those of every topology drop-in
// (lib/dropin/settings.h: RANKSHAPE_COSTS, RANKSHAPE_SOURCE,
// RANKSHAPE_ALGORITHM, RANKSHAPE_SEED, RANKSHAPE_TIME_LIMIT,
// RANKSHAPE_REPORT):
//   RANKSHAPE_GRAPH=on|off            off: always pass through (default on)
//   RANKSHAPE_GRAPH_OBJECTIVE=NAME    cost (default) | total
//                                     (lib/model/objective.h)
//
// Errors: a bad value, a bad declaration (a degree below 0, a rank outside
// `old`), a bad cost file or a failed MPI call prints "rankshape
// MPI_Dist_graph_create...: ..." on stderr and then behaves as MPI does:
// the error handler of `old` is called with the code (MPI_ERR_ARG for bad
// values, declarations and files, the MPI code for MPI failures,
// MPI_ERR_OTHER otherwise) on every rank.
#include <mpi.h>

#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/dropin/settings.h"
#include "lib/model/objective.h"
#include "lib/model/traffic_graph.h"
#include "lib/mpi/communicator.h"
#include "lib/mpi/error.h"
#include "lib/mpi/fortran.h"
#include "lib/shape/shape.h"

namespace rankshape {
namespace {

using dropin::env;
using dropin::quoted;

// Throws std::invalid_argument naming the variable and the value.
dropin::Settings read_settings() {
  const std::string graph = env("RANKSHAPE_GRAPH");
  if (!graph.empty() && graph != "on") {
    throw std::invalid_argument(quoted("RANKSHAPE_GRAPH", graph) + ": expected on or off");
  }
  dropin::Settings s = dropin::read_common_settings();
  const std::string objective = env("RANKSHAPE_GRAPH_OBJECTIVE");
  try {
    s.options.objective = ObjectiveSpec::parse(objective, Pattern::parse("graph"));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(quoted("RANKSHAPE_GRAPH_OBJECTIVE", objective) + ": " + e.what());
  }
  return s;
}

// True if a call with this communicator and reorder flag is relabelled.
bool wants_relabelling(MPI_Comm old, int reorder) {
  if (reorder == 0 || old == MPI_COMM_NULL || env("RANKSHAPE_GRAPH") == "off") return false;
  int inter = 0;
  return PMPI_Comm_test_inter(old, &inter) == MPI_SUCCESS && !inter;
}

// One rank's declaration, as ints: what the rank passed, so that another
// process can make the same call for the vertex it takes over.
using Declaration = std::vector<int>;

// Every rank's declaration, in rank order.
std::vector<Declaration> gather(const mpi::Communicator& comm, const Declaration& mine) {
  const int p = comm.size();
  const int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(p)), displs(static_cast<std::size_t>(p));
  mpi::check(PMPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm.get()),
             "MPI_Allgather");
  long long total = 0;
  for (int r = 0; r < p; ++r) {
    displs[r] = static_cast<int>(total);
    total += counts[r];
    if (total > (1LL << 30)) throw std::runtime_error("over 2^30 declared values in all");
  }
  std::vector<int> all(static_cast<std::size_t>(total));
  mpi::check(PMPI_Allgatherv(mine.data(), count, MPI_INT, all.data(), counts.data(), displs.data(),
                             MPI_INT, comm.get()),
             "MPI_Allgatherv");
  std::vector<Declaration> out(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r)
    out[r].assign(all.begin() + displs[r], all.begin() + displs[r] + counts[r]);
  return out;
}

// A graph constructor's part: how to pack this rank's declaration, read
// the edges from any rank's, and make the real topology for a vertex.
class Constructor {
 public:
  virtual ~Constructor() = default;
  virtual const char* prefix() const = 0;
  virtual const char* name() const = 0;
  // This rank's declaration; throws std::invalid_argument for a bad one.
  virtual Declaration pack(int p) const = 0;
  // Adds the declaration's edges (from, to, weight), self-loops left out.
  virtual void edges(int rank, const Declaration& d, std::vector<WeightedEdge>& out) const = 0;
  // PMPI call on the relabelled communicator with rank k's declaration.
  virtual int create(MPI_Comm shaped, const Declaration& d, MPI_Comm* out) const = 0;
};

// Reads ints from a declaration in order.
class Reader {
 public:
  explicit Reader(const Declaration& d) : d_(d) {}
  int next() { return d_.at(at_++); }
  const int* take(int n) {
    const int* p = d_.data() + at_;
    at_ += static_cast<std::size_t>(n);
    if (at_ > d_.size()) throw std::logic_error("a declaration ends early");
    return n > 0 ? p : nullptr;
  }

 private:
  const Declaration& d_;
  std::size_t at_ = 0;
};

void check_ranks(const char* what, int n, const int* ranks, int p) {
  if (n < 0) throw std::invalid_argument(std::string(what) + ": a count below 0");
  for (int i = 0; i < n; ++i) {
    if (ranks[i] < 0 || ranks[i] >= p) {
      throw std::invalid_argument(std::string(what) + " names rank " + std::to_string(ranks[i]) +
                                  ", outside the communicator of " + std::to_string(p));
    }
  }
}

void check_weights(const char* what, int n, const int* weights) {
  if (weights == MPI_UNWEIGHTED || weights == MPI_WEIGHTS_EMPTY) return;
  for (int i = 0; i < n; ++i) {
    if (weights[i] < 0) throw std::invalid_argument(std::string(what) + ": a weight below 0");
  }
}

// A weights argument as MPI wants it back: MPI_UNWEIGHTED, or the list
// (MPI_WEIGHTS_EMPTY when empty).
const int* weights_arg(bool weighted, const int* list) {
  if (!weighted) return MPI_UNWEIGHTED;
  return list != nullptr ? list : MPI_WEIGHTS_EMPTY;
}

// [indegree, outdegree, weighted, sources, sourceweights?, destinations,
//  destweights?]: the traffic is the out-edges (each in-edge is some
// rank's out-edge).
class Adjacent final : public Constructor {
 public:
  Adjacent(int indegree, const int* sources, const int* sourceweights, int outdegree,
           const int* destinations, const int* destweights, MPI_Info info)
      : indegree_(indegree),
        sources_(sources),
        sourceweights_(sourceweights),
        outdegree_(outdegree),
        destinations_(destinations),
        destweights_(destweights),
        info_(info) {}
  const char* prefix() const override { return "rankshape MPI_Dist_graph_create_adjacent: "; }
  const char* name() const override { return "rankshape MPI_Dist_graph_create_adjacent"; }
  Declaration pack(int p) const override {
    check_ranks("sources", indegree_, sources_, p);
    check_ranks("destinations", outdegree_, destinations_, p);
    check_weights("sourceweights", indegree_, sourceweights_);
    check_weights("destweights", outdegree_, destweights_);
    const bool weighted = sourceweights_ != MPI_UNWEIGHTED;
    Declaration d = {indegree_, outdegree_, weighted ? 1 : 0};
    d.insert(d.end(), sources_, sources_ + indegree_);
    if (weighted) d.insert(d.end(), sourceweights_, sourceweights_ + indegree_);
    d.insert(d.end(), destinations_, destinations_ + outdegree_);
    if (weighted) d.insert(d.end(), destweights_, destweights_ + outdegree_);
    return d;
  }
  void edges(int rank, const Declaration& d, std::vector<WeightedEdge>& out) const override {
    const View v = View::read(d);
    for (int i = 0; i < v.outdegree; ++i) {
      if (v.destinations[i] != rank)
        out.push_back({rank, v.destinations[i], v.weighted ? 1.0 * v.dest_weights[i] : 1.0});
    }
  }
  int create(MPI_Comm shaped, const Declaration& d, MPI_Comm* out) const override {
    const View v = View::read(d);
    const int none = 0;
    return PMPI_Dist_graph_create_adjacent(shaped, v.indegree, v.sources ? v.sources : &none,
                                           weights_arg(v.weighted, v.source_weights), v.outdegree,
                                           v.destinations ? v.destinations : &none,
                                           weights_arg(v.weighted, v.dest_weights), info_, 0, out);
  }

 private:
  // A packed declaration's parts (null for an empty or absent list).
  struct View {
    int indegree = 0, outdegree = 0;
    bool weighted = false;
    const int* sources = nullptr;
    const int* source_weights = nullptr;
    const int* destinations = nullptr;
    const int* dest_weights = nullptr;
    static View read(const Declaration& d) {
      Reader r(d);
      View v;
      v.indegree = r.next();
      v.outdegree = r.next();
      v.weighted = r.next() != 0;
      v.sources = r.take(v.indegree);
      if (v.weighted) v.source_weights = r.take(v.indegree);
      v.destinations = r.take(v.outdegree);
      if (v.weighted) v.dest_weights = r.take(v.outdegree);
      return v;
    }
  };

  int indegree_;
  const int* sources_;
  const int* sourceweights_;
  int outdegree_;
  const int* destinations_;
  const int* destweights_;
  MPI_Info info_;
};

// [n, weighted, sources, degrees, destinations, weights?]: any rank may
// declare any edge.
class General final : public Constructor {
 public:
  General(int n, const int* sources, const int* degrees, const int* destinations,
          const int* weights, MPI_Info info)
      : n_(n),
        sources_(sources),
        degrees_(degrees),
        destinations_(destinations),
        weights_(weights),
        info_(info) {}
  const char* prefix() const override { return "rankshape MPI_Dist_graph_create: "; }
  const char* name() const override { return "rankshape MPI_Dist_graph_create"; }
  Declaration pack(int p) const override {
    check_ranks("sources", n_, sources_, p);
    long long total = 0;
    for (int i = 0; i < n_; ++i) {
      if (degrees_[i] < 0) throw std::invalid_argument("degrees: a degree below 0");
      total += degrees_[i];
    }
    if (total > (1 << 30)) throw std::invalid_argument("over 2^30 destinations");
    const int count = static_cast<int>(total);
    check_ranks("destinations", count, destinations_, p);
    check_weights("weights", count, weights_);
    const bool weighted = weights_ != MPI_UNWEIGHTED;
    Declaration d = {n_, weighted ? 1 : 0};
    d.insert(d.end(), sources_, sources_ + n_);
    d.insert(d.end(), degrees_, degrees_ + n_);
    d.insert(d.end(), destinations_, destinations_ + count);
    if (weighted) d.insert(d.end(), weights_, weights_ + count);
    return d;
  }
  void edges(int, const Declaration& d, std::vector<WeightedEdge>& out) const override {
    const View v = View::read(d);
    for (int i = 0, e = 0; i < v.n; ++i) {
      for (int j = 0; j < v.degrees[i]; ++j, ++e) {
        if (v.destinations[e] != v.sources[i]) {
          out.push_back({v.sources[i], v.destinations[e], v.weighted ? 1.0 * v.weights[e] : 1.0});
        }
      }
    }
  }
  int create(MPI_Comm shaped, const Declaration& d, MPI_Comm* out) const override {
    const View v = View::read(d);
    const int none = 0;
    return PMPI_Dist_graph_create(
        shaped, v.n, v.sources ? v.sources : &none, v.degrees ? v.degrees : &none,
        v.destinations ? v.destinations : &none, weights_arg(v.weighted, v.weights), info_, 0, out);
  }

 private:
  // A packed declaration's parts (null for an empty or absent list).
  struct View {
    int n = 0;
    bool weighted = false;
    const int* sources = nullptr;
    const int* degrees = nullptr;
    const int* destinations = nullptr;
    const int* weights = nullptr;
    static View read(const Declaration& d) {
      Reader r(d);
      View v;
      v.n = r.next();
      v.weighted = r.next() != 0;
      v.sources = r.take(v.n);
      v.degrees = r.take(v.n);
      int total = 0;
      for (int i = 0; i < v.n; ++i) total += v.degrees[i];
      v.destinations = r.take(total);
      if (v.weighted) v.weights = r.take(total);
      return v;
    }
  };

  int n_;
  const int* sources_;
  const int* degrees_;
  const int* destinations_;
  const int* weights_;
  MPI_Info info_;
};

// [nnodes, index, edges]: the whole graph on every rank, node i's
// neighbours edges[index[i-1] .. index[i]).
class Graph final : public Constructor {
 public:
  Graph(int nnodes, const int* index, const int* edges)
      : nnodes_(nnodes), index_(index), edges_(edges) {}
  const char* prefix() const override { return "rankshape MPI_Graph_create: "; }
  const char* name() const override { return "rankshape MPI_Graph_create"; }
  Declaration pack(int p) const override {
    int previous = 0;
    for (int i = 0; i < nnodes_; ++i) {
      if (index_[i] < previous)
        throw std::invalid_argument("index decreases at node " + std::to_string(i));
      previous = index_[i];
    }
    check_ranks("edges", previous, edges_, p);
    Declaration d = {nnodes_};
    d.insert(d.end(), index_, index_ + nnodes_);
    d.insert(d.end(), edges_, edges_ + previous);
    return d;
  }
  void edges(int, const Declaration& d, std::vector<WeightedEdge>& out) const override {
    const View v = View::read(d);
    for (int i = 0, e = 0; i < v.n; ++i) {
      for (; e < v.index[i]; ++e) {
        if (v.list[e] != i) out.push_back({i, v.list[e], 1.0});
      }
    }
  }
  int create(MPI_Comm shaped, const Declaration& d, MPI_Comm* out) const override {
    const View v = View::read(d);
    const int none = 0;
    return PMPI_Graph_create(shaped, v.n, v.index, v.list ? v.list : &none, 0, out);
  }

 private:
  // A packed declaration's parts (null for an empty list).
  struct View {
    int n = 0;
    const int* index = nullptr;
    const int* list = nullptr;
    static View read(const Declaration& d) {
      Reader r(d);
      View v;
      v.n = r.next();
      v.index = r.take(v.n);
      v.list = r.take(v.n > 0 ? v.index[v.n - 1] : 0);
      return v;
    }
  };

  int nnodes_;
  const int* index_;
  const int* edges_;
};

// The drop-in for a call that relabels: steps 1 to 5 above. Returns an MPI
// code or throws (dropin::guarded turns that into MPI's way of failing).
// whole_graph: every rank declared the whole graph (MPI_Graph_create), so
// rank 0's declaration alone gives the edges.
int shaped_create(MPI_Comm old, const Constructor& c, bool whole_graph, MPI_Comm* out) {
  const mpi::Communicator borrowed(old, mpi::Ownership::kBorrow);
  // Our own copy: codes instead of aborts, and no mixing with the program.
  const mpi::Communicator comm = borrowed.dup();
  const int p = comm.size();
  dropin::Settings settings;
  Declaration mine;
  std::string error;
  try {
    settings = read_settings();
    mine = c.pack(p);
  } catch (const std::invalid_argument& e) {
    error = e.what();
  }
  dropin::agree(comm, c.prefix(), error, MPI_ERR_ARG);
  const std::vector<Declaration> all = gather(comm, mine);
  std::vector<WeightedEdge> edges;
  if (whole_graph) {
    c.edges(0, all[0], edges);
  } else {
    for (int r = 0; r < p; ++r) c.edges(r, all[static_cast<std::size_t>(r)], edges);
  }
  std::optional<ShapedComm> shaped;
  try {
    if (whole_graph) {
      for (int r = 1; r < p; ++r) {
        if (all[static_cast<std::size_t>(r)] != all[0]) {
          throw std::invalid_argument("rank " + std::to_string(r) +
                                      " declares another graph than rank 0");
        }
      }
    }
    auto graph = std::make_shared<const TrafficGraph>(p, std::move(edges));
    shaped.emplace(relabel_graph_comm(comm.get(), std::move(graph), settings.options));
  } catch (const std::invalid_argument& e) {
    // The same on every rank: all hold the same declarations.
    dropin::fail_everywhere(comm, c.prefix(), e.what(), MPI_ERR_ARG);
  }
  nlohmann::json report = dropin::report_json(c.name(), settings, *shaped);
  report["edges"] = shaped->report().after.graph ? shaped->report().after.graph->edges : 0;
  dropin::write_report(comm, c.prefix(), settings, report);

  // Vertex k's declaration, made by the process that now holds rank k.
  const int k = shaped->comm().rank();
  const int code = c.create(shaped->comm().get(), all[static_cast<std::size_t>(k)], out);
  if (code != MPI_SUCCESS) return dropin::fail(old, code);
  dropin::inherit_errhandler(old, out);
  return MPI_SUCCESS;
}

int dist_graph_create_adjacent(MPI_Comm old, int indegree, const int sources[],
                               const int sourceweights[], int outdegree, const int destinations[],
                               const int destweights[], MPI_Info info, int reorder, MPI_Comm* out) {
  const Adjacent c(indegree, sources, sourceweights, outdegree, destinations, destweights, info);
  return dropin::guarded(old, c.prefix(), [&] {
    if (!wants_relabelling(old, reorder)) {
      return PMPI_Dist_graph_create_adjacent(old, indegree, sources, sourceweights, outdegree,
                                             destinations, destweights, info, reorder, out);
    }
    return shaped_create(old, c, false, out);
  });
}

int dist_graph_create(MPI_Comm old, int n, const int sources[], const int degrees[],
                      const int destinations[], const int weights[], MPI_Info info, int reorder,
                      MPI_Comm* out) {
  const General c(n, sources, degrees, destinations, weights, info);
  return dropin::guarded(old, c.prefix(), [&] {
    if (!wants_relabelling(old, reorder)) {
      return PMPI_Dist_graph_create(old, n, sources, degrees, destinations, weights, info, reorder,
                                    out);
    }
    return shaped_create(old, c, false, out);
  });
}

int graph_create(MPI_Comm old, int nnodes, const int index[], const int edges[], int reorder,
                 MPI_Comm* out) {
  const Graph c(nnodes, index, edges);
  return dropin::guarded(old, c.prefix(), [&] {
    int size = 0;
    if (!wants_relabelling(old, reorder) || nnodes < 1 ||
        PMPI_Comm_size(old, &size) != MPI_SUCCESS || nnodes != size) {
      return PMPI_Graph_create(old, nnodes, index, edges, reorder, out);
    }
    return shaped_create(old, c, true, out);
  });
}

}  // namespace
}  // namespace rankshape

extern "C" int MPI_Dist_graph_create_adjacent(MPI_Comm old, int indegree, const int sources[],
                                              const int sourceweights[], int outdegree,
                                              const int destinations[], const int destweights[],
                                              MPI_Info info, int reorder, MPI_Comm* out) {
  return rankshape::dist_graph_create_adjacent(old, indegree, sources, sourceweights, outdegree,
                                               destinations, destweights, info, reorder, out);
}

extern "C" int MPI_Dist_graph_create(MPI_Comm old, int n, const int sources[], const int degrees[],
                                     const int destinations[], const int weights[], MPI_Info info,
                                     int reorder, MPI_Comm* out) {
  return rankshape::dist_graph_create(old, n, sources, degrees, destinations, weights, info,
                                      reorder, out);
}

extern "C" int MPI_Graph_create(MPI_Comm old, int nnodes, const int index[], const int edges[],
                                int reorder, MPI_Comm* out) {
  return rankshape::graph_create(old, nnodes, index, edges, reorder, out);
}

#ifndef RANKSHAPE_SMPI
// The Fortran names (use mpi, mpif.h, use mpi_f08): Open MPI's own
// Fortran symbols call the PMPI_ functions, so a C-only drop-in never sees
// them. Handles, logicals and the weight sentinels are converted here and
// the C implementation called directly (forwarding to pmpi_*_ would be
// caught twice under MPICH, whose Fortran layer calls the C functions).
// ierror is optional (NULL) in the mpi_f08 binding.
namespace rankshape {
namespace {

void finish(int code, MPI_Comm c, MPI_Fint* out, MPI_Fint* ierror) {
  if (code == MPI_SUCCESS) *out = PMPI_Comm_c2f(c);
  if (ierror != nullptr) *ierror = code;
}

}  // namespace
}  // namespace rankshape

#define RANKSHAPE_FORTRAN_DIST_GRAPH_CREATE_ADJACENT(name)                                      \
  extern "C" void name(const MPI_Fint* old, const MPI_Fint* indegree, const MPI_Fint* sources,  \
                       const MPI_Fint* sourceweights, const MPI_Fint* outdegree,                \
                       const MPI_Fint* destinations, const MPI_Fint* destweights,               \
                       const MPI_Fint* info, const MPI_Fint* reorder, MPI_Fint* out,            \
                       MPI_Fint* ierror) {                                                      \
    MPI_Comm c = MPI_COMM_NULL;                                                                 \
    const int code = rankshape::dist_graph_create_adjacent(                                     \
        PMPI_Comm_f2c(*old), *indegree, sources, rankshape::mpi::c_weights(sourceweights),      \
        *outdegree, destinations, rankshape::mpi::c_weights(destweights), PMPI_Info_f2c(*info), \
        *reorder != 0, &c);                                                                     \
    rankshape::finish(code, c, out, ierror);                                                    \
  }
RANKSHAPE_FORTRAN_DIST_GRAPH_CREATE_ADJACENT(mpi_dist_graph_create_adjacent_)
RANKSHAPE_FORTRAN_DIST_GRAPH_CREATE_ADJACENT(mpi_dist_graph_create_adjacent__)
RANKSHAPE_FORTRAN_DIST_GRAPH_CREATE_ADJACENT(mpi_dist_graph_create_adjacent)
RANKSHAPE_FORTRAN_DIST_GRAPH_CREATE_ADJACENT(MPI_DIST_GRAPH_CREATE_ADJACENT)
RANKSHAPE_FORTRAN_DIST_GRAPH_CREATE_ADJACENT(mpi_dist_graph_create_adjacent_f08_)
#undef RANKSHAPE_FORTRAN_DIST_GRAPH_CREATE_ADJACENT

#define RANKSHAPE_FORTRAN_DIST_GRAPH_CREATE(name)                                              \
  extern "C" void name(const MPI_Fint* old, const MPI_Fint* n, const MPI_Fint* sources,        \
                       const MPI_Fint* degrees, const MPI_Fint* destinations,                  \
                       const MPI_Fint* weights, const MPI_Fint* info, const MPI_Fint* reorder, \
                       MPI_Fint* out, MPI_Fint* ierror) {                                      \
    MPI_Comm c = MPI_COMM_NULL;                                                                \
    const int code = rankshape::dist_graph_create(                                             \
        PMPI_Comm_f2c(*old), *n, sources, degrees, destinations,                               \
        rankshape::mpi::c_weights(weights), PMPI_Info_f2c(*info), *reorder != 0, &c);          \
    rankshape::finish(code, c, out, ierror);                                                   \
  }
RANKSHAPE_FORTRAN_DIST_GRAPH_CREATE(mpi_dist_graph_create_)
RANKSHAPE_FORTRAN_DIST_GRAPH_CREATE(mpi_dist_graph_create__)
RANKSHAPE_FORTRAN_DIST_GRAPH_CREATE(mpi_dist_graph_create)
RANKSHAPE_FORTRAN_DIST_GRAPH_CREATE(MPI_DIST_GRAPH_CREATE)
RANKSHAPE_FORTRAN_DIST_GRAPH_CREATE(mpi_dist_graph_create_f08_)
#undef RANKSHAPE_FORTRAN_DIST_GRAPH_CREATE

#define RANKSHAPE_FORTRAN_GRAPH_CREATE(name)                                                    \
  extern "C" void name(const MPI_Fint* old, const MPI_Fint* nnodes, const MPI_Fint* index,      \
                       const MPI_Fint* edges, const MPI_Fint* reorder, MPI_Fint* out,           \
                       MPI_Fint* ierror) {                                                      \
    MPI_Comm c = MPI_COMM_NULL;                                                                 \
    const int code =                                                                            \
        rankshape::graph_create(PMPI_Comm_f2c(*old), *nnodes, index, edges, *reorder != 0, &c); \
    rankshape::finish(code, c, out, ierror);                                                    \
  }
RANKSHAPE_FORTRAN_GRAPH_CREATE(mpi_graph_create_)
RANKSHAPE_FORTRAN_GRAPH_CREATE(mpi_graph_create__)
RANKSHAPE_FORTRAN_GRAPH_CREATE(mpi_graph_create)
RANKSHAPE_FORTRAN_GRAPH_CREATE(MPI_GRAPH_CREATE)
RANKSHAPE_FORTRAN_GRAPH_CREATE(mpi_graph_create_f08_)
#undef RANKSHAPE_FORTRAN_GRAPH_CREATE
#endif
