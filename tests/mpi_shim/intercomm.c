/* Intercommunicators: MPI_Intercomm_create between the first nA ranks of the world (group A)
 * and the rest (group B), for an even split and for one rank against the rest; on each,
 * point-to-point to the remote group (ranks and statuses name remote ranks), every collective
 * with either group as the root's, blocking and nonblocking, MPI_Comm_dup, _split and _create
 * on it, MPI_Intercomm_merge with each ordering, and the errors MPI-3.1 6.6 asks for. Every
 * result is checked against a value computed from world ranks. Needs 2 ranks or more. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef struct {
  MPI_Comm local, inter;
  int low;     /* this rank is in group A */
  int nA, nB;  /* group sizes */
  int me;      /* local rank */
  int nl, nr;  /* local and remote sizes */
} Pair;

/* World rank of rank r of group A (a = 1) or B (a = 0). */
static int world_of(const Pair* p, int a, int r) { return a ? r : p->nA + r; }
static int remote_world(const Pair* p, int r) { return world_of(p, !p->low, r); }

static void make_pair(int nA, Pair* p) {
  p->nA = nA;
  p->nB = g_size - nA;
  p->low = g_rank < nA;
  MPI_Comm_split(MPI_COMM_WORLD, p->low ? 0 : 1, g_rank, &p->local);
  /* the leaders: local rank 0 of each side, world ranks 0 and nA */
  int rc = MPI_Intercomm_create(p->local, 0, MPI_COMM_WORLD, p->low ? nA : 0, 99, &p->inter);
  CHECK(rc == MPI_SUCCESS, "Intercomm_create returned %d", rc);
  p->me = p->low ? g_rank : g_rank - nA;
  p->nl = p->low ? p->nA : p->nB;
  p->nr = p->low ? p->nB : p->nA;
}

static void free_pair(Pair* p) {
  MPI_Comm_free(&p->inter);
  MPI_Comm_free(&p->local);
}

static void queries(const Pair* p) {
  int flag = 0, size = -1, rsize = -1, rank = -1, res = -1;
  MPI_Comm_test_inter(p->inter, &flag);
  CHECK(flag == 1, "test_inter = %d", flag);
  MPI_Comm_test_inter(MPI_COMM_WORLD, &flag);
  CHECK(flag == 0, "test_inter(world) = %d", flag);
  MPI_Comm_size(p->inter, &size);
  MPI_Comm_remote_size(p->inter, &rsize);
  MPI_Comm_rank(p->inter, &rank);
  CHECK(size == p->nl && rsize == p->nr && rank == p->me, "size %d remote %d rank %d", size, rsize, rank);
  MPI_Group wg, lg, rg;
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Comm_group(p->inter, &lg);
  MPI_Comm_remote_group(p->inter, &rg);
  int gs = -1;
  MPI_Group_size(rg, &gs);
  CHECK(gs == p->nr, "remote group size %d", gs);
  for (int r = 0; r < p->nr; ++r) {
    int w = -1;
    MPI_Group_translate_ranks(rg, 1, &r, wg, &w);
    CHECK(w == remote_world(p, r), "remote rank %d is world %d", r, w);
  }
  MPI_Group_rank(lg, &rank);
  CHECK(rank == p->me, "local group rank %d", rank);
  MPI_Group_free(&wg);
  MPI_Group_free(&lg);
  MPI_Group_free(&rg);
  MPI_Comm_compare(p->inter, p->inter, &res);
  CHECK(res == MPI_IDENT, "compare(inter, inter) = %d", res);
  MPI_Comm_compare(p->inter, p->local, &res);
  CHECK(res == MPI_UNEQUAL, "compare(inter, its local comm) = %d", res);
}

