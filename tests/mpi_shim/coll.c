/* Collectives checked against serial references computed locally from the same inputs: every
 * root, small and large sizes (the large ones take the ring algorithms), MPI_IN_PLACE, the
 * predefined operations, MINLOC/MAXLOC, a non-commutative user operation, derived datatypes.
 * Built a second time with AUGUR_TEST_NONBLOCKING: every collective by its nonblocking twin. */
#include <string.h>

#include "check.h"
#ifdef AUGUR_TEST_NONBLOCKING
#include "nbc_wrap.h" /* every collective below by its nonblocking twin */
#endif

/* Input element i of rank r. */
static int val(int r, int i) { return (int)(((unsigned)r * 7919u + (unsigned)i * 104729u) % 1000u) - 500; }

static void barrier_and_bcast(void) {
  for (int i = 0; i < 3; ++i) CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "barrier");
  const int sizes[] = {1, 1000, 100000};
  for (int s = 0; s < 3; ++s) {
    const int n = sizes[s];
    int* b = malloc(sizeof(int) * (size_t)n);
    for (int root = 0; root < g_size; ++root) {
      for (int i = 0; i < n; ++i) b[i] = g_rank == root ? val(root, i) : 0;
      MPI_Bcast(b, n, MPI_INT, root, MPI_COMM_WORLD);
      int bad = -1;
      for (int i = 0; i < n && bad < 0; ++i) {
        if (b[i] != val(root, i)) bad = i;
      }
      CHECK(bad < 0, "bcast of %d from root %d: element %d", n, root, bad);
    }
    free(b);
  }
}

static void reductions(void) {
  const int sizes[] = {1, 7, 40000};
  const MPI_Op ops[] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_LAND, MPI_LOR};
  for (int s = 0; s < 3; ++s) {
    const int n = sizes[s];
    int* in = malloc(sizeof(int) * (size_t)n);
    int* out = malloc(sizeof(int) * (size_t)n);
    int* want = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; ++i) in[i] = val(g_rank, i);
    for (int o = 0; o < 8; ++o) {
      for (int i = 0; i < n; ++i) {
        int acc = val(0, i);
        for (int r = 1; r < g_size; ++r) {
          const int x = val(r, i);
          switch (o) {
            case 0: acc += x; break;
            case 1: acc = x > acc ? x : acc; break;
            case 2: acc = x < acc ? x : acc; break;
            case 3: acc &= x; break;
            case 4: acc |= x; break;
            case 5: acc ^= x; break;
            case 6: acc = acc && x; break;
            case 7: acc = acc || x; break;
          }
        }
        want[i] = acc;
      }
      MPI_Allreduce(in, out, n, MPI_INT, ops[o], MPI_COMM_WORLD);
      CHECK(memcmp(out, want, sizeof(int) * (size_t)n) == 0, "allreduce n=%d op #%d", n, o);
      const int root = (o + s) % g_size;
      memset(out, 0, sizeof(int) * (size_t)n);
      MPI_Reduce(in, out, n, MPI_INT, ops[o], root, MPI_COMM_WORLD);
      if (g_rank == root) CHECK(memcmp(out, want, sizeof(int) * (size_t)n) == 0, "reduce n=%d op #%d root %d", n, o, root);
    }
    /* In place. */
    memcpy(out, in, sizeof(int) * (size_t)n);
    MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i) {
      int acc = 0;
      for (int r = 0; r < g_size; ++r) acc += val(r, i);
      want[i] = acc;
    }
    CHECK(memcmp(out, want, sizeof(int) * (size_t)n) == 0, "allreduce in place n=%d", n);
    memcpy(out, in, sizeof(int) * (size_t)n);
    MPI_Reduce(g_rank == 0 ? MPI_IN_PLACE : out, out, n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (g_rank == 0) CHECK(memcmp(out, want, sizeof(int) * (size_t)n) == 0, "reduce in place n=%d", n);
    free(in);
    free(out);
    free(want);
  }
  /* Doubles: sum of exactly representable values, product. */
  double d = g_rank + 1.0, dsum = 0, dprod = 0;
  MPI_Allreduce(&d, &dsum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&d, &dprod, 1, MPI_DOUBLE, MPI_PROD, MPI_COMM_WORLD);
  double fact = 1;
  for (int r = 1; r <= g_size; ++r) fact *= r;
  CHECK(dsum == g_size * (g_size + 1) / 2.0 && dprod == fact, "double sum %g prod %g", dsum, dprod);
  /* MINLOC / MAXLOC. */
  struct { double v; int i; } p = {(double)((g_rank * 3) % 5), g_rank}, lo, hi;
  MPI_Allreduce(&p, &lo, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
  MPI_Allreduce(&p, &hi, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
  double wl = 1e9, wh = -1e9;
  int il = -1, ih = -1;
  for (int r = 0; r < g_size; ++r) {
    const double v = (double)((r * 3) % 5);
    if (v < wl) { wl = v; il = r; }
    if (v > wh) { wh = v; ih = r; }
  }
  CHECK(lo.v == wl && lo.i == il && hi.v == wh && hi.i == ih, "minloc (%g,%d) maxloc (%g,%d)", lo.v, lo.i, hi.v, hi.i);
}

/* 2x2 integer matrix product: associative, not commutative. */
static void matmul(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const int* a = in;
  int* b = inout;
  for (int k = 0; k < *len; ++k, a += 4, b += 4) {
    const int c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                      a[2] * b[1] + a[3] * b[3]};
    memcpy(b, c, sizeof c);
  }
}

