/* An ordinary MPI program that knows nothing of rankshape: it checks the
 * nine collectives that the collectives drop-in intercepts (MPI_Bcast,
 * MPI_Reduce, MPI_Allreduce, MPI_Gather, MPI_Scatter, MPI_Allgather,
 * MPI_Reduce_scatter_block, MPI_Alltoall, MPI_Barrier) against results it
 * computes locally, so that a wrong result fails it.
 *
 *   coll_program [--quick] [--trace] [--errors-return] [--no-intercomm]
 *                [--no-mixed-allgather]
 *
 * Every check uses fresh values (small integers, exact as int and double,
 * so sums do not depend on the order of reduction) and buffers prefilled
 * with a sentinel, so that holes of derived types and untouched ranks are
 * checked too. Covered: counts 0, 1, 7 (every root) and 100000 (the first
 * and the last root); MPI_IN_PLACE; MPI_INT, MPI_DOUBLE and a vector type
 * with holes (also against a contiguous MPI_INT message of the same
 * signature); MPI_SUM, MPI_MAX, a commutative user operation on the vector
 * type and a non-commutative one (2x2 matrix product mod 2^32, expected in
 * rank order); the barrier (nobody leaves before a late rank entered). On
 * MPI_COMM_WORLD, then with counts 1 and 7 only on a communicator in
 * reverse rank order and on the halves of even and odd ranks (--quick:
 * counts 1 and 7 everywhere); and the pass-through of an
 * inter-communicator. Left out for MPI libraries that cannot:
 * --no-intercomm (SMPI 3.32 has no MPI_Intercomm_create) and
 * --no-mixed-allgather: no MPI_Allgather whose send and receive types
 * differ (SMPI 3.32's own MPI_Allgather writes out of bounds then).
 *
 * --trace: rank 0 prints each check of its own before running it.
 *
 * The first mismatch prints "coll_program: rank R: MISMATCH ..." and
 * aborts the job. --errors-return sets MPI_ERRORS_RETURN on
 * MPI_COMM_WORLD (and so on the communicators made from it): a collective
 * that returns an error prints "coll_program: rank R: CALL ... returned
 * error class C[ (MPI_ERR_ARG)]: TEXT" and the program exits with 1.
 *
 * At the end rank 0 prints
 *   coll_program: N ranks: C checks ok, hierarchical calls: H
 * where H is what rankshape_coll_dispatched_calls() returns if some
 * library defines it (looked up with dlsym; "none" otherwise). The
 * environment variable RANKSHAPE_EXPECT_DISPATCH makes that a check on
 * every rank: 1 = defined and > 0, 0 = defined and 0, loaded = defined,
 * none = undefined. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LARGE_COUNT 100000

static int world_rank = 0;
static int mixed_allgather = 1; /* --no-mixed-allgather: 0 */
static int trace = 0;           /* --trace: 1 */
static long checks = 0;
static unsigned salt = 0; /* the same sequence on every rank */

