/* Blocking collectives as their nonblocking twins (MPI_Ixxx, then completion), so that a suite
 * written for the blocking calls checks the nonblocking ones against the same references.
 * Completion alternates between MPI_Wait and polling with MPI_Test, which exercises both ways
 * a program finishes a nonblocking collective. */
#ifndef AUGUR_NBC_WRAP_H
#define AUGUR_NBC_WRAP_H
#include <mpi.h>

static int nbc_calls;

static int nbc_complete(int rc, MPI_Request* r) {
  if (rc != MPI_SUCCESS) return rc;
  if (++nbc_calls % 2) return MPI_Wait(r, MPI_STATUS_IGNORE);
  int flag = 0;
  while (!flag) {
    rc = MPI_Test(r, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return rc;
  }
  return *r == MPI_REQUEST_NULL ? MPI_SUCCESS : MPI_ERR_REQUEST;
}

#define NBC(call, ...) \
  (__extension__({ MPI_Request nbc_r_ = MPI_REQUEST_NULL; nbc_complete(call(__VA_ARGS__, &nbc_r_), &nbc_r_); }))

#define MPI_Barrier(...) NBC(MPI_Ibarrier, __VA_ARGS__)
#define MPI_Bcast(...) NBC(MPI_Ibcast, __VA_ARGS__)
#define MPI_Reduce(...) NBC(MPI_Ireduce, __VA_ARGS__)
#define MPI_Allreduce(...) NBC(MPI_Iallreduce, __VA_ARGS__)
#define MPI_Gather(...) NBC(MPI_Igather, __VA_ARGS__)
#define MPI_Gatherv(...) NBC(MPI_Igatherv, __VA_ARGS__)
#define MPI_Scatter(...) NBC(MPI_Iscatter, __VA_ARGS__)
#define MPI_Scatterv(...) NBC(MPI_Iscatterv, __VA_ARGS__)
#define MPI_Allgather(...) NBC(MPI_Iallgather, __VA_ARGS__)
#define MPI_Allgatherv(...) NBC(MPI_Iallgatherv, __VA_ARGS__)
#define MPI_Alltoall(...) NBC(MPI_Ialltoall, __VA_ARGS__)
#define MPI_Alltoallv(...) NBC(MPI_Ialltoallv, __VA_ARGS__)
#define MPI_Alltoallw(...) NBC(MPI_Ialltoallw, __VA_ARGS__)
#define MPI_Reduce_scatter(...) NBC(MPI_Ireduce_scatter, __VA_ARGS__)
#define MPI_Reduce_scatter_block(...) NBC(MPI_Ireduce_scatter_block, __VA_ARGS__)
#define MPI_Scan(...) NBC(MPI_Iscan, __VA_ARGS__)
#define MPI_Exscan(...) NBC(MPI_Iexscan, __VA_ARGS__)
#endif