/* Every rank sends to every remote rank; receives by MPI_ANY_SOURCE name the remote rank. */
static void point_to_point(const Pair* p, MPI_Comm ic) {
  int* out = malloc(sizeof(int) * (size_t)p->nr);
  MPI_Request* rq = malloc(sizeof(MPI_Request) * (size_t)p->nr);
  for (int r = 0; r < p->nr; ++r) {
    out[r] = g_rank * 1000 + r;
    MPI_Isend(&out[r], 1, MPI_INT, r, 5, ic, &rq[r]);
  }
  int* seen = calloc((size_t)p->nr, sizeof(int));
  for (int k = 0; k < p->nr; ++k) {
    int v = -1;
    MPI_Status st;
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, ic, &st);
    const int ok = st.MPI_SOURCE >= 0 && st.MPI_SOURCE < p->nr;
    CHECK(ok && v == remote_world(p, st.MPI_SOURCE) * 1000 + p->me, "got %d from source %d", v, st.MPI_SOURCE);
    if (ok) ++seen[st.MPI_SOURCE];
  }
  for (int r = 0; r < p->nr; ++r) CHECK(seen[r] == 1, "remote rank %d seen %d times", r, seen[r]);
  MPI_Waitall(p->nr, rq, MPI_STATUSES_IGNORE);
  /* a named source: local rank i and remote rank i pair up */
  int v = g_rank, got = -1;
  if (p->me < p->nr) {
    MPI_Status st;
    MPI_Sendrecv(&v, 1, MPI_INT, p->me, 6, &got, 1, MPI_INT, p->me, 6, ic, &st);
    CHECK(got == remote_world(p, p->me) && st.MPI_SOURCE == p->me, "sendrecv got world %d from %d", got, st.MPI_SOURCE);
  }
  /* and a send to a rank past the remote group */
  MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
  int rc = MPI_Send(&v, 1, MPI_INT, p->nr, 7, ic);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_RANK, "send to remote rank %d (remote size %d): class %d", p->nr, p->nr, cls);
  MPI_Comm_set_errhandler(ic, MPI_ERRORS_ARE_FATAL);
  free(seen);
  free(out);
  free(rq);
}

/* The root argument at a rank: A's (a = 1) or B's rank `root` is the root. */
static int root_arg(const Pair* p, int a, int root) {
  if (p->low == a) return p->me == root ? MPI_ROOT : MPI_PROC_NULL;
  return root;
}

static int sum_remote_worlds(const Pair* p, int plus) {
  int s = 0;
  for (int r = 0; r < p->nr; ++r) s += remote_world(p, r) + plus;
  return s;
}

