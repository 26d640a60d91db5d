/* CG: the inverse power method with conjugate gradients, after the NAS CG benchmark's
 * communication (its matrix differs: a random symmetric, diagonally dominant one). The matrix sits
 * on a 2-D grid of ranks; each CG iteration sums the row's partial products by recursive doubling,
 * swaps a segment with its transpose partner and sums two dot products across the row, all by
 * MPI_Irecv/MPI_Send/MPI_Wait: many small messages between tightly coupled ranks, the load that
 * suffers most on an oversubscribed host.
 *
 *   cg [S|W|A] [outer iterations]
 *
 * Ranks: a power of two whose grid's column count divides n. Prints zeta (the smallest eigenvalue's
 * estimate), identical under every MPI: the sums are taken in one order, fixed by the grid. Exits
 * 1 if a solve's true residual is not small, which data lost or misplaced in transit would cause. */
#include <mpi.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kInner = 25, kTagRow = 10, kTagSwap = 11, kTagDot = 12 };

static uint64_t mix(uint64_t x) { /* splitmix64: the same matrix on every rank and MPI */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

typedef struct {
  int rank, npcols, k, r, c, n, nr, nc;
  int* rowptr; /* CSR of this rank's block: rows R_r, columns C_c (local indices) */
  int* col;
  double* val;
  double* w;   /* nr: partial products, then the row's sums */
  double* buf; /* nr: a partner's partial products */
} Grid;

static void exchange(const double* out, double* in, int count, int peer, int tag) {
  MPI_Request req;
  MPI_Irecv(in, count, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD, &req);
  MPI_Send(out, count, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
}

/* The row's sum of v over its npcols ranks, by recursive doubling. */
static double row_dot(const Grid* g, const double* a, const double* b) {
  double s = 0;
  for (int i = 0; i < g->nc; ++i) s += a[i] * b[i];
  for (int d = 1; d < g->npcols; d <<= 1) {
    double t;
    exchange(&s, &t, 1, g->rank ^ d, kTagDot);
    s += t;
  }
  return s;
}

/* q = A p, both in column layout (segment C_c, replicated down the column). */
static void matvec(Grid* g, const double* p, double* q) {
  for (int i = 0; i < g->nr; ++i) {
    double s = 0;
    for (int j = g->rowptr[i]; j < g->rowptr[i + 1]; ++j) s += g->val[j] * p[g->col[j]];
    g->w[i] = s;
  }
  for (int d = 1; d < g->npcols; d <<= 1) {
    exchange(g->w, g->buf, g->nr, g->rank ^ d, kTagRow);
    for (int i = 0; i < g->nr; ++i) g->w[i] += g->buf[i];
  }
  /* Segment C_c lives in row r' = c/k; the partner holding it needs C_{c'} from our R_r. */
  const int pr = g->c / g->k, pc = g->r * g->k + g->c % g->k;
  const double* mine = g->w + (pc * g->nc - g->r * g->nr);
  const int partner = pr * g->npcols + pc;
  if (partner == g->rank) {
    memcpy(q, mine, sizeof(double) * (size_t)g->nc);
  } else {
    exchange(mine, q, g->nc, partner, kTagSwap);
  }
}

static void build(Grid* g, int nonzer) {
  const int n = g->n, per_row = nonzer * nonzer / 2;
  const int r0 = g->r * g->nr, c0 = g->c * g->nc;
  double* diag = calloc((size_t)n, sizeof(double));
  int* count = calloc((size_t)g->nr + 1, sizeof(int));
  /* Pass 0 counts this block's entries and every row's absolute sum; pass 1 fills the block. */
  for (int pass = 0; pass < 2; ++pass) {
    int* fill = pass ? calloc((size_t)g->nr, sizeof(int)) : NULL;
    for (int i = 0; i < n; ++i) {
      for (int t = 0; t < per_row; ++t) {
        const uint64_t h = mix((uint64_t)i * 1000003u + (uint64_t)t);
        const int j = (int)(h % (uint64_t)n);
        if (j == i) continue;
        const double v = -0.5 * (double)(h >> 40) / (double)(1u << 24);
        const int ends[2][2] = {{i, j}, {j, i}};
        for (int e = 0; e < 2; ++e) {
          const int row = ends[e][0] - r0, cl = ends[e][1] - c0;
          if (pass == 0 && e == 0) {
            diag[i] -= v;
            diag[j] -= v;
          }
          if (row < 0 || row >= g->nr || cl < 0 || cl >= g->nc) continue;
          if (pass == 0) {
            ++count[row + 1];
          } else {
            const int at = g->rowptr[row] + fill[row]++;
            g->col[at] = cl;
            g->val[at] = v;
          }
        }
      }
    }
    if (pass == 0) {
      for (int i = 0; i < g->nr; ++i) {
        if (r0 + i >= c0 && r0 + i < c0 + g->nc) ++count[i + 1]; /* the diagonal */
      }
      for (int i = 0; i < g->nr; ++i) count[i + 1] += count[i];
      g->rowptr = count;
      g->col = malloc(sizeof(int) * (size_t)count[g->nr] + 1);
      g->val = malloc(sizeof(double) * (size_t)count[g->nr] + 1);
    } else {
      for (int i = 0; i < g->nr; ++i) {
        const int gi = r0 + i;
        if (gi < c0 || gi >= c0 + g->nc) continue;
        const int at = g->rowptr[i] + fill[i]++;
        g->col[at] = gi - c0;
        /* Dominant (CG converges fast, the residual check holds); uneven, so zeta is not trivial. */
        g->val[at] = diag[gi] + 12.0 + (double)(gi % 10);
      }
      free(fill);
    }
  }
  free(diag);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char cls = argc > 1 ? argv[1][0] : 'W';
  const int n = cls == 'S' ? 1400 : cls == 'A' ? 14000 : 7000;
  const int nonzer = cls == 'S' ? 7 : cls == 'A' ? 11 : 8;
  const int outer = argc > 2 ? atoi(argv[2]) : 15;
  int lg = 0;
  while ((1 << lg) < size) ++lg;
  const int nprows = 1 << (lg / 2), npcols = size / nprows;
  if ((1 << lg) != size || n % npcols != 0 || outer < 1 || (cls != 'S' && cls != 'W' && cls != 'A')) {
    if (rank == 0) fprintf(stderr, "cg: usage: cg [S|W|A] [outer>0]; ranks a power of two dividing %d\n", n);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  Grid g = {.rank = rank, .npcols = npcols, .k = npcols / nprows, .r = rank / npcols, .c = rank % npcols,
            .n = n, .nr = n / nprows, .nc = n / npcols};
  build(&g, nonzer);
  g.w = malloc(sizeof(double) * (size_t)g.nr);
  g.buf = malloc(sizeof(double) * (size_t)g.nr);
  double* v[5];
  for (int i = 0; i < 5; ++i) v[i] = malloc(sizeof(double) * (size_t)g.nc);
  double *x = v[0], *z = v[1], *p = v[2], *q = v[3], *res = v[4];
  for (int i = 0; i < g.nc; ++i) x[i] = 1.0 + (double)((g.c * g.nc + i) % 7) / 8;

  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  double zeta = 0, worst = 0;
  for (int it = 0; it < outer; ++it) {
    /* Solve A z = x by CG from z = 0. */
    memset(z, 0, sizeof(double) * (size_t)g.nc);
    memcpy(res, x, sizeof(double) * (size_t)g.nc);
    memcpy(p, x, sizeof(double) * (size_t)g.nc);
    double rho = row_dot(&g, res, res);
    for (int cg = 0; cg < kInner && rho > 0; ++cg) {
      matvec(&g, p, q);
      const double alpha = rho / row_dot(&g, p, q);
      for (int i = 0; i < g.nc; ++i) {
        z[i] += alpha * p[i];
        res[i] -= alpha * q[i];
      }
      const double rho0 = rho;
      rho = row_dot(&g, res, res);
      for (int i = 0; i < g.nc; ++i) p[i] = res[i] + rho / rho0 * p[i];
    }
    /* The true residual, recomputed: catches data that went wrong anywhere in the solve. */
    matvec(&g, z, q);
    for (int i = 0; i < g.nc; ++i) res[i] = x[i] - q[i];
    const double rel = sqrt(row_dot(&g, res, res) / row_dot(&g, x, x));
    if (!(rel <= worst)) worst = rel; /* NaN too */
    zeta = 1.0 / row_dot(&g, x, z);
    const double norm = 1.0 / sqrt(row_dot(&g, z, z));
    for (int i = 0; i < g.nc; ++i) x[i] = norm * z[i];
  }
  const double secs = MPI_Wtime() - t0;
  const int ok = worst < 1e-8 && isfinite(zeta);
  if (rank == 0) {
    printf("cg: class %c, n %d, %d ranks (%dx%d), %d x %d iterations, zeta %.13e, residual %.2e %s, %.3f s\n", cls, n,
           size, nprows, npcols, outer, kInner, zeta, worst, ok ? "verified" : "FAILED", secs);
  }
  for (int i = 0; i < 5; ++i) free(v[i]);
  free(g.w);
  free(g.buf);
  free(g.rowptr);
  free(g.col);
  free(g.val);
  MPI_Finalize();
  return ok ? 0 : 1;
}
