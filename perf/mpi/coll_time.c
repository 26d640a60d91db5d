/* Times small and large collectives (microseconds per call, rank 0 prints, max over ranks).
 * Used by coll_check.sh to measure what AUGUR_CHECK_COLLECTIVES costs. Usage: coll_time ITERS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double timed(int which, int iters, int* small, int* big, int* out, int nbig) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    switch (which) {
      case 0: MPI_Barrier(MPI_COMM_WORLD); break;
      case 1: MPI_Bcast(small, 2, MPI_INT, 0, MPI_COMM_WORLD); break;
      case 2: MPI_Allreduce(small, out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD); break;
      default: MPI_Allreduce(big, out, nbig, MPI_INT, MPI_SUM, MPI_COMM_WORLD); break;
    }
  }
  double t = (MPI_Wtime() - t0) / iters * 1e6, worst = 0;
  MPI_Reduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return worst;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int iters = argc > 1 ? atoi(argv[1]) : 200, nbig = 16384;
  int rank, small[2] = {1, 2};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int* big = calloc(nbig, sizeof(int));
  int* out = calloc(nbig, sizeof(int));
  double t[4];
  for (int w = 0; w < 4; ++w) {
    (void)timed(w, iters / 10 + 1, small, big, out, nbig); /* warm-up */
    t[w] = timed(w, w == 3 ? iters / 10 + 1 : iters, small, big, out, nbig);
  }
  if (rank == 0) printf("barrier %.2f bcast8 %.2f allreduce8 %.2f allreduce64k %.2f\n", t[0], t[1], t[2], t[3]);
  free(big);
  free(out);
  MPI_Finalize();
  return 0;
}