static void rooted(const Pair* p, MPI_Comm ic, int a, int root) {
  const int arg = root_arg(p, a, root);
  const int in_root_group = p->low == a;
  const int root_world = world_of(p, a, root);
  /* Bcast */
  int buf[5];
  for (int i = 0; i < 5; ++i) buf[i] = arg == MPI_ROOT ? 7 * i + root_world : -1;
  MPI_Bcast(buf, 5, MPI_INT, arg, ic);
  if (!in_root_group || arg == MPI_ROOT) {
    for (int i = 0; i < 5; ++i) CHECK(buf[i] == 7 * i + root_world, "bcast[%d] = %d (root world %d)", i, buf[i], root_world);
  } else {
    CHECK(buf[0] == -1, "bcast wrote at a non-root of the root group");
  }
  /* Reduce: the other group's sum arrives at the root */
  int mine[2] = {g_rank + 1, 2 * g_rank}, red[2] = {-1, -1};
  MPI_Reduce(mine, red, 2, MPI_INT, MPI_SUM, arg, ic);
  if (arg == MPI_ROOT) {
    const int s = sum_remote_worlds(p, 1);
    CHECK(red[0] == s && red[1] == 2 * (s - p->nr), "reduce = %d %d, want %d", red[0], red[1], s);
  }
  /* Gather and Gatherv: two ints / rank+1 ints from each remote rank, in rank order */
  const int n = p->nr;
  int* g = malloc(sizeof(int) * (size_t)(n * (n + 1) + 2));
  int* counts = malloc(sizeof(int) * (size_t)n);
  int* displs = malloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n * (n + 1) + 2; ++i) g[i] = -1;
  int two[2] = {g_rank, g_rank * 2};
  MPI_Gather(two, 2, MPI_INT, g, 2, MPI_INT, arg, ic);
  if (arg == MPI_ROOT) {
    for (int r = 0; r < n; ++r) {
      CHECK(g[2 * r] == remote_world(p, r) && g[2 * r + 1] == 2 * remote_world(p, r), "gather block %d = %d %d", r, g[2 * r],
            g[2 * r + 1]);
    }
  }
  int v[16];
  const int nv = p->me + 1 < 16 ? p->me + 1 : 16;
  for (int i = 0; i < nv; ++i) v[i] = g_rank * 100 + i;
  int at = 0;
  for (int r = 0; r < n; ++r) {
    counts[r] = r + 1 < 16 ? r + 1 : 16;
    displs[r] = at + 1; /* a gap before each block */
    at += counts[r] + 1;
  }
  for (int i = 0; i < n * (n + 1) + 2; ++i) g[i] = -1;
  MPI_Gatherv(v, in_root_group ? 0 : nv, MPI_INT, g, counts, displs, MPI_INT, arg, ic);
  if (arg == MPI_ROOT) {
    for (int r = 0; r < n; ++r) {
      CHECK(g[displs[r] - 1] == -1, "gatherv wrote the gap before block %d", r);
      for (int i = 0; i < counts[r]; ++i) {
        CHECK(g[displs[r] + i] == remote_world(p, r) * 100 + i, "gatherv block %d [%d] = %d", r, i, g[displs[r] + i]);
      }
    }
  }
  /* Scatter and Scatterv: the reverse */
  for (int i = 0; i < n * (n + 1) + 2; ++i) g[i] = arg == MPI_ROOT ? 3 * i + root_world : -1;
  int got[16] = {-1, -1};
  MPI_Scatter(g, 2, MPI_INT, got, 2, MPI_INT, arg, ic);
  if (!in_root_group) {
    CHECK(got[0] == 3 * (2 * p->me) + root_world && got[1] == 3 * (2 * p->me + 1) + root_world, "scatter got %d %d", got[0],
          got[1]);
  }
  memset(got, 0xff, sizeof got);
  MPI_Scatterv(g, counts, displs, MPI_INT, got, in_root_group ? 0 : nv, MPI_INT, arg, ic);
  if (!in_root_group) {
    /* my block at the root was counts[me] ints at displs[me], computed over the root group's n */
    int d = 0;
    for (int r = 0; r < p->me; ++r) d += (r + 1 < 16 ? r + 1 : 16) + 1;
    for (int i = 0; i < nv; ++i) CHECK(got[i] == 3 * (d + 1 + i) + root_world, "scatterv [%d] = %d", i, got[i]);
  }
  free(g);
  free(counts);
  free(displs);
}

static void all_to_all(const Pair* p, MPI_Comm ic) {
  const int n = p->nr;
  /* Allreduce: each group gets the other group's sum */
  int x[3] = {g_rank + 1, 1, -g_rank}, y[3] = {0, 0, 0};
  MPI_Allreduce(x, y, 3, MPI_INT, MPI_SUM, ic);
  CHECK(y[0] == sum_remote_worlds(p, 1) && y[1] == n && y[2] == -sum_remote_worlds(p, 0), "allreduce = %d %d %d", y[0], y[1],
        y[2]);
  int mx = -1;
  MPI_Allreduce(&g_rank, &mx, 1, MPI_INT, MPI_MAX, ic);
  CHECK(mx == remote_world(p, n - 1), "allreduce max = %d", mx);
  /* Allgather: the remote group's world ranks in order */
  int* all = malloc(sizeof(int) * (size_t)(2 * n));
  MPI_Allgather(&g_rank, 1, MPI_INT, all, 1, MPI_INT, ic);
  for (int r = 0; r < n; ++r) CHECK(all[r] == remote_world(p, r), "allgather[%d] = %d", r, all[r]);
  /* Allgatherv: remote rank r contributes r % 2 + 1 ints */
  int mine2[2] = {g_rank, -g_rank};
  int* counts = malloc(sizeof(int) * (size_t)n);
  int* displs = malloc(sizeof(int) * (size_t)n);
  int at = 0;
  for (int r = 0; r < n; ++r) {
    counts[r] = r % 2 + 1;
    displs[r] = at;
    at += counts[r];
  }
  MPI_Allgatherv(mine2, p->me % 2 + 1, MPI_INT, all, counts, displs, MPI_INT, ic);
  for (int r = 0; r < n; ++r) {
    CHECK(all[displs[r]] == remote_world(p, r), "allgatherv block %d = %d", r, all[displs[r]]);
    if (counts[r] == 2) CHECK(all[displs[r] + 1] == -remote_world(p, r), "allgatherv block %d second", r);
  }
  /* Alltoall: block r goes to remote rank r */
  int* s = malloc(sizeof(int) * (size_t)n);
  int* r2 = malloc(sizeof(int) * (size_t)n);
  for (int r = 0; r < n; ++r) s[r] = g_rank * 100 + r;
  MPI_Alltoall(s, 1, MPI_INT, r2, 1, MPI_INT, ic);
  for (int r = 0; r < n; ++r) CHECK(r2[r] == remote_world(p, r) * 100 + p->me, "alltoall[%d] = %d", r, r2[r]);
  /* Alltoallv with every count 1 but reversed displacements */
  for (int r = 0; r < n; ++r) {
    counts[r] = 1;
    displs[r] = n - 1 - r;
  }
  MPI_Alltoallv(s, counts, displs, MPI_INT, r2, counts, displs, MPI_INT, ic);
  for (int r = 0; r < n; ++r) {
    /* remote rank r sent me its block nl - 1 - me (its remote group is this one) */
    CHECK(r2[n - 1 - r] == remote_world(p, r) * 100 + (p->nl - 1 - p->me), "alltoallv[%d] = %d", r, r2[n - 1 - r]);
  }
  free(all);
  free(counts);
  free(displs);
  free(s);
  free(r2);
}

