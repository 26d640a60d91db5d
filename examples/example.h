/* Shared start of the example programs: MPI up, rank and size known, iterations from argv[1],
 * the problem size from argv[2] (example_size; each program's default otherwise). */
#ifndef AUGUR_EXAMPLE_H
#define AUGUR_EXAMPLE_H
#include <mpi.h>
#include <stdlib.h>

static inline int example_start(int* argc, char*** argv, int* rank, int* size) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  return *argc > 1 ? atoi((*argv)[1]) : 100;
}

static inline int example_size(int argc, char** argv, int fallback) {
  const int n = argc > 2 ? atoi(argv[2]) : fallback;
  return n > 0 ? n : fallback;
}
#endif
