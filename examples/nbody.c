/* N-body: every step each rank needs all positions: an allgather done as a ring of size-1
 * MPI_Irecv/MPI_Send steps, each into the block of the rank it comes from. */
#include <mpi.h>
#include "example.h"
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  int rank, size;
  const int steps = example_start(&argc, &argv, &rank, &size);
  const int PER_RANK = example_size(argc, argv, 16); /* bodies per rank */
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  double* pos = calloc((size_t)size * PER_RANK, sizeof *pos);
  double* vel = calloc((size_t)PER_RANK, sizeof *vel);
  for (int i = 0; i < PER_RANK; ++i) pos[rank * PER_RANK + i] = rank + 0.01 * i;
  for (int s = 0; s < steps; ++s) {
    for (int k = 0; k < size - 1; ++k) {
      const int send_block = (rank - k + size) % size;
      const int recv_block = (rank - k - 1 + size) % size;
      MPI_Request r;
      MPI_Irecv(&pos[(size_t)recv_block * PER_RANK], PER_RANK, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &r);
      MPI_Send(&pos[(size_t)send_block * PER_RANK], PER_RANK, MPI_DOUBLE, right, 3, MPI_COMM_WORLD);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < PER_RANK; ++i) {
      double f = 0;
      const double x = pos[rank * PER_RANK + i];
      for (int j = 0; j < size * PER_RANK; ++j) f += (pos[j] - x) * 1e-4;
      vel[i] += f;
    }
    for (int i = 0; i < PER_RANK; ++i) pos[rank * PER_RANK + i] += vel[i] * 1e-3;
  }
  free(pos);
  free(vel);
  MPI_Finalize();
  return 0;
}
