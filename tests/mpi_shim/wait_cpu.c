/* Blocking MPI calls wait as AUGUR_WAIT says. Run with AUGUR_WAIT=block and AUGUR_ASSIST=off:
 * in each call below the last rank arrives a second late, and the others must sleep through
 * that second, not poll: the process CPU time they spend in the call must stay under half its
 * wall time (polling uses all of it; sleeping in the CQ's channel next to none). A behaviour
 * check with a wide margin, not a performance figure. Also checks each call's data. */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static double clock_s(clockid_t id) {
  struct timespec t;
  clock_gettime(id, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

enum { kN = 4096 };
static int in[kN], out[kN * 16], counts[16], displs[16];

/* Runs op on every rank; the last rank starts it one second late. */
static void late(const char* name, void (*op)(void)) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == g_size - 1) sleep(1);
  const double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
  op();
  const double wall = clock_s(CLOCK_MONOTONIC) - w0, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
  if (g_rank != g_size - 1) {
    CHECK(wall < 0.5 || cpu < 0.5 * wall, "%s: waited %.2f s with %.2f s of CPU: it polled instead of sleeping", name,
          wall, cpu);
    if (g_rank == 0) {
      CHECK(wall >= 0.5, "%s: rank 0 did not wait for the late rank (%.2f s)", name, wall);
      printf("%s: rank 0 waited %.2f s, CPU %.3f s\n", name, wall, cpu);
    }
  }
}

static void recv_op(void) {
  if (g_rank == 0) {
    MPI_Recv(out, kN, MPI_INT, g_size - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(out[kN - 1] == g_size - 1 + kN - 1, "Recv data");
  } else if (g_rank == g_size - 1) {
    for (int i = 0; i < kN; ++i) in[i] = g_rank + i;
    MPI_Send(in, kN, MPI_INT, 0, 1, MPI_COMM_WORLD);
  }
}

static void waitall_op(void) {
  MPI_Request r[2];
  int n = 0;
  if (g_rank == 0) MPI_Irecv(out, kN, MPI_INT, g_size - 1, 2, MPI_COMM_WORLD, &r[n++]);
  if (g_rank == g_size - 1) {
    for (int i = 0; i < kN; ++i) in[i] = 7 * i;
    MPI_Isend(in, kN, MPI_INT, 0, 2, MPI_COMM_WORLD, &r[n++]);
  }
  MPI_Waitall(n, r, MPI_STATUSES_IGNORE);
  if (g_rank == 0) CHECK(out[kN - 1] == 7 * (kN - 1), "Waitall data");
}

static void barrier_op(void) { MPI_Barrier(MPI_COMM_WORLD); }

static void allreduce_op(void) {
  for (int i = 0; i < kN; ++i) in[i] = g_rank + i;
  MPI_Allreduce(in, out, kN, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(out[5] == g_size * (g_size - 1) / 2 + 5 * g_size, "Allreduce data");
}

static void bcast_op(void) {
  if (g_rank == g_size - 1) for (int i = 0; i < kN; ++i) out[i] = 3 * i;
  MPI_Bcast(out, kN, MPI_INT, g_size - 1, MPI_COMM_WORLD);
  CHECK(out[kN - 1] == 3 * (kN - 1), "Bcast data");
}

static void gatherv_op(void) {
  for (int q = 0; q < g_size; ++q) counts[q] = 100 + q, displs[q] = q * 200;
  for (int i = 0; i < 100 + g_rank; ++i) in[i] = g_rank * 1000 + i;
  MPI_Gatherv(in, 100 + g_rank, MPI_INT, out, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
  if (g_rank == 0) CHECK(out[(g_size - 1) * 200 + 99 + g_size - 1] == (g_size - 1) * 1000 + 99 + g_size - 1, "Gatherv data");
}

static void scatterv_op(void) {
  for (int q = 0; q < g_size; ++q) counts[q] = 50 + q, displs[q] = q * 100;
  if (g_rank == g_size - 1) for (int i = 0; i < g_size * 100; ++i) out[i] = i;
  MPI_Scatterv(out, counts, displs, MPI_INT, in, 50 + g_rank, MPI_INT, g_size - 1, MPI_COMM_WORLD);
  CHECK(in[49 + g_rank] == g_rank * 100 + 49 + g_rank, "Scatterv data");
}

int main(int argc, char** argv) {
  start(&argc, &argv);
  if (g_size > 16) return 2;
  late("MPI_Recv", recv_op);
  late("MPI_Waitall", waitall_op);
  late("MPI_Barrier", barrier_op);
  late("MPI_Allreduce", allreduce_op);
  late("MPI_Bcast", bcast_op);
  late("MPI_Gatherv", gatherv_op);
  late("MPI_Scatterv", scatterv_op);
  return finish("wait_cpu");
}
