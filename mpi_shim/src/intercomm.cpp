// Intercommunicators (MPI-3.1 6.6): two disjoint groups joined by MPI_Intercomm_create, and what
// is built from them (merge, dup, split, create). A Comm that is one keeps its local group as
// usual plus the remote group's world ranks (point-to-point addresses those) and a private
// intracommunicator over the local group for the collectives' local steps (coll_inter.cpp).
//
// Ids: the new communicator takes id and the local one id + 1, where id is the largest next free
// id of every member of both groups, so both are unused by every member (pair_agree).
#include <algorithm>
#include <string>

#include "coll_task.h"
#include "shim.h"

namespace augur::mpi {

CommPtr make_inter(std::uint32_t id, std::vector<int> local, std::vector<int> remote) {
  const int me = S().world_rank;
  auto c = make_comm(id, local, me);
  c->local = make_comm(id + 1, std::move(local), me);
  c->remote_rank_of.assign(static_cast<std::size_t>(S().world_size), -1);
  for (std::size_t i = 0; i < remote.size(); ++i) c->remote_rank_of[static_cast<std::size_t>(remote[i])] = static_cast<int>(i);
  c->remote = std::move(remote);
  return c;
}

namespace {

// MPI_Intercomm_create's leaders meet on the peer communicator's collective context with the
// program's tag added to this, above every tag the collectives use (nonblocking ones reach
// 2^30 + 63).
constexpr int kCreateTag = (1 << 30) + 1024;

// The leaders swap int vectors over `link`: the lengths, then the ints.
CollTask swap_ints(Coll link, int peer, int tag, std::vector<int> mine, std::vector<int>* theirs) {
  const TypePtr t = type_ptr(MPI_INT);
  const int n = static_cast<int>(mine.size());
  int m = 0;
  {
    Xfer xf(link);
    xf.recv(&m, 1, t, peer, tag).send(&n, 1, t, peer, tag);
    AUGUR_CO_TRY(co_await xf);
  }
  theirs->resize(static_cast<std::size_t>(m));
  Xfer xf(link);
  xf.recv(theirs->data(), m, t, peer, tag).send(mine.data(), n, t, peer, tag);
  co_return co_await xf;
}

// Broadcasts an int vector of unknown length from `root` over `group`.
CollTask bcast_ints(Coll group, int root, std::vector<int>* v) {
  const TypePtr t = type_ptr(MPI_INT);
  int n = static_cast<int>(v->size());
  CollTask len = bcast_algo(group, &n, 1, t, root);
  AUGUR_CO_TRY(co_await len);
  v->resize(static_cast<std::size_t>(n));
  CollTask data = bcast_algo(group, v->data(), n, t, root);
  co_return co_await data;
}

// Blocking agreement over both groups of intercommunicator `c` (the step tag of MPI_Comm_idup's,
// on the blocking tag base).
Err agree(const CommPtr& c, const std::vector<int>& payload, std::uint32_t* id, std::vector<int>* theirs) {
  AUGUR_ERR_RETURN(settle_idups());
  AUGUR_ERR_RETURN(run_blocking(pair_agree({Coll{c->local}, 0, Coll{c}, 0, kPairTag}, payload, id, theirs)));
  S().next_comm_id = std::max(S().next_comm_id, *id + 2);
  return ok();
}

// Members of `world` (ranks in order) whose (color, key) pair in `ck` has `color`, by key.
std::vector<int> members_of(const std::vector<int>& world, const std::vector<int>& ck, int color) {
  std::vector<int> idx;
  for (std::size_t r = 0; r < world.size(); ++r) {
    if (ck[2 * r] == color) idx.push_back(static_cast<int>(r));
  }
  std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) {
    return ck[2 * static_cast<std::size_t>(a) + 1] < ck[2 * static_cast<std::size_t>(b) + 1];
  });
  std::vector<int> out;
  for (int r : idx) out.push_back(world[static_cast<std::size_t>(r)]);
  return out;
}

MPI_Comm add_inter(std::uint32_t id, std::vector<int> local, std::vector<int> remote, const Comm& parent) {
  const int me = S().world_rank;
  if (remote.empty() || std::find(local.begin(), local.end(), me) == local.end()) return MPI_COMM_NULL;
  auto c = make_inter(id, std::move(local), std::move(remote));
  c->eh = parent.eh;
  return new_comm(std::move(c));
}

