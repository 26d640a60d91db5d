/* Misbehaving MPI programs for mpi_fatal.sh: each mode must end the whole job with a clear
 * message, never a hang. Rank 0 usually blocks in a receive nobody will satisfy. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  int x = 0, rank = 0, size = 1;
  if (strcmp(mode, "before-init") == 0) return MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : 9;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (strcmp(mode, "after-finalize") == 0) {
    MPI_Finalize();
    MPI_Barrier(MPI_COMM_WORLD);
    return 9;
  }
  if (strcmp(mode, "exit-code") == 0) {
    MPI_Finalize();
    return rank == size - 1 ? 5 : 0;
  }
  if (strcmp(mode, "coll-root") == 0) { /* run with AUGUR_CHECK_COLLECTIVES=1 */
    MPI_Bcast(&x, 1, MPI_INT, rank == 0 ? 0 : 1, MPI_COMM_WORLD);
    MPI_Finalize();
    return 9;
  }
  if (rank == 0 && strcmp(mode, "hang") != 0) {
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return 9;
  }
  if (strcmp(mode, "rank") == 0) MPI_Send(&x, 1, MPI_INT, size + 1, 0, MPI_COMM_WORLD);
  if (strcmp(mode, "truncate") == 0) {
    char big[64] = {0};
    if (rank == 1) MPI_Send(big, 64, MPI_CHAR, size > 2 ? 2 : 1, 1, MPI_COMM_WORLD);
    if (rank == (size > 2 ? 2 : 1)) MPI_Recv(big, 8, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  if (strcmp(mode, "abort") == 0 && rank == 1) MPI_Abort(MPI_COMM_WORLD, 3);
  if (strcmp(mode, "crash") == 0 && rank == 1) raise(SIGKILL);
  if (strcmp(mode, "hang") == 0) {
    printf("hanging\n");
    fflush(stdout);
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 9;
}
