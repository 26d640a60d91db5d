/* PES: iterative 2-D Poisson (Jacobi) solver, rows split over ranks; every iteration sends the
 * first and last row to the neighbours and receives two ghost rows (the prefetching paper's PES). */
#include <math.h>
#include <mpi.h>
#include "example.h"
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  int rank, size;
  const int iters = example_start(&argc, &argv, &rank, &size);
  const int N = example_size(argc, argv, 64); /* the grid is N x N */
  const int rows = N / size;
  /* rows + 2 ghost rows */
  double* u = calloc((size_t)(rows + 2) * N, sizeof *u);
  double* v = calloc((size_t)(rows + 2) * N, sizeof *v);
  if (rank == 0) u[N + 0] = 1.0;                          /* (0,0) fixed to 1 */
  if (rank == size - 1) u[(size_t)rows * N + N - 1] = 1.0; /* (N-1,N-1) fixed to 1 */
  const int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  const int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  for (int it = 0; it < iters; ++it) {
    MPI_Request req[4];
    MPI_Irecv(&u[0], N, MPI_DOUBLE, up, 0, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(&u[(size_t)(rows + 1) * N], N, MPI_DOUBLE, down, 1, MPI_COMM_WORLD, &req[1]);
    MPI_Isend(&u[N], N, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, &req[2]);
    MPI_Isend(&u[(size_t)rows * N], N, MPI_DOUBLE, down, 0, MPI_COMM_WORLD, &req[3]);
    MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
    for (int i = 1; i <= rows; ++i) {
      for (int j = 1; j < N - 1; ++j) {
        v[i * N + j] = 0.25 * (u[(i - 1) * N + j] + u[(i + 1) * N + j] + u[i * N + j - 1] + u[i * N + j + 1]);
      }
    }
    for (int i = 1; i <= rows; ++i) {
      for (int j = 1; j < N - 1; ++j) u[i * N + j] = v[i * N + j];
    }
  }
  double local = 0, total = 0;
  for (int i = 1; i <= rows; ++i) {
    for (int j = 0; j < N; ++j) local += u[i * N + j];
  }
  MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0 && !(isfinite(total) && total > 0)) {
    fprintf(stderr, "pes: bad sum %g\n", total);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  free(u);
  free(v);
  MPI_Finalize();
  return 0;
}