/* Reduce_scatter(_block): totals must agree across the groups: nA * nB elements on each side. */
static void reduce_scatter(const Pair* p, MPI_Comm ic) {
  const int total = p->nA * p->nB;
  int* in = malloc(sizeof(int) * (size_t)total);
  for (int j = 0; j < total; ++j) in[j] = g_rank + j;
  const int rc = p->nr; /* nl * nr == total */
  int* out = malloc(sizeof(int) * (size_t)total);
  MPI_Reduce_scatter_block(in, out, rc, MPI_INT, MPI_SUM, ic);
  for (int i = 0; i < rc; ++i) {
    const int j = p->me * rc + i;
    CHECK(out[i] == sum_remote_worlds(p, 0) + p->nr * j, "reduce_scatter_block [%d] = %d", i, out[i]);
  }
  /* uneven blocks: local rank i gets total / nl (+1 for the first total % nl) */
  int* counts = malloc(sizeof(int) * (size_t)p->nl);
  int first = 0;
  for (int i = 0; i < p->nl; ++i) {
    counts[i] = total / p->nl + (i < total % p->nl);
    if (i < p->me) first += counts[i];
  }
  MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, ic);
  for (int i = 0; i < counts[p->me]; ++i) {
    CHECK(out[i] == sum_remote_worlds(p, 0) + p->nr * (first + i), "reduce_scatter [%d] = %d", i, out[i]);
  }
  free(counts);
  free(in);
  free(out);
}

static void nonblocking(const Pair* p, MPI_Comm ic) {
  MPI_Request rq[4];
  int b = p->low ? 42 : -1, s = g_rank, sum = -1;
  const int arg = root_arg(p, 1, 0);
  int* a2a_s = malloc(sizeof(int) * (size_t)p->nr);
  int* a2a_r = malloc(sizeof(int) * (size_t)p->nr);
  for (int r = 0; r < p->nr; ++r) a2a_s[r] = g_rank * 10 + r;
  MPI_Ibarrier(ic, &rq[0]);
  MPI_Ibcast(&b, 1, MPI_INT, arg, ic, &rq[1]);
  MPI_Iallreduce(&s, &sum, 1, MPI_INT, MPI_SUM, ic, &rq[2]);
  MPI_Ialltoall(a2a_s, 1, MPI_INT, a2a_r, 1, MPI_INT, ic, &rq[3]);
  MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
  CHECK(b == 42, "ibcast = %d", b);
  CHECK(sum == sum_remote_worlds(p, 0), "iallreduce = %d", sum);
  for (int r = 0; r < p->nr; ++r) CHECK(a2a_r[r] == remote_world(p, r) * 10 + p->me, "ialltoall[%d] = %d", r, a2a_r[r]);
  free(a2a_s);
  free(a2a_r);
}

