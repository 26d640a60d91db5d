/* M3: master/slave matrix multiply (the prefetching paper's M3). B is sent once to every slave;
 * each iteration the master scatters slices of a new A and gathers the products, with
 * point-to-point calls so that every receive is an MPI_Recv the recorder sees. */
#include <mpi.h>
#include "example.h"
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  int rank, size;
  const int iters = example_start(&argc, &argv, &rank, &size);
  const int N = example_size(argc, argv, 48); /* the matrices are N x N */
  const int slaves = size - 1;
  if (slaves < 1 || N % slaves != 0) {
    if (rank == 0) fprintf(stderr, "m3: needs 1 + a divisor of %d ranks\n", N);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int rows = N / slaves;
  double* b = malloc(sizeof(double) * (size_t)N * N);
  double* a = malloc(sizeof(double) * (size_t)N * N);
  double* c = malloc(sizeof(double) * (size_t)N * N);
  if (rank == 0) {
    for (int i = 0; i < N * N; ++i) b[i] = (double)(i % 7);
    for (int s = 1; s <= slaves; ++s) MPI_Send(b, N * N, MPI_DOUBLE, s, 0, MPI_COMM_WORLD);
    for (int it = 0; it < iters; ++it) {
      for (int i = 0; i < N * N; ++i) a[i] = (double)((i + it) % 5);
      for (int s = 1; s <= slaves; ++s) {
        MPI_Send(&a[(s - 1) * rows * N], rows * N, MPI_DOUBLE, s, 1, MPI_COMM_WORLD);
      }
      for (int s = 1; s <= slaves; ++s) {
        MPI_Recv(&c[(s - 1) * rows * N], rows * N, MPI_DOUBLE, s, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    }
    double check = 0, want = 0;
    for (int j = 0; j < N; ++j) check += c[j];
    for (int j = 0; j < N; ++j) {
      for (int k = 0; k < N; ++k) want += a[k] * b[k * N + j];
    }
    if (check != want) {
      fprintf(stderr, "m3: row 0 sums to %g, expected %g\n", check, want);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  } else {
    MPI_Recv(b, N * N, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int it = 0; it < iters; ++it) {
      MPI_Recv(a, rows * N, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int i = 0; i < rows; ++i) {
        for (int j = 0; j < N; ++j) {
          double sum = 0;
          for (int k = 0; k < N; ++k) sum += a[i * N + k] * b[k * N + j];
          c[i * N + j] = sum;
        }
      }
      MPI_Send(c, rows * N, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
    }
  }
  free(a);
  free(b);
  free(c);
  MPI_Finalize();
  return 0;
}