Err check_inter(MPI_Comm comm) {
  AUGUR_ERR_RETURN(check_running());
  AUGUR_ERR_RETURN(check_comm(comm));
  if (!comm_of(comm)->inter()) return err(MPI_ERR_COMM, "not an intercommunicator");
  return ok();
}

Err intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                     MPI_Comm* newintercomm) {
  AUGUR_ERR_RETURN(check_running());
  AUGUR_ERR_RETURN(check_comm(local_comm));
  if (newintercomm == nullptr) return err(MPI_ERR_ARG, "null newintercomm");
  const CommPtr lc = comm_ptr(local_comm);
  if (lc->inter()) return err(MPI_ERR_COMM, "the local communicator is an intercommunicator");
  if (local_leader < 0 || local_leader >= lc->size) {
    return err(MPI_ERR_RANK, "invalid local leader " + std::to_string(local_leader) + " (communicator size " +
                                 std::to_string(lc->size) + ")");
  }
  if (tag < 0 || tag > kTagUb) return err(MPI_ERR_TAG, "invalid tag " + std::to_string(tag));
  AUGUR_ERR_RETURN(settle_idups());
  CommPtr pc;  // peer_comm and remote_leader are significant at the local leader only
  if (lc->rank == local_leader) {
    AUGUR_ERR_RETURN(check_comm(peer_comm));
    pc = comm_ptr(peer_comm);
    if (remote_leader < 0 || remote_leader >= pc->peer_size()) {
      return err(MPI_ERR_RANK, "invalid remote leader " + std::to_string(remote_leader) + " in the peer communicator");
    }
    if (lc->rank_of[static_cast<std::size_t>(pc->peer_world(remote_leader))] >= 0) {
      return err(MPI_ERR_COMM, "the remote leader is in the local group: the groups must be disjoint");
    }
  }
  std::uint32_t id = 0;
  std::vector<int> remote;  // the other group's world ranks
  const Pairing pairing{Coll{lc}, local_leader, Coll{pc}, remote_leader, kCreateTag + tag % (1 << 29)};
  AUGUR_ERR_RETURN(run_blocking(pair_agree(pairing, lc->world, &id, &remote)));
  if (remote.empty()) return err(MPI_ERR_INTERN, "the remote leader sent no group");
  S().next_comm_id = std::max(S().next_comm_id, id + 2);
  auto c = make_inter(id, lc->world, std::move(remote));
  c->eh = lc->eh;
  *newintercomm = new_comm(std::move(c));
  return ok();
}

Err intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  AUGUR_ERR_RETURN(check_inter(intercomm));
  if (newintracomm == nullptr) return err(MPI_ERR_ARG, "null newintracomm");
  const CommPtr c = comm_ptr(intercomm);
  // The leader's `high` speaks for its group (MPI-3.1: every member passes the same).
  std::uint32_t id = 0;
  std::vector<int> theirs;
  AUGUR_ERR_RETURN(agree(c, {high != 0 ? 1 : 0}, &id, &theirs));
  const int their_high = theirs.empty() ? 0 : theirs[0];
  const int my_high = high != 0 ? 1 : 0;
  // The low group first; with equal flags, the group whose leader has the lower world rank.
  const bool first = my_high != their_high ? my_high < their_high : c->world[0] < c->remote[0];
  std::vector<int> world = first ? c->world : c->remote;
  const std::vector<int>& second = first ? c->remote : c->world;
  world.insert(world.end(), second.begin(), second.end());
  auto m = make_comm(id, std::move(world), S().world_rank);
  m->eh = c->eh;
  *newintracomm = new_comm(std::move(m));
  return ok();
}

}  // namespace

CollTask pair_agree(Pairing p, std::vector<int> payload, std::uint32_t* id, std::vector<int>* theirs) {
  std::uint32_t mine = S().next_comm_id, m = 0;
  CollTask r = allreduce_algo(p.group, &mine, &m, 1, MPI_UNSIGNED, MPI_MAX);
  AUGUR_CO_TRY(co_await r);
  std::vector<int> got;
  if (p.group.c->rank == p.leader) {
    payload.insert(payload.begin(), static_cast<int>(m));
    CollTask s = swap_ints(p.link, p.peer, p.tag, std::move(payload), &got);
    AUGUR_CO_TRY(co_await s);
    if (got.empty()) co_return err(MPI_ERR_INTERN, "the other group's leader sent nothing");
    got[0] = static_cast<int>(std::max(m, static_cast<std::uint32_t>(got[0])));
  }
  CollTask b = bcast_ints(p.group, p.leader, &got);
  AUGUR_CO_TRY(co_await b);
  *id = static_cast<std::uint32_t>(got[0]);
  theirs->assign(got.begin() + 1, got.end());
  co_return ok();
}

