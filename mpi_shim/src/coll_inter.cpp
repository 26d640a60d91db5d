// Collectives on intercommunicators (MPI-3.1 5.2.2), as MPICH builds them: each group works
// within itself on the intercommunicator's local intracommunicator, and the groups meet through
// their leaders (local rank 0 of each) or, for the gathers, scatters and all-to-alls, rank to
// rank. The cross-group messages use the intercommunicator's collective context, the local steps
// the local communicator's, with the same tag base, so nonblocking ones stay apart.
#include <utility>

#include "coll_task.h"

namespace augur::mpi {

namespace {

enum InterTag : int { kLeader = 11, kLinear = 12 };  // steps 1-10 are coll.cpp's

Coll local_of(const Coll& x) { return Coll{x.c->local, x.tb}; }

}  // namespace

CollTask inter_barrier(Coll x) {
  const Coll lx = local_of(x);
  const TypePtr b = type_ptr(MPI_BYTE);
  CollTask in = barrier_algo(lx);  // every member of this group has entered
  AUGUR_CO_TRY(co_await in);
  if (x.c->rank == 0) {  // ... and of the other group
    Xfer xf(x);
    xf.recv(nullptr, 0, b, 0, kLeader).send(nullptr, 0, b, 0, kLeader);
    AUGUR_CO_TRY(co_await xf);
  }
  CollTask out = bcast_algo(lx, nullptr, 0, b, 0);
  co_return co_await out;
}

CollTask inter_bcast(Coll x, void* buf, std::int64_t count, TypePtr t, int root) {
  if (root == MPI_PROC_NULL) co_return ok();
  if (root == MPI_ROOT) {
    Xfer xf(x);
    xf.send(buf, count, t, 0, kLeader);
    co_return co_await xf;
  }
  if (x.c->rank == 0) {
    Xfer xf(x);
    xf.recv(buf, count, t, root, kLeader);
    AUGUR_CO_TRY(co_await xf);
  }
  CollTask b = bcast_algo(local_of(x), buf, count, std::move(t), 0);
  co_return co_await b;
}

CollTask inter_reduce(Coll x, const void* sbuf, void* rbuf, std::int64_t count, MPI_Datatype th, MPI_Op op, int root) {
  if (root == MPI_PROC_NULL) co_return ok();
  const TypePtr t = type_ptr(th);
  if (root == MPI_ROOT) {
    Xfer xf(x);
    xf.recv(rbuf, count, t, 0, kLeader);
    co_return co_await xf;
  }
  TypedBuf acc(*t, x.c->rank == 0 ? count : 0);
  CollTask r = reduce_algo(local_of(x), sbuf, acc.ptr(), count, th, op, 0);
  AUGUR_CO_TRY(co_await r);
  if (x.c->rank != 0) co_return ok();
  Xfer xf(x);
  xf.send(acc.ptr(), count, t, root, kLeader);
  co_return co_await xf;
}

CollTask inter_allreduce(Coll x, const void* sbuf, void* rbuf, std::int64_t count, MPI_Datatype th, MPI_Op op) {
  const TypePtr t = type_ptr(th);
  const Coll lx = local_of(x);
  TypedBuf acc(*t, x.c->rank == 0 ? count : 0);
  CollTask r = reduce_algo(lx, sbuf, acc.ptr(), count, th, op, 0);
  AUGUR_CO_TRY(co_await r);
  if (x.c->rank == 0) {  // this group's result goes over, the other group's comes back
    Xfer xf(x);
    xf.recv(rbuf, count, t, 0, kLeader).send(acc.ptr(), count, t, 0, kLeader);
    AUGUR_CO_TRY(co_await xf);
  }
  CollTask b = bcast_algo(lx, rbuf, count, t, 0);
  co_return co_await b;
}

CollTask inter_gatherv(Coll x, const void* sbuf, std::int64_t scount, TypePtr st, void* rbuf, std::vector<int> counts,
                       std::vector<int> displs, TypePtr rt, int root) {
  if (root == MPI_PROC_NULL) co_return ok();
  Xfer xf(x);
  if (root != MPI_ROOT) {
    xf.send(sbuf, scount, st, root, kLinear);
    co_return co_await xf;
  }
  auto* base = static_cast<std::byte*>(rbuf);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    xf.recv(base + static_cast<std::int64_t>(displs[i]) * rt->extent, counts[i], rt, static_cast<int>(i), kLinear);
  }
  co_return co_await xf;
}

CollTask inter_scatterv(Coll x, const void* sbuf, std::vector<int> counts, std::vector<int> displs, TypePtr st, void* rbuf,
                        std::int64_t rcount, TypePtr rt, int root) {
  if (root == MPI_PROC_NULL) co_return ok();
  Xfer xf(x);
  if (root != MPI_ROOT) {
    xf.recv(rbuf, rcount, rt, root, kLinear);
    co_return co_await xf;
  }
  const auto* base = static_cast<const std::byte*>(sbuf);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    xf.send(base + static_cast<std::int64_t>(displs[i]) * st->extent, counts[i], st, static_cast<int>(i), kLinear);
  }
  co_return co_await xf;
}

// Every receive and every send posted at once: block i to and from remote rank i.
CollTask inter_alltoallw(Coll x, std::vector<Block> sends, std::vector<Block> recvs) {
  Xfer xf(x);
  for (std::size_t i = 0; i < recvs.size(); ++i) xf.recv(recvs[i].p, recvs[i].count, recvs[i].t, static_cast<int>(i), kLinear);
  for (std::size_t i = 0; i < sends.size(); ++i) xf.send(sends[i].p, sends[i].count, sends[i].t, static_cast<int>(i), kLinear);
  co_return co_await xf;
}

CollTask inter_reduce_scatter(Coll x, const void* sbuf, void* rbuf, std::vector<int> counts, MPI_Datatype th, MPI_Op op) {
  const TypePtr t = type_ptr(th);
  const Coll lx = local_of(x);
  std::int64_t total = 0;
  std::vector<int> displs(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) {
    displs[i] = static_cast<int>(total);
    total += counts[i];
  }
  const bool leader = x.c->rank == 0;
  TypedBuf mine(*t, leader ? total : 0), theirs(*t, leader ? total : 0);
  CollTask r = reduce_algo(lx, sbuf, mine.ptr(), total, th, op, 0);
  AUGUR_CO_TRY(co_await r);
  if (leader) {
    Xfer xf(x);
    xf.recv(theirs.ptr(), total, t, 0, kLeader).send(mine.ptr(), total, t, 0, kLeader);
    AUGUR_CO_TRY(co_await xf);
  }
  const std::int64_t my_count = counts[static_cast<std::size_t>(x.c->rank)];
  CollTask s = scatterv_algo(lx, theirs.ptr(), std::move(counts), std::move(displs), t, rbuf, my_count, t, 0);
  co_return co_await s;
}

}  // namespace augur::mpi
