/* Nonblocking collectives beyond their results (coll.c, built a second time with every
 * collective by its nonblocking twin, checks those): many in flight at once, of one kind and of
 * many, on one communicator and across several, completed in any order; mixed with
 * point-to-point and with blocking collectives; finished by MPI_Test alone while the rank
 * computes; MPI_Waitany over collectives and receives; the errors MPI asks for. */
#include <string.h>

#include "check.h"

static int val(int r, int i) { return (int)(((unsigned)r * 7919u + (unsigned)i * 104729u) % 1000u) - 500; }

/* Eight different collectives started back to back, completed in reverse order. */
static void many_kinds_in_flight(void) {
  enum { N = 1000, K = 8 };
  const int p = g_size;
  int* in = malloc(sizeof(int) * N);
  int* sum = malloc(sizeof(int) * N);
  int* bc = malloc(sizeof(int) * N);
  int* gath = malloc(sizeof(int) * (size_t)p);
  int* a2a_s = malloc(sizeof(int) * (size_t)p);
  int* a2a_r = malloc(sizeof(int) * (size_t)p);
  int scan = 0, exscan = -1, mx = 0;
  for (int i = 0; i < N; ++i) {
    in[i] = val(g_rank, i);
    bc[i] = g_rank == 1 % p ? val(77, i) : 0;
  }
  for (int q = 0; q < p; ++q) a2a_s[q] = g_rank * 100 + q;
  const int me = g_rank + 1;
  MPI_Request rq[K];
  MPI_Ibarrier(MPI_COMM_WORLD, &rq[0]);
  MPI_Iallreduce(in, sum, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[1]);
  MPI_Ibcast(bc, N, MPI_INT, 1 % p, MPI_COMM_WORLD, &rq[2]);
  MPI_Iallgather(&me, 1, MPI_INT, gath, 1, MPI_INT, MPI_COMM_WORLD, &rq[3]);
  MPI_Ialltoall(a2a_s, 1, MPI_INT, a2a_r, 1, MPI_INT, MPI_COMM_WORLD, &rq[4]);
  MPI_Iscan(&me, &scan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[5]);
  MPI_Ireduce(&me, &mx, 1, MPI_INT, MPI_MAX, p - 1, MPI_COMM_WORLD, &rq[6]);
  MPI_Iexscan(&me, &exscan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[7]);
  for (int k = K - 1; k >= 0; --k) CHECK(MPI_Wait(&rq[k], MPI_STATUS_IGNORE) == MPI_SUCCESS && rq[k] == MPI_REQUEST_NULL, "wait #%d", k);
  int ok = 1;
  for (int i = 0; i < N; ++i) {
    int want = 0;
    for (int r = 0; r < p; ++r) want += val(r, i);
    ok &= sum[i] == want && bc[i] == val(77, i);
  }
  CHECK(ok, "allreduce and bcast in flight with six others");
  ok = 1;
  for (int q = 0; q < p; ++q) ok &= gath[q] == q + 1 && a2a_r[q] == q * 100 + g_rank;
  CHECK(ok, "allgather and alltoall in flight with six others");
  CHECK(scan == me * (me + 1) / 2, "scan: %d", scan);
  if (g_rank > 0) CHECK(exscan == g_rank * (g_rank + 1) / 2, "exscan: %d", exscan);
  if (g_rank == p - 1) CHECK(mx == p, "reduce max: %d", mx);
  free(in);
  free(sum);
  free(bc);
  free(gath);
  free(a2a_s);
  free(a2a_r);
}

/* Sixteen of one kind in flight: each call's messages are its own (the results do not cross). */
static void same_kind_in_flight(void) {
  enum { M = 16 };
  int in[M], out[M], b[M];
  MPI_Request rq[2 * M];
  for (int m = 0; m < M; ++m) {
    in[m] = g_rank + m * 100;
    b[m] = g_rank == m % g_size ? 1000 + m : -1;
    MPI_Iallreduce(&in[m], &out[m], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[2 * m]);
    MPI_Ibcast(&b[m], 1, MPI_INT, m % g_size, MPI_COMM_WORLD, &rq[2 * m + 1]);
  }
  CHECK(MPI_Waitall(2 * M, rq, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "waitall");
  int ok = 1;
  for (int m = 0; m < M; ++m) ok &= out[m] == g_size * (g_size - 1) / 2 + g_size * m * 100 && b[m] == 1000 + m;
  CHECK(ok, "16 allreduces and 16 broadcasts in flight");
}

/* Point-to-point on the same communicator while a collective is in flight, a wildcard receive
 * that must take the point-to-point message (never collective traffic), and a blocking
 * collective in between. */
static void mixed_with_p2p_and_blocking(void) {
  enum { N = 100000 };
  int* big = malloc(sizeof(int) * N);
  for (int i = 0; i < N; ++i) big[i] = g_rank == 0 ? val(5, i) : 0;
  MPI_Request rq;
  MPI_Ibcast(big, N, MPI_INT, 0, MPI_COMM_WORLD, &rq);
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  int got = -1;
  MPI_Status st;
  MPI_Sendrecv(&g_rank, 1, MPI_INT, right, 7, &got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
  CHECK(got == left && st.MPI_SOURCE == left && st.MPI_TAG == 7, "wildcard receive during a bcast: %d from %d tag %d", got,
        st.MPI_SOURCE, st.MPI_TAG);
  int one = 1, n = 0;
  MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(n == g_size, "blocking allreduce while a bcast is in flight: %d", n);
  CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE) == MPI_SUCCESS, "wait");
  int ok = 1;
  for (int i = 0; i < N; ++i) ok &= big[i] == val(5, i);
  CHECK(ok, "bcast of %d ints around point-to-point and a blocking allreduce", N);
  free(big);
}

