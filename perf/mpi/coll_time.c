/* Times small and large collectives (microseconds per call, rank 0 prints, max over ranks), and
 * with "nb" also MPI_Ibarrier and an 8-byte MPI_Iallreduce each followed by MPI_Wait. Used by
 * coll_check.sh (what AUGUR_CHECK_COLLECTIVES costs) and coll_ab.sh (one library against
 * another). Usage: coll_time ITERS [nb] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double timed(int which, int iters, int* small, int* big, int* out, int nbig) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    switch (which) {
      case 0: MPI_Barrier(MPI_COMM_WORLD); break;
      case 1: MPI_Bcast(small, 2, MPI_INT, 0, MPI_COMM_WORLD); break;
      case 2: MPI_Allreduce(small, out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD); break;
      case 3: MPI_Allreduce(big, out, nbig, MPI_INT, MPI_SUM, MPI_COMM_WORLD); break;
      case 4: {
        MPI_Request r;
        MPI_Ibarrier(MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        break;
      }
      default: {
        MPI_Request r;
        MPI_Iallreduce(small, out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        break;
      }
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
  const int kinds = argc > 2 && strcmp(argv[2], "nb") == 0 ? 6 : 4;
  double t[6];
  for (int w = 0; w < kinds; ++w) {
    (void)timed(w, iters / 10 + 1, small, big, out, nbig); /* warm-up */
    t[w] = timed(w, w == 3 ? iters / 10 + 1 : iters, small, big, out, nbig);
  }
  if (rank == 0) {
    printf("barrier %.2f bcast8 %.2f allreduce8 %.2f allreduce64k %.2f", t[0], t[1], t[2], t[3]);
    if (kinds == 6) printf(" ibarrier %.2f iallreduce8 %.2f", t[4], t[5]);
    printf("\n");
  }
  free(big);
  free(out);
  MPI_Finalize();
  return 0;
}
