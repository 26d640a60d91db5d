/* What connecting costs, as a program sees it (docs/runtime.md, Connections): the time of
 * MPI_Init, of the first exchange with the two ring neighbours (which makes the connections when
 * they are made on first use), of an exchange once connected (median of ITERS), and of
 * MPI_Finalize, in microseconds; the worst rank's for the first three, rank 0's for the last.
 * Run it under coll_ab.sh with AUGUR_CONNECT=all against AUGUR_CONNECT=lazy.
 * Usage: connect_time ITERS [BYTES] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* One halo step: a message to each neighbour and one from each, tag 7. */
static void exchange(char* out, char* in, int bytes, int left, int right) {
  MPI_Request r[4];
  MPI_Irecv(in, bytes, MPI_CHAR, left, 7, MPI_COMM_WORLD, &r[0]);
  MPI_Irecv(in + bytes, bytes, MPI_CHAR, right, 7, MPI_COMM_WORLD, &r[1]);
  MPI_Isend(out, bytes, MPI_CHAR, right, 7, MPI_COMM_WORLD, &r[2]);
  MPI_Isend(out, bytes, MPI_CHAR, left, 7, MPI_COMM_WORLD, &r[3]);
  MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
}

int main(int argc, char** argv) {
  const double t_init = now_us();
  MPI_Init(&argc, &argv);
  double init = now_us() - t_init;
  const int iters = argc > 1 ? atoi(argv[1]) : 100, bytes = argc > 2 ? atoi(argv[2]) : 1024;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 3 || iters < 1 || bytes < 1) {
    if (rank == 0) fprintf(stderr, "connect_time: at least 3 ranks, ITERS >= 1, BYTES >= 1\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  char* out = malloc((size_t)bytes);
  char* in = malloc(2 * (size_t)bytes);
  double* t = malloc(sizeof(double) * (size_t)iters);
  memset(out, rank, (size_t)bytes);
  double t0 = now_us();
  exchange(out, in, bytes, left, right);
  double first = now_us() - t0;
  for (int i = 0; i < iters; ++i) {
    t0 = now_us();
    exchange(out, in, bytes, left, right);
    t[i] = now_us() - t0;
  }
  qsort(t, (size_t)iters, sizeof(double), cmp);
  double steady = t[iters / 2];
  if (in[0] != (char)left || in[bytes] != (char)right) MPI_Abort(MPI_COMM_WORLD, 3);
  double mine[3] = {init, first, steady}, worst[3];
  MPI_Reduce(mine, worst, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  t0 = now_us();
  MPI_Finalize();
  const double fin = now_us() - t0;
  if (rank == 0) printf("init_us %.0f first_us %.1f steady_us %.1f finalize_us %.0f\n", worst[0], worst[1], worst[2], fin);
  free(out);
  free(in);
  free(t);
  return 0;
}
