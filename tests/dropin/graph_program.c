/* An unmodified program with a graph topology: plain MPI, nothing of
 * rankshape. Vertex v talks heavily with v^1 (weight 100) and lightly with
 * the ranks before and after it on a ring (weight 1); its neighbour list,
 * in this order, without repeats or itself: v^1, v+1, v-1. MPI_Graph_create
 * has no weights: there v^1 is listed three times (a multigraph), which
 * MPI allows and rankshape counts.
 *   graph_program adjacent|general|graph
 * builds the topology with reorder = 1 by MPI_Dist_graph_create_adjacent
 * (each rank its own lists, weighted), MPI_Dist_graph_create (rank 0
 * declares every edge, weighted) or MPI_Graph_create (every rank the whole
 * graph, unweighted), then checks on every rank that its neighbours are
 * those of the vertex its new rank names (in the declared order where MPI
 * defines one) and that a neighbour alltoall delivers from them. Prints
 * "world W graph G" per rank and "checks ok" when all hold. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int size;

enum { kMost = 5 };    /* neighbour list entries at most */
static int copies = 1; /* of v^1: 3 for MPI_Graph_create */

/* Vertex v's neighbours in declaration order; returns how many. */
static int neighbours(int v, int list[kMost], int weights[kMost]) {
  int candidates[3] = {v ^ 1, (v + 1) % size, (v + size - 1) % size};
  int candidate_weights[3] = {100, 1, 1};
  int n = 0;
  for (int i = 0; i < 3; ++i) {
    int c = candidates[i], seen = c == v || c >= size;
    for (int j = 0; j < n; ++j) seen |= list[j] == c;
    if (seen) continue;
    for (int k = 0; k < (i == 0 ? copies : 1); ++k) {
      list[n] = c;
      weights[n++] = candidate_weights[i];
    }
  }
  return n;
}

static int failures = 0;
static void check(int ok, const char* what, int rank) {
  if (!ok) {
    fprintf(stderr, "graph_program: rank %d: check failed: %s\n", rank, what);
    ++failures;
  }
}

static int contains(const int* list, int n, int x) {
  for (int i = 0; i < n; ++i) {
    if (list[i] == x) return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "adjacent";
  int list[kMost], weights[kMost];
  if (strcmp(mode, "graph") == 0) copies = 3;
  MPI_Comm graph = MPI_COMM_NULL;
  int rc = MPI_SUCCESS;
  if (strcmp(mode, "adjacent") == 0) {
    int n = neighbours(world, list, weights);
    rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, n, list, n ? weights : MPI_WEIGHTS_EMPTY, n,
                                        list, n ? weights : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 1,
                                        &graph);
  } else if (strcmp(mode, "general") == 0) {
    int* sources = malloc(sizeof(int) * size);
    int* degrees = malloc(sizeof(int) * size);
    int* destinations = malloc(sizeof(int) * kMost * size);
    int* all_weights = malloc(sizeof(int) * kMost * size);
    int count = 0, edges = 0;
    if (world == 0) {
      for (int v = 0; v < size; ++v) {
        int d = neighbours(v, destinations + edges, all_weights + edges);
        sources[count] = v;
        degrees[count++] = d;
        edges += d;
      }
    }
    rc = MPI_Dist_graph_create(MPI_COMM_WORLD, count, sources, degrees, destinations,
                               edges ? all_weights : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 1, &graph);
    free(sources), free(degrees), free(destinations), free(all_weights);
  } else if (strcmp(mode, "graph") == 0) {
    int* index = malloc(sizeof(int) * size);
    int* edges = malloc(sizeof(int) * kMost * size);
    int total = 0;
    for (int v = 0; v < size; ++v) {
      total += neighbours(v, edges + total, weights);
      index[v] = total;
    }
    rc = MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 1, &graph);
    free(index), free(edges);
  } else {
    fprintf(stderr, "graph_program: unknown mode '%s'\n", mode);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  check(rc == MPI_SUCCESS && graph != MPI_COMM_NULL, "the topology is made", world);
  int me = -1;
  MPI_Comm_rank(graph, &me);
  printf("world %d graph %d\n", world, me);
  int n = neighbours(me, list, weights);
  int got[kMost], got_weights[kMost], in = -1, out = -1;
  if (strcmp(mode, "graph") == 0) {
    MPI_Graph_neighbors_count(graph, me, &in);
    check(in == n, "MPI_Graph_neighbors_count is the vertex's", me);
    MPI_Graph_neighbors(graph, me, kMost, got);
    for (int i = 0; i < n; ++i) check(got[i] == list[i], "MPI_Graph_neighbors in order", me);
  } else {
    int weighted = 0;
    MPI_Dist_graph_neighbors_count(graph, &in, &out, &weighted);
    check(in == n && out == n, "MPI_Dist_graph_neighbors_count is the vertex's", me);
    int dest[kMost], dest_weights[kMost];
    /* MPICH 4.0 crashes in MPI_Dist_graph_neighbors on a weighted vertex
     * without neighbours (it copies weights from NULL), drop-in or not. */
    if (n > 0) MPI_Dist_graph_neighbors(graph, kMost, got, got_weights, kMost, dest, dest_weights);
    for (int i = 0; i < n; ++i) {
      if (strcmp(mode, "adjacent") == 0) {
        /* The adjacent form keeps the declared order and weights. */
        check(got[i] == list[i] && dest[i] == list[i], "neighbours in the declared order", me);
        check(got_weights[i] == weights[i], "weights as declared", me);
      } else {
        check(contains(list, n, got[i]) && contains(list, n, dest[i]), "the vertex's neighbours",
              me);
      }
    }
  }
  /* Every neighbour sends its rank: what arrives from source i is source i. */
  int sent[kMost] = {me, me, me, me, me}, received[kMost] = {-1, -1, -1, -1, -1};
  MPI_Neighbor_alltoall(sent, 1, MPI_INT, received, 1, MPI_INT, graph);
  for (int i = 0; i < n; ++i) check(received[i] == got[i], "a neighbour alltoall delivers", me);
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (world == 0 && all == 0) printf("checks ok\n");
  MPI_Comm_free(&graph);
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