static void mat_of(int r, int* m) {
  m[0] = 1;
  m[1] = r % 3;
  m[2] = (r + 1) % 2;
  m[3] = 1;
}

static void user_ops_and_scans(void) {
  MPI_Op op;
  MPI_Op_create(matmul, 0, &op);
  int commute = 1;
  MPI_Op_commutative(op, &commute);
  CHECK(commute == 0, "op_commutative");
  MPI_Datatype mat;
  MPI_Type_contiguous(4, MPI_INT, &mat);
  MPI_Type_commit(&mat);
  int m[4], out[4], want[4] = {1, 0, 0, 1}, pre[4] = {1, 0, 0, 1};
  mat_of(g_rank, m);
  int prefix_incl[4] = {0}, prefix_excl[4] = {0};
  for (int r = 0; r < g_size; ++r) {
    int x[4];
    mat_of(r, x);
    if (r == g_rank) memcpy(prefix_excl, want, sizeof want);
    matmul(want, x, (int[]){1}, &mat); /* x = want * x */
    memcpy(want, x, sizeof want);
    if (r == g_rank) memcpy(prefix_incl, want, sizeof want);
  }
  (void)pre;
  for (int root = 0; root < g_size; ++root) {
    memset(out, 0, sizeof out);
    MPI_Reduce(m, out, 1, mat, op, root, MPI_COMM_WORLD);
    if (g_rank == root) CHECK(memcmp(out, want, sizeof out) == 0, "non-commutative reduce to root %d", root);
  }
  MPI_Allreduce(m, out, 1, mat, op, MPI_COMM_WORLD);
  CHECK(memcmp(out, want, sizeof out) == 0, "non-commutative allreduce");
  MPI_Scan(m, out, 1, mat, op, MPI_COMM_WORLD);
  CHECK(memcmp(out, prefix_incl, sizeof out) == 0, "non-commutative scan");
  memset(out, 0, sizeof out);
  MPI_Exscan(m, out, 1, mat, op, MPI_COMM_WORLD);
  if (g_rank > 0) CHECK(memcmp(out, prefix_excl, sizeof out) == 0, "non-commutative exscan");
  long v = g_rank + 1, s = 0;
  MPI_Scan(&v, &s, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  CHECK(s == (long)(g_rank + 1) * (g_rank + 2) / 2, "scan sum %ld", s);
  s = -1;
  MPI_Exscan(&v, &s, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank > 0) CHECK(s == (long)g_rank * (g_rank + 1) / 2, "exscan sum %ld", s);
  MPI_Op_free(&op);
  MPI_Type_free(&mat);
  CHECK(op == MPI_OP_NULL && mat == MPI_DATATYPE_NULL, "free sets null handles");
}

static void gathers(void) {
  const int n = 3;
  int mine[3], *all = malloc(sizeof(int) * (size_t)(n * g_size));
  for (int i = 0; i < n; ++i) mine[i] = val(g_rank, i);
  for (int root = 0; root < g_size; ++root) {
    memset(all, 0, sizeof(int) * (size_t)(n * g_size));
    MPI_Gather(mine, n, MPI_INT, all, n, MPI_INT, root, MPI_COMM_WORLD);
    if (g_rank == root) {
      int ok = 1;
      for (int r = 0; r < g_size; ++r) {
        for (int i = 0; i < n; ++i) ok &= all[r * n + i] == val(r, i);
      }
      CHECK(ok, "gather to %d", root);
    }
    /* Scatter back what root holds. */
    int got[3] = {0};
    for (int r = 0; r < g_size; ++r) {
      for (int i = 0; i < n; ++i) all[r * n + i] = val(r + 100, i);
    }
    MPI_Scatter(all, n, MPI_INT, got, n, MPI_INT, root, MPI_COMM_WORLD);
    CHECK(got[0] == val(g_rank + 100, 0) && got[2] == val(g_rank + 100, 2), "scatter from %d", root);
  }
  memset(all, 0, sizeof(int) * (size_t)(n * g_size));
  MPI_Allgather(mine, n, MPI_INT, all, n, MPI_INT, MPI_COMM_WORLD);
  int ok = 1;
  for (int r = 0; r < g_size; ++r) {
    for (int i = 0; i < n; ++i) ok &= all[r * n + i] == val(r, i);
  }
  CHECK(ok, "allgather");
  /* In-place allgather. */
  for (int i = 0; i < n; ++i) all[g_rank * n + i] = val(g_rank, i) + 1;
  MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, n, MPI_INT, MPI_COMM_WORLD);
  ok = 1;
  for (int r = 0; r < g_size; ++r) ok &= all[r * n + 2] == val(r, 2) + 1;
  CHECK(ok, "allgather in place");
  free(all);

  /* v-variants: rank r contributes r+1 elements. */
  int* counts = malloc(sizeof(int) * (size_t)g_size);
  int* displs = malloc(sizeof(int) * (size_t)g_size);
  int total = 0;
  for (int r = 0; r < g_size; ++r) {
    counts[r] = r + 1;
    displs[r] = total + r; /* a hole between blocks */
    total += r + 1;
  }
  const int span = total + g_size;
  int* v = malloc(sizeof(int) * (size_t)span);
  int* myv = malloc(sizeof(int) * (size_t)(g_rank + 1));
  for (int i = 0; i <= g_rank; ++i) myv[i] = val(g_rank, i);
  const int root = g_size - 1;
  for (int i = 0; i < span; ++i) v[i] = -7;
  MPI_Gatherv(myv, g_rank + 1, MPI_INT, v, counts, displs, MPI_INT, root, MPI_COMM_WORLD);
  if (g_rank == root) {
    ok = 1;
    for (int r = 0; r < g_size; ++r) {
      for (int i = 0; i < counts[r]; ++i) ok &= v[displs[r] + i] == val(r, i);
      if (r > 0) ok &= v[displs[r] - 1] == -7;
    }
    CHECK(ok, "gatherv");
  }
  for (int i = 0; i < span; ++i) v[i] = -7;
  MPI_Allgatherv(myv, g_rank + 1, MPI_INT, v, counts, displs, MPI_INT, MPI_COMM_WORLD);
  ok = 1;
  for (int r = 0; r < g_size; ++r) {
    for (int i = 0; i < counts[r]; ++i) ok &= v[displs[r] + i] == val(r, i);
  }
  CHECK(ok, "allgatherv");
  memset(myv, 0, sizeof(int) * (size_t)(g_rank + 1));
  MPI_Scatterv(v, counts, displs, MPI_INT, myv, g_rank + 1, MPI_INT, 0, MPI_COMM_WORLD);
  CHECK(myv[g_rank] == val(g_rank, g_rank), "scatterv");
  free(v);
  free(myv);
  free(counts);
  free(displs);
}

