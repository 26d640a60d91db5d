/* Mismatched collective arguments under AUGUR_CHECK_COLLECTIVES=1 and MPI_ERRORS_RETURN: every
 * rank gets the error class (different roots: MPI_ERR_ROOT, ops: MPI_ERR_OP, amounts of data:
 * MPI_ERR_COUNT, different collectives: MPI_ERR_OTHER) instead of a hang or wrong data, and the
 * communicator stays usable; calls that match (also with different but equivalent datatypes)
 * still deliver the right data. Run by augurrun with AUGUR_CHECK_COLLECTIVES=1. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int cls(int rc) {
  int c = -1;
  MPI_Error_class(rc, &c);
  return c;
}

static void max_fn(void* in, void* io, int* len, MPI_Datatype* t) {
  (void)t;
  for (int i = 0; i < *len; ++i) ((int*)io)[i] = ((int*)in)[i] > ((int*)io)[i] ? ((int*)in)[i] : ((int*)io)[i];
}

int main(int argc, char** argv) {
  start(&argc, &argv);
  const char* on = getenv("AUGUR_CHECK_COLLECTIVES");
  CHECK(on != NULL && strcmp(on, "1") == 0, "run me with AUGUR_CHECK_COLLECTIVES=1");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int buf[8] = {0}, out[64] = {0}, rc;

  rc = MPI_Bcast(buf, 1, MPI_INT, g_rank == 0 ? 0 : 1, MPI_COMM_WORLD);
  CHECK(cls(rc) == MPI_ERR_ROOT, "different roots: class %d", cls(rc));
  rc = MPI_Reduce(buf, out, 1, MPI_INT, MPI_SUM, g_rank % 2, MPI_COMM_WORLD);
  CHECK(cls(rc) == MPI_ERR_ROOT, "reduce, different roots: class %d", cls(rc));

  rc = MPI_Allreduce(buf, out, 1, MPI_INT, g_rank == 0 ? MPI_SUM : MPI_MAX, MPI_COMM_WORLD);
  CHECK(cls(rc) == MPI_ERR_OP, "different ops: class %d", cls(rc));
  MPI_Op mine;
  MPI_Op_create(max_fn, 1, &mine);
  rc = MPI_Allreduce(buf, out, 1, MPI_INT, g_rank == 0 ? mine : MPI_MAX, MPI_COMM_WORLD);
  CHECK(cls(rc) == MPI_ERR_OP, "user op against predefined: class %d", cls(rc));

  rc = MPI_Bcast(buf, g_rank == 0 ? 4 : 3, MPI_INT, 0, MPI_COMM_WORLD);
  CHECK(cls(rc) == MPI_ERR_COUNT, "different counts: class %d", cls(rc));
  rc = MPI_Gather(buf, 3, MPI_INT, out, 2, MPI_INT, 0, MPI_COMM_WORLD);
  CHECK(cls(rc) == MPI_ERR_COUNT, "gather, root expects less: class %d", cls(rc));
  rc = MPI_Allgather(buf, 1, MPI_INT, out, g_rank == 0 ? 2 : 1, MPI_INT, MPI_COMM_WORLD);
  CHECK(cls(rc) == MPI_ERR_COUNT, "allgather, different counts: class %d", cls(rc));

  rc = g_rank == 0 ? MPI_Barrier(MPI_COMM_WORLD) : MPI_Bcast(buf, 1, MPI_INT, 0, MPI_COMM_WORLD);
  CHECK(cls(rc) == MPI_ERR_OTHER, "different collectives: class %d", cls(rc));
  rc = g_rank == 0 ? MPI_Allreduce(buf, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD)
                   : MPI_Reduce(buf, out, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  CHECK(cls(rc) == MPI_ERR_OTHER, "allreduce against reduce: class %d", cls(rc));

  /* Still usable, and equivalent type signatures pass: 1 x contiguous(2 ints) == 2 ints. */
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  if (g_rank == 0) buf[0] = 41, buf[1] = 42;
  rc = g_rank == 0 ? MPI_Bcast(buf, 1, pair, 0, MPI_COMM_WORLD) : MPI_Bcast(buf, 2, MPI_INT, 0, MPI_COMM_WORLD);
  CHECK(rc == MPI_SUCCESS && buf[0] == 41 && buf[1] == 42, "equivalent signatures: rc %d, %d %d", rc, buf[0], buf[1]);
  int v = g_rank + 1, sum = 0;
  rc = MPI_Allreduce(&v, &sum, 1, MPI_INT, mine, MPI_COMM_WORLD);
  CHECK(rc == MPI_SUCCESS && sum == g_size, "user op on every rank: rc %d, max %d", rc, sum);
  rc = MPI_Alltoall(buf, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD);
  CHECK(rc == MPI_SUCCESS, "alltoall, matching: rc %d", rc);
  rc = MPI_Reduce_scatter_block(out, buf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(rc == MPI_SUCCESS, "reduce_scatter_block, matching: rc %d", rc);
  MPI_Type_free(&pair);
  MPI_Op_free(&mine);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  return finish("coll_mismatch");
}