static void mismatch(const char* fmt, const char* what, long index, double expected, double got) {
  fprintf(stderr, "coll_program: rank %d: MISMATCH in %s: ", world_rank, what);
  fprintf(stderr, fmt, index, expected, got);
  fprintf(stderr, "\n");
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* A failed call: under MPI_ERRORS_ARE_FATAL MPI has aborted already. With
 * --errors-return every rank is expected to fail alike (a bad setting of
 * an MPI library or tool): each prints the code and leaves. */
static void check_code(int code, const char* what) {
  if (code != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0, error_class = 0;
    MPI_Error_class(code, &error_class);
    MPI_Error_string(code, text, &length);
    fprintf(stderr, "coll_program: rank %d: %s returned error class %d%s: %s\n", world_rank, what,
            error_class, error_class == MPI_ERR_ARG ? " (MPI_ERR_ARG)" : "", text);
    fflush(stderr);
#ifdef SMPI_H
    /* SMPI's ranks are threads of one process, which the first exit() ends:
     * the others print first (they fail alike, so all reach this barrier;
     * PMPI, because the drop-in fails every collective). */
    PMPI_Barrier(MPI_COMM_WORLD);
#endif
    MPI_Finalize();
    exit(1);
  }
}

/* Basic value number j of rank r for the current check: in [-1000, 1000]. */
static int value(int r, long j) {
  uint32_t h = (uint32_t)r * 2654435761u ^ (uint32_t)j * 40503u ^ salt * 2246822519u;
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  h *= 0x27d4eb2fu;
  h ^= h >> 16;
  return (int)(h % 2001u) - 1000;
}

/* Element types. A buffer of n elements has n * slots slots of slot_size
 * bytes; basic value b of element e is slot e * slots + (b ? slots - 1 : 0)
 * and every other slot is a hole that MPI must not touch. */
typedef struct {
  const char* name;
  MPI_Datatype type;
  int basics;
  int slots;
  int is_double;
} Kind;

static Kind kind_int = {"MPI_INT", MPI_INT, 1, 1, 0};
static Kind kind_double = {"MPI_DOUBLE", MPI_DOUBLE, 1, 1, 1};
static Kind kind_vector = {"vector(2,1,3,MPI_INT)", MPI_DATATYPE_NULL, 2, 4, 0};

static const int sentinel = -999999;

static size_t slot_size(const Kind* k) { return k->is_double ? sizeof(double) : sizeof(int); }

static double as_stored(const Kind* k, int v) { return k->is_double ? v + 0.25 : (double)v; }

static void* alloc_elements(const Kind* k, long n) {
  long slots = n * k->slots, s;
  void* buf = malloc((size_t)(slots > 0 ? slots : 1) * slot_size(k));
  if (buf == NULL) {
    fprintf(stderr, "coll_program: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (s = 0; s < slots; ++s) {
    if (k->is_double) {
      ((double*)buf)[s] = sentinel + 0.5;
    } else {
      ((int*)buf)[s] = sentinel;
    }
  }
  return buf;
}

static long slot_of(const Kind* k, long j) {
  return j / k->basics * k->slots + (j % k->basics ? k->slots - 1 : 0);
}

/* Stores basic value j (as_stored(v)). */
static void put(const Kind* k, void* buf, long j, int v) {
  if (k->is_double) {
    ((double*)buf)[slot_of(k, j)] = as_stored(k, v);
  } else {
    ((int*)buf)[slot_of(k, j)] = v;
  }
}

static double slot_value(const Kind* k, const void* buf, long s) {
  return k->is_double ? ((const double*)buf)[s] : (double)((const int*)buf)[s];
}

/* The first n elements of buf must hold expect[] and every hole the
 * sentinel. */
static void compare(const Kind* k, const void* buf, long n, const double* expect,
                    const char* what) {
  long s;
  for (s = 0; s < n * k->slots; ++s) {
    long e = s / k->slots, off = s % k->slots;
    double got = slot_value(k, buf, s);
    if (off == 0 || (k->basics == 2 && off == k->slots - 1)) {
      long j = e * k->basics + (off == 0 ? 0 : 1);
      if (got != expect[j]) mismatch("value %ld: expected %.2f, got %.2f", what, j, expect[j], got);
    } else if (got != (k->is_double ? sentinel + 0.5 : sentinel)) {
      mismatch("hole at slot %ld: expected %.2f (untouched), got %.2f", what, s, (double)sentinel,
               got);
    }
  }
  ++checks;
}

static double* alloc_expect(long basics) {
  double* e = malloc((size_t)(basics > 0 ? basics : 1) * sizeof(double));
  if (e == NULL) {
    fprintf(stderr, "coll_program: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return e;
}

/* A commutative user operation on the vector type: the sum of both ints
 * of each element (predefined operations are only for predefined types in
 * Open MPI). */
static MPI_Op vector_sum = MPI_OP_NULL;

static void add_vectors(void* in, void* inout, int* len, MPI_Datatype* type) {
  const int* a = in;
  int* b = inout;
  int i;
  (void)type;
  for (i = 0; i < *len; ++i, a += 4, b += 4) {
    b[0] += a[0];
    b[3] += a[3];
  }
}

static double combine(MPI_Op op, double a, double b) {
  if (op == MPI_MAX) return a > b ? a : b;
  return a + b; /* MPI_SUM, vector_sum */
}

static const char* op_name(MPI_Op op) {
  return op == MPI_SUM ? "MPI_SUM" : op == MPI_MAX ? "MPI_MAX" : "a commutative user sum";
}

/* The communicator under test. */
typedef struct {
  MPI_Comm comm;
  const char* name;
  int rank;
  int size;
} Comm;

static char what[512];

/* what = "COLL on COMM (P ranks): DETAIL, count N[, root R][, MPI_IN_PLACE]". */
static void describe(const Comm* c, const char* coll, const char* detail, long n, int root,
                     int in_place) {
  int len = snprintf(what, sizeof what, "%s on %s (%d ranks): %s, count %ld", coll, c->name,
                     c->size, detail, n);
  if (root >= 0 && len >= 0 && (size_t)len < sizeof what) {
    len += snprintf(what + len, sizeof what - (size_t)len, ", root %d", root);
  }
  if (in_place && len >= 0 && (size_t)len < sizeof what) {
    snprintf(what + len, sizeof what - (size_t)len, ", MPI_IN_PLACE");
  }
  if (trace && world_rank == 0) {
    fprintf(stderr, "coll_program: %s\n", what);
    fflush(stderr);
  }
}

/* ---- MPI_Bcast ---------------------------------------------------------- */

static void check_bcast(const Comm* c, const Kind* k, long n, int root) {
  long nb = n * k->basics, j;
  void* buf = alloc_elements(k, n);
  double* expect = alloc_expect(nb);
  ++salt;
  for (j = 0; j < nb; ++j) {
    if (c->rank == root) put(k, buf, j, value(root, j));
    expect[j] = as_stored(k, value(root, j));
  }
  describe(c, "MPI_Bcast", k->name, n, root, 0);
  check_code(MPI_Bcast(buf, (int)n, k->type, root, c->comm), what);
  compare(k, buf, n, expect, what);
  free(buf);
  free(expect);
}

/* ---- MPI_Reduce and MPI_Allreduce (predefined operations) --------------- */

static void check_reduce(const Comm* c, const Kind* k, MPI_Op op, long n, int root, int in_place) {
  long nb = n * k->basics, j;
  int q, all = root < 0;
  void* send = alloc_elements(k, n);
  void* recv = alloc_elements(k, n);
  double* mine = alloc_expect(nb);
  double* expect = alloc_expect(nb);
  char detail[128];
  ++salt;
  for (j = 0; j < nb; ++j) {
    put(k, send, j, value(c->rank, j));
    mine[j] = as_stored(k, value(c->rank, j));
    expect[j] = as_stored(k, value(0, j));
    for (q = 1; q < c->size; ++q) expect[j] = combine(op, expect[j], as_stored(k, value(q, j)));
  }
  snprintf(detail, sizeof detail, "%s, %s", k->name, op_name(op));
  describe(c, all ? "MPI_Allreduce" : "MPI_Reduce", detail, n, root, in_place);
  if (in_place && (all || c->rank == root)) {
    for (j = 0; j < nb; ++j) put(k, recv, j, value(c->rank, j));
    check_code(all ? MPI_Allreduce(MPI_IN_PLACE, recv, (int)n, k->type, op, c->comm)
                   : MPI_Reduce(MPI_IN_PLACE, recv, (int)n, k->type, op, root, c->comm),
               what);
  } else {
    check_code(all ? MPI_Allreduce(send, recv, (int)n, k->type, op, c->comm)
                   : MPI_Reduce(send, recv, (int)n, k->type, op, root, c->comm),
               what);
    compare(k, send, n, mine, what); /* the send buffer is left alone */
  }
  if (all || c->rank == root) compare(k, recv, n, expect, what);
  free(send);
  free(recv);
  free(mine);
  free(expect);
}

/* ---- A non-commutative operation: 2x2 matrices mod 2^32 ----------------- */

static MPI_Datatype matrix_type = MPI_DATATYPE_NULL;
static MPI_Op matrix_product = MPI_OP_NULL;

/* inout = in * inout: MPI passes the earlier ranks' operand as in. */
static void multiply(void* in, void* inout, int* len, MPI_Datatype* type) {
  const uint32_t* a = in;
  uint32_t* b = inout;
  int i;
  (void)type;
  for (i = 0; i < *len; ++i, a += 4, b += 4) {
    uint32_t c0 = a[0] * b[0] + a[1] * b[2], c1 = a[0] * b[1] + a[1] * b[3];
    uint32_t c2 = a[2] * b[0] + a[3] * b[2], c3 = a[2] * b[1] + a[3] * b[3];
    b[0] = c0;
    b[1] = c1;
    b[2] = c2;
    b[3] = c3;
  }
}

static void matrix(int r, long e, uint32_t m[4]) {
  int i;
  for (i = 0; i < 4; ++i) m[i] = (uint32_t)value(r, 4 * e + i) * 2654435761u + (uint32_t)i;
}

static uint32_t* alloc_matrices(long n) {
  uint32_t* m = malloc((size_t)(n > 0 ? n : 1) * 4 * sizeof(uint32_t));
  if (m == NULL) {
    fprintf(stderr, "coll_program: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return m;
}

static void compare_matrices(const uint32_t* got, const uint32_t* expect, long n) {
  long i;
  for (i = 0; i < 4 * n; ++i) {
    if (got[i] != expect[i]) {
      mismatch("matrix entry %ld: expected %.0f, got %.0f", what, i, (double)expect[i],
               (double)got[i]);
    }
  }
  ++checks;
}

/* Element e of the product in rank order of the matrices (first + e) of
 * every rank. */
static void expected_product(int size, long first, long n, uint32_t* out) {
  long e;
  int q, one = 1;
  for (e = 0; e < n; ++e) {
    matrix(size - 1, first + e, out + 4 * e);
    for (q = size - 2; q >= 0; --q) {
      uint32_t m[4];
      matrix(q, first + e, m);
      multiply(m, out + 4 * e, &one, NULL);
    }
  }
}

/* root >= 0: MPI_Reduce; root -1: MPI_Allreduce; root -2:
 * MPI_Reduce_scatter_block (n elements per rank). */
static void check_noncommutative(const Comm* c, long n, int root, int in_place) {
  int rsb = root == -2, all = root < 0;
  long total = rsb ? n * c->size : n, e;
  uint32_t* send = alloc_matrices(total);
  uint32_t* recv = alloc_matrices(total);
  uint32_t* expect = alloc_matrices(n);
  const char* name = rsb ? "MPI_Reduce_scatter_block" : all ? "MPI_Allreduce" : "MPI_Reduce";
  int code;
  ++salt;
  for (e = 0; e < total; ++e) matrix(c->rank, e, send + 4 * e);
  expected_product(c->size, rsb ? n * c->rank : 0, n, expect);
  describe(c, name, "2x2 matrix product mod 2^32 (non-commutative)", n, root >= 0 ? root : -1,
           in_place);
  if (in_place && (all || c->rank == root)) {
    memcpy(recv, send, (size_t)total * 4 * sizeof(uint32_t));
    if (rsb) {
      code = MPI_Reduce_scatter_block(MPI_IN_PLACE, recv, (int)n, matrix_type, matrix_product,
                                      c->comm);
    } else if (all) {
      code = MPI_Allreduce(MPI_IN_PLACE, recv, (int)n, matrix_type, matrix_product, c->comm);
    } else {
      code = MPI_Reduce(MPI_IN_PLACE, recv, (int)n, matrix_type, matrix_product, root, c->comm);
    }
  } else if (rsb) {
    code = MPI_Reduce_scatter_block(send, recv, (int)n, matrix_type, matrix_product, c->comm);
  } else if (all) {
    code = MPI_Allreduce(send, recv, (int)n, matrix_type, matrix_product, c->comm);
  } else {
    code = MPI_Reduce(send, recv, (int)n, matrix_type, matrix_product, root, c->comm);
  }
  check_code(code, what);
  if (all || c->rank == root) compare_matrices(recv, expect, n);
  free(send);
  free(recv);
  free(expect);
}

/* ---- MPI_Reduce_scatter_block (predefined operations) ------------------- */

static void check_reduce_scatter_block(const Comm* c, const Kind* k, MPI_Op op, long n,
                                       int in_place) {
  long nb = n * k->basics, j;
  int q;
  void* send = alloc_elements(k, n * c->size);
  void* recv = alloc_elements(k, in_place ? n * c->size : n);
  double* expect = alloc_expect(nb);
  char detail[128];
  ++salt;
  for (j = 0; j < nb * c->size; ++j) put(k, in_place ? recv : send, j, value(c->rank, j));
  for (j = 0; j < nb; ++j) {
    long g = c->rank * nb + j;
    expect[j] = as_stored(k, value(0, g));
    for (q = 1; q < c->size; ++q) expect[j] = combine(op, expect[j], as_stored(k, value(q, g)));
  }
  snprintf(detail, sizeof detail, "%s, %s", k->name, op_name(op));
  describe(c, "MPI_Reduce_scatter_block", detail, n, -1, in_place);
  check_code(
      MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : send, recv, (int)n, k->type, op, c->comm),
      what);
  compare(k, recv, n, expect, what);
  free(send);
  free(recv);
  free(expect);
}

/* ---- Data movement: gather, scatter, allgather, alltoall ---------------- */

/* The send side is sn elements of sk per block, the receive side rn of rk;
 * sn * sk->basics == rn * rk->basics. */
typedef struct {
  const Kind* sk;
  long sn;
  const Kind* rk;
  long rn;
} Shape;

static void shape_detail(const Shape* s, char* out, size_t size) {
  if (s->sk == s->rk) {
    snprintf(out, size, "%s", s->sk->name);
  } else {
    snprintf(out, size, "send %ld x %s, receive %ld x %s", s->sn, s->sk->name, s->rn, s->rk->name);
  }
}

/* root >= 0: MPI_Gather; root -1: MPI_Allgather. */
static void check_gather(const Comm* c, const Shape* s, int root, int in_place) {
  long b = s->rn * s->rk->basics, j;
  int q, all = root < 0, receives = all || c->rank == root;
  void* send = alloc_elements(s->sk, s->sn);
  void* recv = alloc_elements(s->rk, receives ? s->rn * c->size : 0);
  double* expect = alloc_expect(b * c->size);
  char detail[160];
  ++salt;
  for (j = 0; j < b; ++j) put(s->sk, send, j, value(c->rank, j));
  for (q = 0; q < c->size; ++q) {
    for (j = 0; j < b; ++j) expect[q * b + j] = as_stored(s->rk, value(q, j));
  }
  shape_detail(s, detail, sizeof detail);
  describe(c, all ? "MPI_Allgather" : "MPI_Gather", detail, s->rn, root, in_place);
  if (in_place && receives) {
    for (j = 0; j < b; ++j) put(s->rk, recv, c->rank * b + j, value(c->rank, j));
    check_code(all ? MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, (int)s->rn,
                                   s->rk->type, c->comm)
                   : MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, (int)s->rn, s->rk->type,
                                root, c->comm),
               what);
  } else {
    check_code(
        all ? MPI_Allgather(send, (int)s->sn, s->sk->type, recv, (int)s->rn, s->rk->type, c->comm)
            : MPI_Gather(send, (int)s->sn, s->sk->type, recv, (int)s->rn, s->rk->type, root,
                         c->comm),
        what);
  }
  if (receives) compare(s->rk, recv, s->rn * c->size, expect, what);
  free(send);
  free(recv);
  free(expect);
}

static void check_scatter(const Comm* c, const Shape* s, int root, int in_place) {
  long b = s->sn * s->sk->basics, j;
  int sends = c->rank == root;
  void* send = alloc_elements(s->sk, sends ? s->sn * c->size : 0);
  void* recv = alloc_elements(s->rk, s->rn);
  double* expect = alloc_expect(b);
  double* kept = alloc_expect(b * c->size);
  char detail[160];
  ++salt;
  for (j = 0; j < b * c->size; ++j) {
    if (sends) put(s->sk, send, j, value(root, j));
    kept[j] = as_stored(s->sk, value(root, j));
  }
  for (j = 0; j < b; ++j) expect[j] = as_stored(s->rk, value(root, c->rank * b + j));
  shape_detail(s, detail, sizeof detail);
  describe(c, "MPI_Scatter", detail, s->rn, root, in_place);
  if (in_place && sends) {
    check_code(MPI_Scatter(send, (int)s->sn, s->sk->type, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root,
                           c->comm),
               what);
    compare(s->sk, send, s->sn * c->size, kept, what); /* the root's block stays */
  } else {
    check_code(
        MPI_Scatter(send, (int)s->sn, s->sk->type, recv, (int)s->rn, s->rk->type, root, c->comm),
        what);
    compare(s->rk, recv, s->rn, expect, what);
  }
  free(send);
  free(recv);
  free(expect);
  free(kept);
}

static void check_alltoall(const Comm* c, const Shape* s, int in_place) {
  long b = s->rn * s->rk->basics, j;
  int q;
  void* send = alloc_elements(s->sk, s->sn * c->size);
  void* recv = alloc_elements(s->rk, s->rn * c->size);
  double* expect = alloc_expect(b * c->size);
  char detail[160];
  ++salt;
  /* Rank q's block for rank r holds value(q, r * b + j). */
  for (j = 0; j < b * c->size; ++j) {
    if (in_place) {
      put(s->rk, recv, j, value(c->rank, j));
    } else {
      put(s->sk, send, j, value(c->rank, j));
    }
  }
  for (q = 0; q < c->size; ++q) {
    for (j = 0; j < b; ++j) expect[q * b + j] = as_stored(s->rk, value(q, c->rank * b + j));
  }
  shape_detail(s, detail, sizeof detail);
  describe(c, "MPI_Alltoall", detail, s->rn, -1, in_place);
  if (in_place) {
    check_code(
        MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, (int)s->rn, s->rk->type, c->comm),
        what);
  } else {
    check_code(MPI_Alltoall(send, (int)s->sn, s->sk->type, recv, (int)s->rn, s->rk->type, c->comm),
               what);
  }
  compare(s->rk, recv, s->rn * c->size, expect, what);
  free(send);
  free(recv);
  free(expect);
}

/* ---- MPI_Barrier ---------------------------------------------------------- */

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Each rank in turn enters late (after 10 ms); nobody may leave the
 * barrier before it entered (one machine, one clock). */
static void check_barrier(const Comm* c) {
  int late;
  for (late = 0; late < c->size; ++late) {
    long long entered = 0, left;
    if (c->rank == late) {
      struct timespec pause = {0, 10000000L};
      nanosleep(&pause, NULL);
      entered = now_ns();
    }
    describe(c, "MPI_Barrier", "late rank", 0, late, 0);
    check_code(MPI_Barrier(c->comm), what);
    left = now_ns();
    check_code(MPI_Bcast(&entered, 1, MPI_LONG_LONG, late, c->comm), "MPI_Bcast after barrier");
    if (left < entered) {
      fprintf(stderr,
              "coll_program: rank %d: MISMATCH in %s: left %lld ns before rank %d entered\n",
              world_rank, what, entered - left, late);
      fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    ++checks;
  }
}

/* ---- Everything on one communicator --------------------------------------- */

/* Counts 0, 1 and 7 (first: 0 or 1): every collective, every root, every
 * variant. */
static void check_small(const Comm* c, int first) {
  static const long counts[] = {0, 1, 7};
  const Kind* kinds[] = {&kind_int, &kind_double, &kind_vector};
  int i, t, root;
  for (i = first; i < 3; ++i) {
    const long n = counts[i];
    const Shape same[] = {{&kind_int, n, &kind_int, n},
                          {&kind_double, n, &kind_double, n},
                          {&kind_vector, n, &kind_vector, n}};
    /* The same type signature: 2n ints, contiguous one way, strided the
     * other. */
    const Shape mixed[] = {{&kind_int, 2 * n, &kind_vector, n},
                           {&kind_vector, n, &kind_int, 2 * n}};
    for (root = 0; root < c->size; ++root) {
      for (t = 0; t < 3; ++t) check_bcast(c, kinds[t], n, root);
      check_reduce(c, &kind_int, MPI_SUM, n, root, 0);
      check_reduce(c, &kind_double, MPI_MAX, n, root, 0);
      check_reduce(c, &kind_vector, vector_sum, n, root, 0);
      check_reduce(c, &kind_double, MPI_SUM, n, root, 1);
      check_noncommutative(c, n, root, 0);
      check_noncommutative(c, n, root, 1);
      for (t = 0; t < 3; ++t) check_gather(c, &same[t], root, 0);
      check_gather(c, &same[0], root, 1);
      check_gather(c, &mixed[root % 2], root, 0);
      for (t = 0; t < 3; ++t) check_scatter(c, &same[t], root, 0);
      check_scatter(c, &same[2], root, 1);
      check_scatter(c, &mixed[root % 2], root, 0);
    }
    check_reduce(c, &kind_int, MPI_SUM, n, -1, 0);
    check_reduce(c, &kind_int, MPI_MAX, n, -1, 1);
    check_reduce(c, &kind_double, MPI_SUM, n, -1, 0);
    check_reduce(c, &kind_vector, vector_sum, n, -1, 0);
    check_reduce(c, &kind_vector, vector_sum, n, -1, 1);
    check_noncommutative(c, n, -1, 0);
    check_noncommutative(c, n, -1, 1);
    check_reduce_scatter_block(c, &kind_int, MPI_SUM, n, 0);
    check_reduce_scatter_block(c, &kind_double, MPI_MAX, n, 1);
    check_reduce_scatter_block(c, &kind_vector, vector_sum, n, 0);
    check_noncommutative(c, n, -2, 0);
    check_noncommutative(c, n, -2, 1);
    for (t = 0; t < 3; ++t) check_gather(c, &same[t], -1, 0);
    check_gather(c, &same[1], -1, 1);
    if (mixed_allgather) {
      check_gather(c, &mixed[0], -1, 0);
      check_gather(c, &mixed[1], -1, 0);
    }
    check_alltoall(c, &mixed[0], 0);
    check_alltoall(c, &mixed[1], 0);
    for (t = 0; t < 3; ++t) check_alltoall(c, &same[t], 0);
    check_alltoall(c, &same[0], 1);
    check_alltoall(c, &same[2], 1);
  }
}

/* LARGE_COUNT elements (several MB per rank at 8 ranks): each collective
 * with a few types and variants, at the first and the last root (large
 * messages take other algorithms and pipelines; every root at every
 * variant would take minutes on two oversubscribed cores). */
static void check_large(const Comm* c) {
  const long n = LARGE_COUNT;
  const Shape ints = {&kind_int, n, &kind_int, n};
  const Shape doubles = {&kind_double, n, &kind_double, n};
  const Shape vectors = {&kind_vector, n, &kind_vector, n};
  const Shape to_vectors = {&kind_int, 2 * n, &kind_vector, n};
  const Shape from_vectors = {&kind_vector, n, &kind_int, 2 * n};
  const int last = c->size - 1;
  check_bcast(c, &kind_double, n, 0);
  check_bcast(c, &kind_vector, n, last);
  check_reduce(c, &kind_int, MPI_SUM, n, last, 0);
  check_reduce(c, &kind_double, MPI_MAX, n, 0, 1);
  check_noncommutative(c, n, last, 0);
  check_reduce(c, &kind_double, MPI_SUM, n, -1, 0);
  check_reduce(c, &kind_vector, vector_sum, n, -1, 1);
  check_noncommutative(c, n, -1, 0);
  check_gather(c, &vectors, 0, 0);
  check_gather(c, &to_vectors, last, 1);
  check_scatter(c, &from_vectors, 0, 0);
  check_scatter(c, &ints, last, 1);
  check_reduce_scatter_block(c, &kind_int, MPI_SUM, n, 0);
  check_noncommutative(c, n, -2, 1);
  check_gather(c, &doubles, -1, 0);
  if (mixed_allgather) check_gather(c, &from_vectors, -1, 0);
  check_alltoall(c, &vectors, 0);
  check_alltoall(c, &ints, 1);
}

/* quick: counts 1 and 7 only. */
static void check_all(const Comm* c, int quick) {
  check_small(c, quick ? 1 : 0);
  if (!quick) check_large(c);
  check_barrier(c);
}

/* ---- Inter-communicators: passed through -------------------------------- */

/* Even and odd world ranks, as the two groups of an inter-communicator:
 * a broadcast from each group's rank 0 to the other, an allreduce (each
 * side gets the other side's sum) and a barrier. */
static void check_intercomm(int size) {
  MPI_Comm half, inter;
  int color = world_rank % 2, rank, remote, root, sum, expect, q;
  long long token;
  MPI_Comm_split(MPI_COMM_WORLD, color, world_rank, &half);
  MPI_Comm_rank(half, &rank);
  /* Local leader: rank 0 of each half; remote leader: world rank 1 or 0. */
  check_code(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 77, &inter),
             "MPI_Intercomm_create");
  for (remote = 0; remote < 2; ++remote) {
    /* Group `remote` sends from its rank 0; the other group receives. */
    if (color == remote) {
      token = rank == 0 ? 4242 + remote : -1;
      root = rank == 0 ? MPI_ROOT : MPI_PROC_NULL;
    } else {
      token = -1;
      root = 0;
    }
    snprintf(what, sizeof what, "MPI_Bcast on an inter-communicator (from group %d)", remote);
    check_code(MPI_Bcast(&token, 1, MPI_LONG_LONG, root, inter), what);
    if (color != remote && token != 4242 + remote) {
      mismatch("value %ld: expected %.0f, got %.0f", what, 0, 4242.0 + remote, (double)token);
    }
    ++checks;
  }
  snprintf(what, sizeof what, "MPI_Allreduce on an inter-communicator");
  sum = -1;
  check_code(MPI_Allreduce(&world_rank, &sum, 1, MPI_INT, MPI_SUM, inter), what);
  for (expect = 0, q = 1 - color; q < size; q += 2) expect += q;
  if (sum != expect) mismatch("value %ld: expected %.0f, got %.0f", what, 0, expect, sum);
  ++checks;
  check_code(MPI_Barrier(inter), "MPI_Barrier on an inter-communicator");
  ++checks;
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

/* ---- The dispatch counter, if a library provides one -------------------- */

static void check_dispatch(long* calls) {
  const char* expect = getenv("RANKSHAPE_EXPECT_DISPATCH");
  void* symbol = dlsym(RTLD_DEFAULT, "rankshape_coll_dispatched_calls");
  long (*counter)(void) = NULL;
  *calls = -1;
  if (symbol != NULL) {
    memcpy(&counter, &symbol, sizeof counter);
    *calls = counter();
  }
  if (expect == NULL || *expect == '\0') return;
  if (strcmp(expect, "none") == 0     ? symbol != NULL
      : strcmp(expect, "0") == 0      ? symbol == NULL || *calls != 0
      : strcmp(expect, "1") == 0      ? symbol == NULL || *calls <= 0
      : strcmp(expect, "loaded") == 0 ? symbol == NULL
                                      : 1) {
    fprintf(stderr,
            "coll_program: rank %d: RANKSHAPE_EXPECT_DISPATCH=%s but "
            "rankshape_coll_dispatched_calls is %s (%ld)\n",
            world_rank, expect, symbol == NULL ? "undefined" : "defined", *calls);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

int main(int argc, char** argv) {
  int size = 0, quick = 0, intercomm = 1, arg;
  long calls = 0, total = 0;
  Comm world, reversed, half;
  MPI_Datatype vector;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (arg = 1; arg < argc; ++arg) {
    if (strcmp(argv[arg], "--quick") == 0) {
      quick = 1;
    } else if (strcmp(argv[arg], "--trace") == 0) {
      trace = 1;
    } else if (strcmp(argv[arg], "--errors-return") == 0) {
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    } else if (strcmp(argv[arg], "--no-intercomm") == 0) {
      intercomm = 0;
    } else if (strcmp(argv[arg], "--no-mixed-allgather") == 0) {
      mixed_allgather = 0;
    } else {
      if (world_rank == 0)
        fprintf(stderr,
                "usage: coll_program [--quick] [--trace] [--errors-return] [--no-intercomm] "
                "[--no-mixed-allgather]\n");
      MPI_Finalize();
      return 2;
    }
  }
  MPI_Type_vector(2, 1, 3, MPI_INT, &vector);
  MPI_Type_commit(&vector);
  kind_vector.type = vector;
  MPI_Type_contiguous(4, MPI_UNSIGNED, &matrix_type);
  MPI_Type_commit(&matrix_type);
  MPI_Op_create(multiply, 0, &matrix_product);
  MPI_Op_create(add_vectors, 1, &vector_sum);

  world.comm = MPI_COMM_WORLD;
  world.name = "MPI_COMM_WORLD";
  world.rank = world_rank;
  world.size = size;
  check_all(&world, quick);

  /* Reverse rank order: the hierarchy of a relabelled communicator. */
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - world_rank, &reversed.comm);
  MPI_Comm_rank(reversed.comm, &reversed.rank);
  reversed.name = "a reversed MPI_COMM_WORLD";
  reversed.size = size;
  check_all(&reversed, 1);
  MPI_Comm_free(&reversed.comm);

  /* Even and odd ranks: communicators of different sizes at once. */
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &half.comm);
  MPI_Comm_rank(half.comm, &half.rank);
  MPI_Comm_size(half.comm, &half.size);
  half.name = world_rank % 2 ? "the odd ranks" : "the even ranks";
  check_all(&half, 1);
  MPI_Comm_free(&half.comm);

  if (intercomm && size >= 2) check_intercomm(size);

  check_dispatch(&calls);
  MPI_Reduce(&checks, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (world_rank == 0) {
    if (calls >= 0) {
      printf("coll_program: %d ranks: %ld checks ok, hierarchical calls: %ld\n", size, total,
             calls);
    } else {
      printf("coll_program: %d ranks: %ld checks ok, hierarchical calls: none\n", size, total);
    }
  }
  MPI_Op_free(&matrix_product);
  MPI_Op_free(&vector_sum);
  MPI_Type_free(&matrix_type);
  MPI_Type_free(&vector);
  MPI_Finalize();
  return 0;
}