static void alltoalls(void) {
  const int n = 2;
  int* s = malloc(sizeof(int) * (size_t)(n * g_size));
  int* r = malloc(sizeof(int) * (size_t)(n * g_size));
  for (int q = 0; q < g_size; ++q) {
    for (int i = 0; i < n; ++i) s[q * n + i] = g_rank * 1000 + q * 10 + i;
  }
  MPI_Alltoall(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD);
  int ok = 1;
  for (int q = 0; q < g_size; ++q) {
    for (int i = 0; i < n; ++i) ok &= r[q * n + i] == q * 1000 + g_rank * 10 + i;
  }
  CHECK(ok, "alltoall");
  /* alltoallv: rank p sends q+1 elements to q. */
  int *sc = malloc(sizeof(int) * (size_t)g_size), *sd = malloc(sizeof(int) * (size_t)g_size);
  int *rc = malloc(sizeof(int) * (size_t)g_size), *rd = malloc(sizeof(int) * (size_t)g_size);
  int st = 0, rt = 0;
  for (int q = 0; q < g_size; ++q) {
    sc[q] = q + 1;
    sd[q] = st;
    st += q + 1;
    rc[q] = g_rank + 1;
    rd[q] = rt;
    rt += g_rank + 1;
  }
  int* sv = malloc(sizeof(int) * (size_t)st);
  int* rv = malloc(sizeof(int) * (size_t)rt);
  for (int q = 0; q < g_size; ++q) {
    for (int i = 0; i < sc[q]; ++i) sv[sd[q] + i] = g_rank * 100 + q + i;
  }
  MPI_Alltoallv(sv, sc, sd, MPI_INT, rv, rc, rd, MPI_INT, MPI_COMM_WORLD);
  ok = 1;
  for (int q = 0; q < g_size; ++q) {
    for (int i = 0; i < rc[q]; ++i) ok &= rv[rd[q] + i] == q * 100 + g_rank + i;
  }
  CHECK(ok, "alltoallv");
  /* alltoallw: the same exchange with byte displacements, receiving from odd ranks as one
   * contiguous type of g_rank+1 ints (same type signature, different types). */
  {
    int *sb = malloc(sizeof(int) * (size_t)g_size), *rb = malloc(sizeof(int) * (size_t)g_size);
    int* rcw = malloc(sizeof(int) * (size_t)g_size);
    MPI_Datatype *stw = malloc(sizeof(MPI_Datatype) * (size_t)g_size), *rtw = malloc(sizeof(MPI_Datatype) * (size_t)g_size);
    MPI_Datatype block;
    MPI_Type_contiguous(g_rank + 1, MPI_INT, &block);
    MPI_Type_commit(&block);
    for (int q = 0; q < g_size; ++q) {
      sb[q] = sd[q] * (int)sizeof(int);
      rb[q] = rd[q] * (int)sizeof(int);
      stw[q] = MPI_INT;
      rtw[q] = q % 2 ? block : MPI_INT;
      rcw[q] = q % 2 ? 1 : rc[q];
    }
    memset(rv, 0, sizeof(int) * (size_t)rt);
    MPI_Alltoallw(sv, sc, sb, stw, rv, rcw, rb, rtw, MPI_COMM_WORLD);
    ok = 1;
    for (int q = 0; q < g_size; ++q) {
      for (int i = 0; i < rc[q]; ++i) ok &= rv[rd[q] + i] == q * 100 + g_rank + i;
    }
    CHECK(ok, "alltoallw");
    MPI_Type_free(&block);
    free(sb);
    free(rb);
    free(rcw);
    free(stw);
    free(rtw);
  }
  /* alltoall in place: each block of the receive buffer goes to its rank, replaced by theirs. */
  for (int q = 0; q < g_size; ++q) {
    for (int i = 0; i < n; ++i) r[q * n + i] = g_rank * 1000 + q * 10 + i;
  }
  MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, n, MPI_INT, MPI_COMM_WORLD);
  ok = 1;
  for (int q = 0; q < g_size; ++q) {
    for (int i = 0; i < n; ++i) ok &= r[q * n + i] == q * 1000 + g_rank * 10 + i;
  }
  CHECK(ok, "alltoall in place");
  /* reduce_scatter_block and reduce_scatter against the full reduction. */
  int* in = malloc(sizeof(int) * (size_t)(3 * g_size));
  for (int i = 0; i < 3 * g_size; ++i) in[i] = val(g_rank, i);
  int out[3];
  MPI_Reduce_scatter_block(in, out, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  ok = 1;
  for (int i = 0; i < 3; ++i) {
    int acc = 0;
    for (int q = 0; q < g_size; ++q) acc += val(q, g_rank * 3 + i);
    ok &= out[i] == acc;
  }
  CHECK(ok, "reduce_scatter_block");
  for (int q = 0; q < g_size; ++q) rc[q] = q % 2 + 1;
  int off = 0;
  for (int q = 0; q < g_rank; ++q) off += rc[q];
  MPI_Reduce_scatter(in, out, rc, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  ok = 1;
  for (int i = 0; i < rc[g_rank]; ++i) {
    int acc = val(0, off + i);
    for (int q = 1; q < g_size; ++q) acc = val(q, off + i) > acc ? val(q, off + i) : acc;
    ok &= out[i] == acc;
  }
  CHECK(ok, "reduce_scatter");
  free(in);
  free(s);
  free(r);
  free(sc);
  free(sd);
  free(rc);
  free(rd);
  free(sv);
  free(rv);
}

/* A column of a row-major matrix (vector type) broadcast and gathered. */
static void derived_in_collectives(void) {
  enum { R = 6, C = 5 };
  double m[R][C];
  MPI_Datatype col;
  MPI_Type_vector(R, 1, C, MPI_DOUBLE, &col);
  MPI_Type_commit(&col);
  for (int i = 0; i < R; ++i) {
    for (int j = 0; j < C; ++j) m[i][j] = g_rank == 0 ? i * 10 + j : -1;
  }
  MPI_Bcast(&m[0][2], 1, col, 0, MPI_COMM_WORLD);
  int ok = 1;
  for (int i = 0; i < R; ++i) {
    ok &= m[i][2] == i * 10 + 2;
    if (g_rank != 0) ok &= m[i][1] == -1 && m[i][3] == -1;
  }
  CHECK(ok, "bcast of a column");
  double s[R][C], t[R][C];
  for (int i = 0; i < R; ++i) {
    for (int j = 0; j < C; ++j) {
      s[i][j] = g_rank + i;
      t[i][j] = 0;
    }
  }
  MPI_Allreduce(&s[0][1], &t[0][1], 1, col, MPI_SUM, MPI_COMM_WORLD);
  ok = 1;
  for (int i = 0; i < R; ++i) ok &= t[i][1] == g_size * (g_size - 1) / 2.0 + g_size * i && t[i][0] == 0;
  CHECK(ok, "allreduce over a column");
  MPI_Type_free(&col);
}

int main(int argc, char** argv) {
  start(&argc, &argv);
  barrier_and_bcast();
  reductions();
  user_ops_and_scans();
  gathers();
  alltoalls();
  derived_in_collectives();
  #ifdef AUGUR_TEST_NONBLOCKING
  return finish("coll (nonblocking)");
#else
  return finish("coll");
#endif
}