static void collectives(const Pair* p, MPI_Comm ic) {
  MPI_Barrier(ic);
  rooted(p, ic, 1, 0);
  rooted(p, ic, 0, p->nB - 1);
  all_to_all(p, ic);
  reduce_scatter(p, ic);
  nonblocking(p, ic);
  /* scans have no meaning on an intercommunicator */
  MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
  int x = 1, y = 0, cls = -1;
  MPI_Error_class(MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, ic), &cls);
  CHECK(cls == MPI_ERR_COMM, "scan on an intercommunicator: class %d", cls);
  MPI_Error_class(MPI_Allreduce(MPI_IN_PLACE, &y, 1, MPI_INT, MPI_SUM, ic), &cls);
  CHECK(cls == MPI_ERR_BUFFER, "MPI_IN_PLACE on an intercommunicator: class %d", cls);
  MPI_Comm_set_errhandler(ic, MPI_ERRORS_ARE_FATAL);
}

static void dup_and_free(const Pair* p) {
  MPI_Comm d;
  MPI_Comm_dup(p->inter, &d);
  int flag = 0, rs = -1, res = -1;
  MPI_Comm_test_inter(d, &flag);
  MPI_Comm_remote_size(d, &rs);
  CHECK(flag == 1 && rs == p->nr, "dup: inter %d, remote size %d", flag, rs);
  MPI_Comm_compare(p->inter, d, &res);
  CHECK(res == MPI_CONGRUENT, "compare(inter, dup) = %d", res);
  /* the same tag on both: each receive gets its own communicator's message */
  int a = g_rank, bv = -g_rank - 1, ga = 0, gb = 0;
  MPI_Request rq[2];
  MPI_Irecv(&gb, 1, MPI_INT, p->me % p->nr, 3, d, &rq[0]);
  MPI_Irecv(&ga, 1, MPI_INT, p->me % p->nr, 3, p->inter, &rq[1]);
  /* remote rank r receives from my rank iff r == ... : send to every remote rank whose me % nl == my rank */
  for (int r = 0; r < p->nr; ++r) {
    if (r % p->nl == p->me) {
      MPI_Send(&a, 1, MPI_INT, r, 3, p->inter);
      MPI_Send(&bv, 1, MPI_INT, r, 3, d);
    }
  }
  MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
  const int from = remote_world(p, p->me % p->nr);
  CHECK(ga == from && gb == -from - 1, "dup traffic crossed: inter got %d, dup got %d (from world %d)", ga, gb, from);
  collectives(p, d);
  MPI_Comm_free(&d);
  /* a nonblocking duplicate, waited for after a collective on the original */
  int x = g_rank, sum = -1;
  MPI_Comm_idup(p->inter, &d, &rq[0]);
  MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, p->inter);
  MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
  MPI_Comm_test_inter(d, &flag);
  MPI_Comm_remote_size(d, &rs);
  CHECK(flag == 1 && rs == p->nr && sum == sum_remote_worlds(p, 0), "idup: inter %d, remote size %d, sum %d", flag, rs, sum);
  collectives(p, d);
  MPI_Comm_free(&d);
}

static void merge(const Pair* p) {
  for (int mode = 0; mode < 3; ++mode) {
    /* 0: B high (A first), 1: A high (B first), 2: both low (the leader with the lower world rank first: A) */
    const int high = mode == 0 ? !p->low : mode == 1 ? p->low : 0;
    MPI_Comm m;
    MPI_Intercomm_merge(p->inter, high, &m);
    int rank = -1, size = -1, flag = 1;
    MPI_Comm_rank(m, &rank);
    MPI_Comm_size(m, &size);
    MPI_Comm_test_inter(m, &flag);
    const int want = mode == 1 ? (p->low ? p->nB + g_rank : g_rank - p->nA) : g_rank;
    CHECK(size == g_size && rank == want && flag == 0, "merge mode %d: rank %d of %d, want %d", mode, rank, size, want);
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, m);
    CHECK(sum == g_size * (g_size - 1) / 2, "allreduce over the merged comm = %d", sum);
    MPI_Comm_free(&m);
  }
}

