/* treematch_map: maps the ranks of a rankshape traffic file onto a synthetic
   balanced tree with TreeMatch (the copy in Open MPI's 3rd-party/treematch).

   treematch_map TRAFFIC --arity A1,A2,... --cost C1,C2,... --bytes-per-message B
                 [--optimize] [-q] -o OUT

   --arity: the tree's arities, top level first (e.g. racks,nodes,cores).
   --cost:  the communication cost of each level, top level first; given as
            is to tm_build_synthetic_topology (which adds up the costs below
            each level; TreeMatch uses them only to score a solution, not to
            build it).
   OUT: line i = leaf (core) that process i is mapped to, 0..leaves-1 in
   the tree's leaf order (node-major). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "treematch.h"

static void die(const char* fmt, const char* arg) {
  fprintf(stderr, "treematch_map: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n");
  exit(2);
}

static void usage(void) {
  fprintf(stderr,
          "usage: treematch_map TRAFFIC --arity A1,A2,... --cost C1,C2,... "
          "--bytes-per-message B [--optimize] [-q] -o OUT\n");
  exit(2);
}

/* Comma-separated list into vals (at most max); returns the count. */
static int parse_list(const char* s, double* vals, int max, const char* what) {
  int n = 0;
  const char* p = s;
  while (1) {
    char* end;
    errno = 0;
    double v = strtod(p, &end);
    if (end == p || errno || (*end != ',' && *end != '\0')) die("bad %s list", what);
    if (n == max) die("too many levels in the %s list", what);
    vals[n++] = v;
    if (*end == '\0') break;
    p = end + 1;
  }
  return n;
}

/* Next line that is neither blank nor a comment; NULL at end of file. */
static char* next_line(FILE* f, char* buf, size_t size, long* lineno) {
  while (fgets(buf, (int)size, f)) {
    char* p = buf;
    ++*lineno;
    if (!strchr(buf, '\n') && !feof(f)) die("line too long in %s", "traffic file");
    while (*p == ' ' || *p == '\t') p++;
    if (*p == '#' || *p == '\n' || *p == '\r' || *p == '\0') continue;
    return p;
  }
  return NULL;
}