Err inter_dup(const CommPtr& c, CommPtr* out) {
  std::uint32_t id = 0;
  std::vector<int> theirs;
  AUGUR_ERR_RETURN(agree(c, {}, &id, &theirs));
  *out = make_inter(id, c->world, c->remote);
  return ok();
}

Err inter_split(const CommPtr& c, int color, int key, MPI_Comm* newcomm) {
  std::vector<int> ck(2 * static_cast<std::size_t>(c->size));
  const int mine[2] = {color, key};
  AUGUR_ERR_RETURN(allgather_impl(mine, 2, type_ptr(MPI_INT), ck.data(), 2, type_ptr(MPI_INT), c->local));
  std::uint32_t id = 0;
  std::vector<int> theirs;
  AUGUR_ERR_RETURN(agree(c, ck, &id, &theirs));
  if (theirs.size() != 2 * c->remote.size()) return err(MPI_ERR_INTERN, "the other group's colours do not match its size");
  if (color == MPI_UNDEFINED) {
    *newcomm = MPI_COMM_NULL;
    return ok();
  }
  *newcomm = add_inter(id, members_of(c->world, ck, color), members_of(c->remote, theirs, color), *c);
  return ok();
}

Err inter_create(const CommPtr& c, const Group& g, MPI_Comm* newcomm) {
  std::uint32_t id = 0;
  std::vector<int> theirs;
  AUGUR_ERR_RETURN(agree(c, g.world, &id, &theirs));
  for (int w : theirs) {
    if (w < 0 || w >= S().world_size || c->remote_rank_of[static_cast<std::size_t>(w)] < 0) {
      return err(MPI_ERR_GROUP, "the other group's group is not a subset of its side");
    }
  }
  *newcomm = add_inter(id, g.world, std::move(theirs), *c);
  return ok();
}

}  // namespace augur::mpi

using namespace augur::mpi;

AUGUR_MPI_FN(int, Intercomm_create,
             (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag, MPI_Comm* newintercomm),
             (local_comm, local_leader, peer_comm, remote_leader, tag, newintercomm)) {
  AUGUR_MPI_CHECK(local_comm, "MPI_Intercomm_create",
                  intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag, newintercomm));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm* newintracomm), (intercomm, high, newintracomm)) {
  AUGUR_MPI_CHECK(intercomm, "MPI_Intercomm_merge", intercomm_merge(intercomm, high, newintracomm));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Comm_test_inter, (MPI_Comm comm, int* flag), (comm, flag)) {
  AUGUR_MPI_CHECK(comm, "MPI_Comm_test_inter", check_running());
  AUGUR_MPI_CHECK(comm, "MPI_Comm_test_inter", check_comm(comm));
  if (flag == nullptr) return raise(comm, "MPI_Comm_test_inter", err(MPI_ERR_ARG, "null argument"));
  *flag = comm_of(comm)->inter() ? 1 : 0;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Comm_remote_size, (MPI_Comm comm, int* size), (comm, size)) {
  AUGUR_MPI_CHECK(comm, "MPI_Comm_remote_size", check_inter(comm));
  if (size == nullptr) return raise(comm, "MPI_Comm_remote_size", err(MPI_ERR_ARG, "null argument"));
  *size = static_cast<int>(comm_of(comm)->remote.size());
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Comm_remote_group, (MPI_Comm comm, MPI_Group* group), (comm, group)) {
  AUGUR_MPI_CHECK(comm, "MPI_Comm_remote_group", check_inter(comm));
  if (group == nullptr) return raise(comm, "MPI_Comm_remote_group", err(MPI_ERR_ARG, "null argument"));
  auto g = std::make_shared<Group>();
  g->world = comm_of(comm)->remote;
  *group = new_group(std::move(g));
  return MPI_SUCCESS;
}
