/* A tiny check harness for the MPI conformance programs: CHECK counts, reports the rank and
 * line of every failure, and finish() sums the counts over the job (rank 0 prints
 * "N passed, M failed") and returns the exit status. */
#ifndef AUGUR_MPI_CHECK_H
#define AUGUR_MPI_CHECK_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int g_rank, g_size;
static long g_pass, g_fail;

#define CHECK(cond, ...)                                                                 \
  do {                                                                                   \
    if (cond) {                                                                          \
      ++g_pass;                                                                          \
    } else {                                                                             \
      ++g_fail;                                                                          \
      fprintf(stderr, "rank %d: %s:%d: CHECK(%s) failed: ", g_rank, __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                                      \
      fputc('\n', stderr);                                                               \
    }                                                                                    \
  } while (0)

static inline void start(int* argc, char*** argv) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
}

static int finish(const char* name) {
  long mine[2] = {g_pass, g_fail}, all[2] = {0, 0};
  MPI_Reduce(mine, all, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (g_rank == 0) printf("%s (%d ranks): %ld passed, %ld failed\n", name, g_size, all[0], all[1]);
  MPI_Finalize();
  return g_fail == 0 && (g_rank != 0 || all[1] == 0) ? 0 : 1;
}
#endif