int main(int argc, char** argv) {
  const char *traffic = NULL, *out = NULL, *arity_s = NULL, *cost_s = NULL, *bpm_s = NULL;
  int optimize = 0, quiet = 0, i;
  for (i = 1; i < argc; i++) {
    const char* a = argv[i];
    if (!strcmp(a, "--optimize"))
      optimize = 1;
    else if (!strcmp(a, "-q") || !strcmp(a, "--quiet"))
      quiet = 1;
    else if (!strcmp(a, "--arity") || !strcmp(a, "--cost") || !strcmp(a, "--bytes-per-message") ||
             !strcmp(a, "-o")) {
      if (i + 1 >= argc) die("%s needs a value", a);
      const char* v = argv[++i];
      if (!strcmp(a, "--arity"))
        arity_s = v;
      else if (!strcmp(a, "--cost"))
        cost_s = v;
      else if (!strcmp(a, "-o"))
        out = v;
      else
        bpm_s = v;
    } else if (a[0] == '-' && a[1] != '\0')
      die("unknown option %s", a);
    else if (traffic)
      die("more than one traffic file (%s)", a);
    else
      traffic = a;
  }
  if (!traffic || !out || !arity_s || !cost_s || !bpm_s) usage();

  /* The tree. */
  double av[TM_MAX_LEVELS], cv[TM_MAX_LEVELS];
  int nlev = parse_list(arity_s, av, TM_MAX_LEVELS - 1, "arity");
  int ncost = parse_list(cost_s, cv, TM_MAX_LEVELS - 1, "cost");
  if (ncost != nlev) die("--cost must give one cost per level of --arity (%s)", cost_s);
  int arity[TM_MAX_LEVELS];
  double cost[TM_MAX_LEVELS];
  long leaves = 1;
  for (i = 0; i < nlev; i++) {
    if (av[i] < 1 || av[i] != (int)av[i]) die("arity must be whole numbers >= 1: %s", arity_s);
    if (cv[i] < 0) die("costs must not be negative: %s", cost_s);
    arity[i] = (int)av[i];
    cost[i] = cv[i];
    leaves *= arity[i];
    if (leaves > 1L << 24) die("tree too large: %s", arity_s);
  }
  arity[nlev] = 0; /* the leaf level: arity 0, cost 0 */
  cost[nlev] = 0;
  char* end;
  errno = 0;
  double bpm = strtod(bpm_s, &end);
  if (end == bpm_s || *end || errno || bpm < 0) die("bad --bytes-per-message %s", bpm_s);

  /* The traffic: comm[i][j] = bytes + messages * B, both directions summed. */
  FILE* f = fopen(traffic, "r");
  if (!f) die("cannot open %s", traffic);
  char buf[4096], *line;
  long lineno = 0, n = 0;
  line = next_line(f, buf, sizeof buf, &lineno);
  if (!line || strncmp(line, "rankshape-traffic 1", 19) ||
      strspn(line + 19, " \t\r\n") != strlen(line + 19))
    die("%s: first line must be 'rankshape-traffic 1'", traffic);
  line = next_line(f, buf, sizeof buf, &lineno);
  if (!line || sscanf(line, "ranks %ld", &n) != 1 || n < 1 || n > 1L << 20)
    die("%s: second line must be 'ranks N' with N >= 1", traffic);
  if (n > leaves) {
    fprintf(stderr, "treematch_map: %ld ranks but the tree has only %ld leaves\n", n, leaves);
    return 2;
  }
  double** mat = malloc(n * sizeof *mat);
  if (!mat) die("out of memory for %s", traffic);
  for (i = 0; i < n; i++) {
    mat[i] = calloc(n, sizeof **mat);
    if (!mat[i]) die("out of memory for %s", traffic);
  }
  while ((line = next_line(f, buf, sizeof buf, &lineno))) {
    long from, to;
    double bytes, msgs;
    int used = 0;
    if (sscanf(line, "%ld %ld %lf %lf %n", &from, &to, &bytes, &msgs, &used) != 4 ||
        line[used] != '\0' || from < 0 || to < 0 || from >= n || to >= n || bytes < 0 || msgs < 0 ||
        bytes != (double)(long long)bytes || msgs != (double)(long long)msgs) {
      fprintf(stderr,
              "treematch_map: %s:%ld: bad line (want 'from to bytes messages', ranks < %ld)\n",
              traffic, lineno, n);
      return 2;
    }
    if (from == to) continue; /* traffic with itself crosses no link */
    double w = bytes + msgs * bpm;
    mat[from][to] += w;
    mat[to][from] += w;
  }
  fclose(f);

  /* TreeMatch. */
  tm_set_verbose_level(quiet ? NONE : INFO);
  int* numbering = malloc(arity[nlev - 1] * sizeof *numbering);
  for (i = 0; i < arity[nlev - 1]; i++) numbering[i] = i; /* identity core numbering */
  tm_topology_t* topo =
      tm_build_synthetic_topology(arity, cost, nlev + 1, numbering, arity[nlev - 1]);
  /* --optimize: tm_optimize_topology, TreeMatch's documented "optimize the
     topology by decomposing arities": every level whose arity is a multiple
     of 2 or 3 is split into levels of arity 2 and 3 (16 -> 2,2,2,2), so each
     grouping step is small and TreeMatch can search it (near-)exactly
     instead of falling back to its greedy k-partitioning. Leaf order and
     numbering are unchanged. (tm_set_exhaustive_search_flag is not used:
     in this copy thread_exhaustive_search ends with exit(-1).) */
  if (optimize) tm_optimize_topology(&topo);
  tm_affinity_mat_t* aff = tm_build_affinity_mat(mat, (int)n);
  tm_tree_t* tree = tm_build_tree_from_topology(topo, aff, NULL, NULL);
  tm_solution_t* sol = tm_compute_mapping(topo, tree);

  /* Check: one distinct leaf per process. */
  char* seen = calloc(leaves, 1);
  for (i = 0; i < n; i++) {
    int c = sol->sigma[i];
    if (c < 0 || c >= leaves || seen[c]) {
      fprintf(stderr, "treematch_map: TreeMatch gave process %d leaf %d (out of range or taken)\n",
              i, c);
      return 1;
    }
    seen[c] = 1;
  }
  FILE* o = fopen(out, "w");
  if (!o) die("cannot write %s", out);
  for (i = 0; i < n; i++) fprintf(o, "%d\n", sol->sigma[i]);
  if (fclose(o)) die("cannot write %s", out);

  tm_free_solution(sol);
  tm_free_tree(tree);
  tm_free_topology(topo);
  tm_free_affinity_mat(aff); /* frees mat too */
  tm_finalize();
  free(numbering);
  free(seen);
  return 0;
}