/* MPI_Test alone finishes a many-round collective (the ring allreduce) while the rank computes. */
static void finished_by_test(void) {
  enum { N = 40000 };
  double* in = malloc(sizeof(double) * N);
  double* out = malloc(sizeof(double) * N);
  for (int i = 0; i < N; ++i) in[i] = g_rank + i * 0.5;
  MPI_Request rq;
  MPI_Iallreduce(in, out, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq);
  int flag = 0;
  long tests = 0;
  volatile double sink = 0;
  while (!flag) {
    for (int k = 0; k < 1000; ++k) sink += k * 1e-9;
    MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
    ++tests;
  }
  CHECK(rq == MPI_REQUEST_NULL, "request released by MPI_Test");
  int ok = 1;
  for (int i = 0; i < N; ++i) ok &= out[i] == g_size * (g_size - 1) / 2.0 + g_size * i * 0.5;
  CHECK(ok, "allreduce of %d doubles finished by %ld tests", N, tests);
  free(in);
  free(out);
}

/* MPI_Waitany over a receive, an allreduce and a barrier: each index exactly once. */
static void waitany_mixed(void) {
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  int from = -1, one = 1, n = 0;
  MPI_Request rq[3];
  MPI_Irecv(&from, 1, MPI_INT, left, 3, MPI_COMM_WORLD, &rq[0]);
  MPI_Iallreduce(&one, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[1]);
  MPI_Ibarrier(MPI_COMM_WORLD, &rq[2]);
  MPI_Send(&g_rank, 1, MPI_INT, right, 3, MPI_COMM_WORLD);
  int seen[3] = {0, 0, 0};
  for (int k = 0; k < 3; ++k) {
    int idx = -1;
    MPI_Waitany(3, rq, &idx, MPI_STATUS_IGNORE);
    if (idx >= 0 && idx < 3) ++seen[idx];
  }
  CHECK(seen[0] == 1 && seen[1] == 1 && seen[2] == 1, "waitany indices %d %d %d", seen[0], seen[1], seen[2]);
  CHECK(from == left && n == g_size, "receive %d, allreduce %d", from, n);
}

/* Three communicators at once (WORLD, a duplicate, halves by parity), completed in mixed order. */
static void across_communicators(void) {
  MPI_Comm half, dup;
  MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &half);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  int a = 0, b = 0, c = 0, x = g_rank;
  MPI_Request rq[3];
  MPI_Iallreduce(&x, &a, 1, MPI_INT, MPI_SUM, half, &rq[0]);
  MPI_Iallreduce(&x, &b, 1, MPI_INT, MPI_MAX, dup, &rq[1]);
  MPI_Iallreduce(&x, &c, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &rq[2]);
  MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
  MPI_Wait(&rq[2], MPI_STATUS_IGNORE);
  MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
  int want = 0;
  for (int r = g_rank % 2; r < g_size; r += 2) want += r;
  CHECK(a == want && b == g_size - 1 && c == 0, "half %d (want %d), dup max %d, world min %d", a, want, b, c);
  MPI_Comm_free(&half);
  MPI_Comm_free(&dup);
}

static int err_class(int rc) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  return cls;
}

/* A null request pointer, a bad root, and freeing or cancelling a collective's request
 * (erroneous by MPI-3.1 5.12): each refused with its class, nothing lost. */
static void errors(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(err_class(MPI_Ibarrier(MPI_COMM_WORLD, NULL)) == MPI_ERR_ARG, "null request pointer");
  int x = 0;
  MPI_Request r = MPI_REQUEST_NULL;
  CHECK(err_class(MPI_Ibcast(&x, 1, MPI_INT, g_size, MPI_COMM_WORLD, &r)) == MPI_ERR_ROOT && r == MPI_REQUEST_NULL,
        "root out of range");
  MPI_Ibarrier(MPI_COMM_WORLD, &r);
  CHECK(err_class(MPI_Request_free(&r)) == MPI_ERR_REQUEST && r != MPI_REQUEST_NULL, "request_free refused");
  CHECK(err_class(MPI_Cancel(&r)) == MPI_ERR_REQUEST, "cancel refused");
  CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS && r == MPI_REQUEST_NULL, "the barrier still completes");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  start(&argc, &argv);
  for (int round = 0; round < 3; ++round) {
    many_kinds_in_flight();
    same_kind_in_flight();
    mixed_with_p2p_and_blocking();
    finished_by_test();
    waitany_mixed();
    across_communicators();
  }
  errors();
  return finish("nbc");
}