static void split_and_create(const Pair* p) {
  /* split by local rank parity, reversed order by key */
  MPI_Comm s;
  const int color = p->me % 2;
  MPI_Comm_split(p->inter, color, -p->me, &s);
  int nl = 0, nr = 0;
  for (int i = 0; i < p->nl; ++i) nl += i % 2 == color;
  for (int i = 0; i < p->nr; ++i) nr += i % 2 == color;
  if (nr == 0) {
    CHECK(s == MPI_COMM_NULL, "split with no remote members of colour %d is not MPI_COMM_NULL", color);
  } else {
    int size = -1, rsize = -1, rank = -1, flag = 0;
    MPI_Comm_test_inter(s, &flag);
    MPI_Comm_size(s, &size);
    MPI_Comm_remote_size(s, &rsize);
    MPI_Comm_rank(s, &rank);
    int want_rank = 0;  /* members of my colour with a larger local rank come first */
    for (int i = p->me + 1; i < p->nl; ++i) want_rank += i % 2 == color;
    CHECK(flag == 1 && size == nl && rsize == nr && rank == want_rank, "split: inter %d size %d/%d remote %d/%d rank %d/%d",
          flag, size, nl, rsize, nr, rank, want_rank);
    /* remote rank 0 of the split is the remote member of my colour with the largest rank */
    int top = -1;
    for (int i = 0; i < p->nr; ++i) {
      if (i % 2 == color) top = i;
    }
    int v = g_rank, got = -1;
    MPI_Allreduce(&v, &got, 1, MPI_INT, MPI_MAX, s);
    CHECK(got == remote_world(p, top), "allreduce max over the split = %d, want %d", got, remote_world(p, top));
    MPI_Comm_free(&s);
  }
  /* create: A keeps its first half (at least one), B all of it */
  MPI_Group lg, sub;
  MPI_Comm_group(p->inter, &lg);
  const int keep = p->low ? (p->nA + 1) / 2 : p->nB;
  int range[1][3] = {{0, keep - 1, 1}};
  MPI_Group_range_incl(lg, 1, range, &sub);
  MPI_Comm c;
  MPI_Comm_create(p->inter, sub, &c);
  if (p->me >= keep) {
    CHECK(c == MPI_COMM_NULL, "create: a rank outside the group got a communicator");
  } else {
    int rsize = -1;
    MPI_Comm_remote_size(c, &rsize);
    const int want = p->low ? p->nB : (p->nA + 1) / 2;
    CHECK(rsize == want, "create: remote size %d, want %d", rsize, want);
    int sum = -1;
    MPI_Allreduce(&g_rank, &sum, 1, MPI_INT, MPI_SUM, c);
    int s_want = 0;
    for (int r = 0; r < want; ++r) s_want += remote_world(p, r);
    CHECK(sum == s_want, "allreduce over the created comm = %d, want %d", sum, s_want);
    MPI_Comm_free(&c);
  }
  MPI_Group_free(&sub);
  MPI_Group_free(&lg);
}

static void errors(const Pair* p) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rs = -1, cls = -1;
  MPI_Error_class(MPI_Comm_remote_size(MPI_COMM_WORLD, &rs), &cls);
  CHECK(cls == MPI_ERR_COMM, "remote_size of an intracommunicator: class %d", cls);
  MPI_Comm_set_errhandler(p->inter, MPI_ERRORS_RETURN);
  int dims[1] = {p->nl}, periods[1] = {0};
  MPI_Comm cart;
  MPI_Error_class(MPI_Cart_create(p->inter, 1, dims, periods, 0, &cart), &cls);
  CHECK(cls == MPI_ERR_COMM, "cart_create on an intercommunicator: class %d", cls);
  int x = 0;
  MPI_Error_class(MPI_Bcast(&x, 1, MPI_INT, p->nr, p->inter), &cls);
  CHECK(cls == MPI_ERR_ROOT, "bcast with root %d past the remote group: class %d", p->nr, cls);
  MPI_Comm_set_errhandler(p->inter, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  start(&argc, &argv);
  if (g_size < 2) {
    if (g_rank == 0) fprintf(stderr, "intercomm needs 2 ranks or more\n");
    MPI_Finalize();
    return 1;
  }
  const int splits[2] = {g_size / 2, 1};
  for (int k = 0; k < (g_size > 2 ? 2 : 1); ++k) {
    Pair p;
    make_pair(splits[k], &p);
    queries(&p);
    point_to_point(&p, p.inter);
    collectives(&p, p.inter);
    dup_and_free(&p);
    merge(&p);
    split_and_create(&p);
    errors(&p);
    free_pair(&p);
  }
  return finish("intercomm");
}
