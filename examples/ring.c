/* Ring: every rank passes a token to its right neighbour, iters times. One receive per loop. */
#include <mpi.h>
#include "example.h"
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  int rank, size;
  const int iters = example_start(&argc, &argv, &rank, &size);
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  long token = rank, in = 0;
  for (int i = 0; i < iters; ++i) {
    if (rank == 0) {
      MPI_Send(&token, 1, MPI_LONG, right, 1, MPI_COMM_WORLD);
      MPI_Recv(&in, 1, MPI_LONG, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      token = in + 1;
    } else {
      MPI_Recv(&in, 1, MPI_LONG, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      token = in + 1;
      MPI_Send(&token, 1, MPI_LONG, right, 1, MPI_COMM_WORLD);
    }
  }
  if (rank == 0 && token != (long)iters * size) {
    fprintf(stderr, "ring: token %ld, expected %ld\n", token, (long)iters * size);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return 0;
}
