// Communicators, groups and cartesian topologies. A communicator is a list of world ranks and
// an id; its point-to-point and collective traffic use engine contexts 2*id and 2*id+1. Ids are
// agreed with an allreduce(MAX) of every member's next free id, so an id is never reused by a
// process and both ends of every message agree on it.
#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>

#include "coll_task.h"
#include "shim.h"

namespace augur::mpi {

CommPtr make_comm(std::uint32_t id, std::vector<int> world_ranks, int my_world) {
  auto c = std::make_shared<Comm>();
  c->id = id;
  c->world = std::move(world_ranks);
  c->size = static_cast<int>(c->world.size());
  c->rank_of.assign(static_cast<std::size_t>(S().world_size), -1);
  for (int i = 0; i < c->size; ++i) c->rank_of[static_cast<std::size_t>(c->world[static_cast<std::size_t>(i)])] = i;
  c->rank = c->rank_of[static_cast<std::size_t>(my_world)];
  return c;
}

Err settle_idups() {
  return wait_until([] { return S().idups_done == S().idups_issued; });
}

Result<std::uint32_t> agree_comm_id(const CommPtr& parent) {
  if (Err e = settle_idups(); !e.ok()) return Status(Code::kInternal, e.msg);
  std::uint32_t mine = S().next_comm_id, id = 0;
  Err e = allreduce_impl(&mine, &id, 1, MPI_UNSIGNED, MPI_MAX, parent);
  if (!e.ok()) return Status(Code::kInternal, e.msg);
  S().next_comm_id = id + 1;
  return id;
}

}  // namespace augur::mpi

using namespace augur::mpi;

namespace {

// Creates the communicator, unless this process is not in `world_ranks`.
MPI_Comm add_comm(std::uint32_t id, std::vector<int> world_ranks, const Comm& parent) {
  const int me = S().world_rank;
  if (std::find(world_ranks.begin(), world_ranks.end(), me) == world_ranks.end()) return MPI_COMM_NULL;
  auto c = make_comm(id, std::move(world_ranks), me);
  c->eh = parent.eh;
  return new_comm(std::move(c));
}

Err agree(const CommPtr& parent, std::uint32_t* id) {
  auto r = agree_comm_id(parent);
  if (!r.ok()) return err(MPI_ERR_INTERN, r.status().message());
  *id = r.value();
  return ok();
}

// A group of members of `c` (MPI_Comm_create, MPI_Comm_create_group).
Err check_subgroup(const Comm& c, const Group* g) {
  if (g == nullptr) return err(MPI_ERR_GROUP, "invalid group");
  for (int w : g->world) {
    if (c.rank_of[static_cast<std::size_t>(w)] < 0) return err(MPI_ERR_GROUP, "group is not a subset of the communicator");
  }
  return ok();
}

Err check_running_comm(MPI_Comm comm) {
  AUGUR_ERR_RETURN(check_running());
  return check_comm(comm);
}

// Topologies and MPI_Comm_create_group/_split_type are for intracommunicators only.
Err check_intra(const Comm& c) {
  if (c.inter()) return err(MPI_ERR_COMM, "an intercommunicator where an intracommunicator is required");
  return ok();
}

Err split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  AUGUR_ERR_RETURN(check_running_comm(comm));
  if (newcomm == nullptr) return err(MPI_ERR_ARG, "null newcomm");
  if (color < 0 && color != MPI_UNDEFINED) return err(MPI_ERR_ARG, "negative color " + std::to_string(color));
  CommPtr c = comm_ptr(comm);
  if (c->inter()) return inter_split(c, color, key, newcomm);
  std::vector<int> all(static_cast<std::size_t>(2 * c->size));
  const int mine[2] = {color, key};
  AUGUR_ERR_RETURN(allgather_impl(mine, 2, type_ptr(MPI_INT), all.data(), 2, type_ptr(MPI_INT), c));
  std::uint32_t id = 0;
  AUGUR_ERR_RETURN(agree(c, &id));
  if (color == MPI_UNDEFINED) {
    *newcomm = MPI_COMM_NULL;
    return ok();
  }
  std::vector<int> members;
  for (int r = 0; r < c->size; ++r) {
    if (all[static_cast<std::size_t>(2 * r)] == color) members.push_back(r);
  }
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
    return all[static_cast<std::size_t>(2 * a + 1)] < all[static_cast<std::size_t>(2 * b + 1)];
  });
  std::vector<int> world;
  for (int r : members) world.push_back(c->world[static_cast<std::size_t>(r)]);
  *newcomm = add_comm(id, std::move(world), *c);
  return ok();
}

}  // namespace

AUGUR_MPI_FN(int, Comm_size, (MPI_Comm comm, int* size), (comm, size)) {
  AUGUR_MPI_CHECK(comm, "MPI_Comm_size", check_running_comm(comm));
  if (size == nullptr) return raise(comm, "MPI_Comm_size", err(MPI_ERR_ARG, "null argument"));
  *size = comm_of(comm)->size;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Comm_rank, (MPI_Comm comm, int* rank), (comm, rank)) {
  AUGUR_MPI_CHECK(comm, "MPI_Comm_rank", check_running_comm(comm));
  if (rank == nullptr) return raise(comm, "MPI_Comm_rank", err(MPI_ERR_ARG, "null argument"));
  *rank = comm_of(comm)->rank;
  return MPI_SUCCESS;
}

namespace {

// What MPI_Comm_dup copies besides the groups and the attributes: handler, topology, hints.
void copy_properties(const Comm& c, Comm* d) {
  d->eh = c.eh;
  d->cart = c.cart;
  d->dims = c.dims;
  d->periods = c.periods;
  d->graph = c.graph;
  d->dist_graph = c.dist_graph;
  d->weighted = c.weighted;
  d->index = c.index;
  d->edges = c.edges;
  d->sources = c.sources;
  d->source_weights = c.source_weights;
  d->destinations = c.destinations;
  d->dest_weights = c.dest_weights;
  d->hints = c.hints;
}

// An MPI_Comm_idup's communicator until its id is agreed: contexts no message uses (using it
// before the request completes is erroneous).
constexpr std::uint32_t kPendingId = 0x7ffffff0;

bool idups_done_up_to(std::uint64_t ticket) { return S().idups_done == ticket; }

// The id agreement of MPI_Comm_dup as a nonblocking collective. Idups of this process agree one
// after another (the Gate), and blocking agreements wait for all of them (settle_idups): two
// agreements in flight at once could otherwise hand one process the same id twice.
CollTask idup_task(Coll x, CommPtr d, std::uint64_t ticket) {
  co_await Gate(&idups_done_up_to, ticket);
  const Comm& c = *x.c;
  Err e;
  std::uint32_t id = 0;
  if (!c.inter()) {
    std::uint32_t mine = S().next_comm_id;
    CollTask r = allreduce_algo(x, &mine, &id, 1, MPI_UNSIGNED, MPI_MAX);
    e = co_await r;
  } else {
    std::vector<int> none;
    CollTask a = pair_agree({Coll{c.local, x.tb}, 0, x, 0, kPairTag}, {}, &id, &none);
    e = co_await a;
  }
  if (e.ok()) {
    d->id = id;
    if (d->local) d->local->id = id + 1;
    S().next_comm_id = std::max(S().next_comm_id, id + (d->local ? 2 : 1));
  }
  ++S().idups_done;  // the next idup goes on, after an error here too
  co_return e;
}

}  // namespace

AUGUR_MPI_FN(int, Comm_dup, (MPI_Comm comm, MPI_Comm* newcomm), (comm, newcomm)) {
  AUGUR_MPI_CHECK(comm, "MPI_Comm_dup", check_running_comm(comm));
  if (newcomm == nullptr) return raise(comm, "MPI_Comm_dup", err(MPI_ERR_ARG, "null newcomm"));
  CommPtr c = comm_ptr(comm);
  CommPtr d;
  if (c->inter()) {
    AUGUR_MPI_CHECK(comm, "MPI_Comm_dup", inter_dup(c, &d));
  } else {
    std::uint32_t id = 0;
    AUGUR_MPI_CHECK(comm, "MPI_Comm_dup", agree(c, &id));
    d = make_comm(id, c->world, S().world_rank);
  }
  copy_properties(*c, d.get());
  AUGUR_MPI_CHECK(comm, "MPI_Comm_dup", copy_attrs(Keyval::Kind::kComm, comm, c->attrs, &d->attrs));
  *newcomm = new_comm(std::move(d));
  return MPI_SUCCESS;
}

// The new handle is valid at once; the communicator may be used once the request completes.
AUGUR_MPI_FN(int, Comm_idup, (MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request), (comm, newcomm, request)) {
  const char* fn = "MPI_Comm_idup";
  AUGUR_MPI_CHECK(comm, fn, check_running_comm(comm));
  if (newcomm == nullptr || request == nullptr) return raise(comm, fn, err(MPI_ERR_ARG, "null newcomm or request"));
  CommPtr c = comm_ptr(comm);
  CommPtr d = c->inter() ? make_inter(kPendingId, c->world, c->remote) : make_comm(kPendingId, c->world, S().world_rank);
  copy_properties(*c, d.get());
  AUGUR_MPI_CHECK(comm, fn, copy_attrs(Keyval::Kind::kComm, comm, c->attrs, &d->attrs));
  *newcomm = new_comm(d);
  const Coll x{c, next_tag_base(*c)};
  const std::uint64_t ticket = S().idups_issued++;
  AUGUR_MPI_CHECK(comm, fn, start_collective(x, idup_task(x, std::move(d), ticket), request));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm* newcomm), (comm, color, key, newcomm)) {
  AUGUR_MPI_CHECK(comm, "MPI_Comm_split", split(comm, color, key, newcomm));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm), (comm, group, newcomm)) {
  const char* fn = "MPI_Comm_create";
  AUGUR_MPI_CHECK(comm, fn, check_running_comm(comm));
  if (newcomm == nullptr) return raise(comm, fn, err(MPI_ERR_ARG, "null newcomm"));
  const Group* g = group_of(group);
  CommPtr c = comm_ptr(comm);
  AUGUR_MPI_CHECK(comm, fn, check_subgroup(*c, g));
  if (c->inter()) {  // g is part of the local group; the other group names its own part
    AUGUR_MPI_CHECK(comm, fn, inter_create(c, *g, newcomm));
    return MPI_SUCCESS;
  }
  std::uint32_t id = 0;
  AUGUR_MPI_CHECK(comm, fn, agree(c, &id));
  *newcomm = add_comm(id, g->world, *c);
  return MPI_SUCCESS;
}

// Collective over the group's members only (MPI-3.1 6.4.2): they agree on the new id among
// themselves, through a temporary communicator of theirs whose contexts are set aside for
// (parent, tag) above every id ever handed out. Agreeing among the members alone is enough: an
// id must differ only between communicators that share a member, and every member's next free
// id moves past the one agreed.
AUGUR_MPI_FN(int, Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm),
             (comm, group, tag, newcomm)) {
  const char* fn = "MPI_Comm_create_group";
  AUGUR_MPI_CHECK(comm, fn, check_running_comm(comm));
  if (newcomm == nullptr) return raise(comm, fn, err(MPI_ERR_ARG, "null newcomm"));
  if (tag < 0) return raise(comm, fn, err(MPI_ERR_TAG, "negative tag " + std::to_string(tag)));
  const Group* g = group_of(group);
  CommPtr c = comm_ptr(comm);
  AUGUR_MPI_CHECK(comm, fn, check_intra(*c));
  AUGUR_MPI_CHECK(comm, fn, check_subgroup(*c, g));
  const int me = S().world_rank;
  if (std::find(g->world.begin(), g->world.end(), me) == g->world.end()) {
    if (!g->world.empty()) return raise(comm, fn, err(MPI_ERR_GROUP, "the calling process is not in the group"));
    *newcomm = MPI_COMM_NULL;  // MPI_GROUP_EMPTY
    return MPI_SUCCESS;
  }
  constexpr std::uint32_t kTempBase = 1u << 30;  // ids are handed out from 2 upwards, never this far
  const std::uint32_t temp_id = kTempBase + (c->id % (1u << 19)) * 1024u + static_cast<std::uint32_t>(tag % 1024);
  CommPtr temp = make_comm(temp_id, g->world, me);
  std::uint32_t id = 0;
  AUGUR_MPI_CHECK(comm, fn, agree(temp, &id));
  *newcomm = add_comm(id, g->world, *c);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Comm_free, (MPI_Comm * comm), (comm)) {
  if (comm == nullptr) return raise(MPI_COMM_WORLD, "MPI_Comm_free", err(MPI_ERR_ARG, "null argument"));
  AUGUR_MPI_CHECK(*comm, "MPI_Comm_free", check_running_comm(*comm));
  if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF) {
    return raise(*comm, "MPI_Comm_free", err(MPI_ERR_COMM, "cannot free a predefined communicator"));
  }
  AUGUR_MPI_CHECK(*comm, "MPI_Comm_free", delete_attrs(Keyval::Kind::kComm, *comm, &comm_of(*comm)->attrs));
  free_comm_handle(*comm);  // pending requests keep their own reference
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

namespace {
int compare_lists(const std::vector<int>& a, const std::vector<int>& b, int same) {
  if (a == b) return same;
  auto sa = a, sb = b;
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  return sa == sb ? MPI_SIMILAR : MPI_UNEQUAL;
}
}  // namespace

AUGUR_MPI_FN(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int* result), (comm1, comm2, result)) {
  AUGUR_MPI_CHECK(comm1, "MPI_Comm_compare", check_running_comm(comm1));
  AUGUR_MPI_CHECK(comm2, "MPI_Comm_compare", check_comm(comm2));
  if (result == nullptr) return raise(comm1, "MPI_Comm_compare", err(MPI_ERR_ARG, "null argument"));
  const Comm& a = *comm_of(comm1);
  const Comm& b = *comm_of(comm2);
  if (comm1 == comm2) {
    *result = MPI_IDENT;
  } else if (a.inter() != b.inter()) {
    *result = MPI_UNEQUAL;
  } else {  // intercommunicators: the weaker of the two groups' results (MPI_CONGRUENT < MPI_SIMILAR < MPI_UNEQUAL)
    *result = compare_lists(a.world, b.world, MPI_CONGRUENT);
    if (a.inter()) *result = std::max(*result, compare_lists(a.remote, b.remote, MPI_CONGRUENT));
  }
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Comm_group, (MPI_Comm comm, MPI_Group* group), (comm, group)) {
  AUGUR_MPI_CHECK(comm, "MPI_Comm_group", check_running_comm(comm));
  if (group == nullptr) return raise(comm, "MPI_Comm_group", err(MPI_ERR_ARG, "null argument"));
  auto g = std::make_shared<Group>();
  g->world = comm_of(comm)->world;
  *group = new_group(std::move(g));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Comm_set_name, (MPI_Comm comm, const char* name), (comm, name)) {
  AUGUR_MPI_CHECK(comm, "MPI_Comm_set_name", check_running_comm(comm));
  if (name == nullptr) return raise(comm, "MPI_Comm_set_name", err(MPI_ERR_ARG, "null argument"));
  comm_of(comm)->name.assign(name, strnlen(name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Comm_get_name, (MPI_Comm comm, char* name, int* resultlen), (comm, name, resultlen)) {
  AUGUR_MPI_CHECK(comm, "MPI_Comm_get_name", check_running_comm(comm));
  if (name == nullptr || resultlen == nullptr) return raise(comm, "MPI_Comm_get_name", err(MPI_ERR_ARG, "null argument"));
  const std::string& n = comm_of(comm)->name;
  std::memcpy(name, n.c_str(), n.size() + 1);
  *resultlen = static_cast<int>(n.size());
  return MPI_SUCCESS;
}

// --- groups ----------------------------------------------------------------------------------

namespace {
Err check_group(MPI_Group g) {
  AUGUR_ERR_RETURN(check_running());
  if (group_of(g) == nullptr) return err(MPI_ERR_GROUP, "invalid group handle " + std::to_string(g));
  return ok();
}

int new_group_of(std::vector<int> world) {
  auto g = std::make_shared<Group>();
  g->world = std::move(world);
  return new_group(std::move(g));
}

Err check_rank_list(const Group& g, int n, const int ranks[]) {
  if (n < 0 || n > static_cast<int>(g.world.size())) return err(MPI_ERR_ARG, "bad rank count " + std::to_string(n));
  if (n > 0 && ranks == nullptr) return err(MPI_ERR_ARG, "null rank array");
  std::vector<bool> seen(g.world.size());
  for (int i = 0; i < n; ++i) {
    if (ranks[i] < 0 || ranks[i] >= static_cast<int>(g.world.size())) {
      return err(MPI_ERR_RANK, "rank " + std::to_string(ranks[i]) + " not in the group");
    }
    if (seen[static_cast<std::size_t>(ranks[i])]) return err(MPI_ERR_RANK, "rank " + std::to_string(ranks[i]) + " twice");
    seen[static_cast<std::size_t>(ranks[i])] = true;
  }
  return ok();
}
}  // namespace

AUGUR_MPI_FN(int, Group_size, (MPI_Group group, int* size), (group, size)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Group_size", check_group(group));
  if (size == nullptr) return raise(MPI_COMM_WORLD, "MPI_Group_size", err(MPI_ERR_ARG, "null argument"));
  *size = static_cast<int>(group_of(group)->world.size());
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Group_rank, (MPI_Group group, int* rank), (group, rank)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Group_rank", check_group(group));
  if (rank == nullptr) return raise(MPI_COMM_WORLD, "MPI_Group_rank", err(MPI_ERR_ARG, "null argument"));
  *rank = group_of(group)->rank_of_world(S().world_rank);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Group_incl, (MPI_Group group, int n, const int ranks[], MPI_Group* newgroup),
             (group, n, ranks, newgroup)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Group_incl", check_group(group));
  const Group& g = *group_of(group);
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Group_incl", check_rank_list(g, n, ranks));
  if (newgroup == nullptr) return raise(MPI_COMM_WORLD, "MPI_Group_incl", err(MPI_ERR_ARG, "null argument"));
  std::vector<int> w;
  for (int i = 0; i < n; ++i) w.push_back(g.world[static_cast<std::size_t>(ranks[i])]);
  *newgroup = new_group_of(std::move(w));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Group_excl, (MPI_Group group, int n, const int ranks[], MPI_Group* newgroup),
             (group, n, ranks, newgroup)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Group_excl", check_group(group));
  const Group& g = *group_of(group);
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Group_excl", check_rank_list(g, n, ranks));
  if (newgroup == nullptr) return raise(MPI_COMM_WORLD, "MPI_Group_excl", err(MPI_ERR_ARG, "null argument"));
  std::vector<bool> drop(g.world.size());
  for (int i = 0; i < n; ++i) drop[static_cast<std::size_t>(ranks[i])] = true;
  std::vector<int> w;
  for (std::size_t i = 0; i < g.world.size(); ++i) {
    if (!drop[i]) w.push_back(g.world[i]);
  }
  *newgroup = new_group_of(std::move(w));
  return MPI_SUCCESS;
}

namespace {
// The ranks of MPI_Group_range_incl/excl's (first, last, stride) triples, in order.
Err expand_ranges(MPI_Group group, int n, int ranges[][3], std::vector<int>* out) {
  AUGUR_ERR_RETURN(check_group(group));
  if (n < 0 || (n > 0 && ranges == nullptr)) return err(MPI_ERR_ARG, "bad range count or null ranges");
  const int size = static_cast<int>(group_of(group)->world.size());
  for (int i = 0; i < n; ++i) {
    const int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    if (stride == 0) return err(MPI_ERR_ARG, "range " + std::to_string(i) + " has stride 0");
    if (first < 0 || first >= size || last < 0 || last >= size) {
      return err(MPI_ERR_RANK, "range " + std::to_string(i) + " passes the group's " + std::to_string(size) + " ranks");
    }
    if ((stride > 0 && first > last) || (stride < 0 && first < last)) continue;  // empty (MPI-3.1 6.3.2: erroneous? no: empty)
    for (int r = first; stride > 0 ? r <= last : r >= last; r += stride) out->push_back(r);
  }
  return ok();
}
}  // namespace

AUGUR_MPI_FN(int, Group_range_incl, (MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup),
             (group, n, ranges, newgroup)) {
  std::vector<int> ranks;
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Group_range_incl", expand_ranges(group, n, ranges, &ranks));
  return PMPI_Group_incl(group, static_cast<int>(ranks.size()), ranks.data(), newgroup);
}

AUGUR_MPI_FN(int, Group_range_excl, (MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup),
             (group, n, ranges, newgroup)) {
  std::vector<int> ranks;
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Group_range_excl", expand_ranges(group, n, ranges, &ranks));
  return PMPI_Group_excl(group, static_cast<int>(ranks.size()), ranks.data(), newgroup);
}

namespace {
int set_op(const char* fn, MPI_Group g1, MPI_Group g2, MPI_Group* out, int which) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_group(g1));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_group(g2));
  if (out == nullptr) return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_ARG, "null argument"));
  const auto& a = group_of(g1)->world;
  const auto& b = group_of(g2)->world;
  auto in_b = [&](int w) { return std::find(b.begin(), b.end(), w) != b.end(); };
  std::vector<int> w;
  if (which == 0) {  // union: a, then b's members not in a
    w = a;
    for (int x : b) {
      if (std::find(a.begin(), a.end(), x) == a.end()) w.push_back(x);
    }
  } else {
    for (int x : a) {
      if (in_b(x) == (which == 1)) w.push_back(x);  // 1: intersection, 2: difference
    }
  }
  *out = w.empty() ? MPI_GROUP_EMPTY : new_group_of(std::move(w));
  return MPI_SUCCESS;
}
}  // namespace

AUGUR_MPI_FN(int, Group_union, (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup), (group1, group2, newgroup)) {
  return set_op("MPI_Group_union", group1, group2, newgroup, 0);
}
AUGUR_MPI_FN(int, Group_intersection, (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup),
             (group1, group2, newgroup)) {
  return set_op("MPI_Group_intersection", group1, group2, newgroup, 1);
}
AUGUR_MPI_FN(int, Group_difference, (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup),
             (group1, group2, newgroup)) {
  return set_op("MPI_Group_difference", group1, group2, newgroup, 2);
}

AUGUR_MPI_FN(int, Group_translate_ranks,
             (MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]),
             (group1, n, ranks1, group2, ranks2)) {
  const char* fn = "MPI_Group_translate_ranks";
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_group(group1));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_group(group2));
  if (n < 0 || (n > 0 && (ranks1 == nullptr || ranks2 == nullptr))) {
    return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_ARG, "bad count or null array"));
  }
  const Group& a = *group_of(group1);
  const Group& b = *group_of(group2);
  for (int i = 0; i < n; ++i) {
    if (ranks1[i] == MPI_PROC_NULL) {
      ranks2[i] = MPI_PROC_NULL;
      continue;
    }
    if (ranks1[i] < 0 || ranks1[i] >= static_cast<int>(a.world.size())) {
      return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_RANK, "rank " + std::to_string(ranks1[i]) + " not in group1"));
    }
    ranks2[i] = b.rank_of_world(a.world[static_cast<std::size_t>(ranks1[i])]);
  }
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Group_compare, (MPI_Group group1, MPI_Group group2, int* result), (group1, group2, result)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Group_compare", check_group(group1));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Group_compare", check_group(group2));
  if (result == nullptr) return raise(MPI_COMM_WORLD, "MPI_Group_compare", err(MPI_ERR_ARG, "null argument"));
  *result = compare_lists(group_of(group1)->world, group_of(group2)->world, MPI_IDENT);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Group_free, (MPI_Group * group), (group)) {
  if (group == nullptr) return raise(MPI_COMM_WORLD, "MPI_Group_free", err(MPI_ERR_ARG, "null argument"));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Group_free", check_group(*group));
  if (*group != MPI_GROUP_EMPTY) free_group_handle(*group);
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}

// --- cartesian topologies --------------------------------------------------------------------

AUGUR_MPI_FN(int, Dims_create, (int nnodes, int ndims, int dims[]), (nnodes, ndims, dims)) {
  const char* fn = "MPI_Dims_create";
  if (nnodes <= 0 || ndims <= 0 || dims == nullptr) return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_ARG, "bad arguments"));
  int fixed = 1, free_dims = 0;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] < 0) return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_DIMS, "negative dimension"));
    if (dims[i] > 0) {
      fixed *= dims[i];
    } else {
      ++free_dims;
    }
  }
  if (nnodes % fixed != 0) {
    return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_DIMS, std::to_string(nnodes) + " nodes do not divide into the fixed dimensions"));
  }
  if (free_dims == 0) {
    if (fixed != nnodes) return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_DIMS, "dimensions do not multiply to nnodes"));
    return MPI_SUCCESS;
  }
  // Largest prime factors first, each to the currently smallest free dimension: balanced.
  int left = nnodes / fixed;
  std::vector<int> primes;
  for (int p = 2; p * p <= left; ++p) {
    while (left % p == 0) {
      primes.push_back(p);
      left /= p;
    }
  }
  if (left > 1) primes.push_back(left);
  std::vector<int> f(static_cast<std::size_t>(free_dims), 1);
  for (auto it = primes.rbegin(); it != primes.rend(); ++it) *std::min_element(f.begin(), f.end()) *= *it;
  std::sort(f.begin(), f.end(), std::greater<>());
  std::size_t k = 0;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] == 0) dims[i] = f[k++];
  }
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Cart_create,
             (MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm* comm_cart),
             (comm_old, ndims, dims, periods, reorder, comm_cart)) {
  (void)reorder;  // ranks keep their order
  const char* fn = "MPI_Cart_create";
  AUGUR_MPI_CHECK(comm_old, fn, check_running_comm(comm_old));
  AUGUR_MPI_CHECK(comm_old, fn, check_intra(*comm_of(comm_old)));
  if (ndims < 0 || (ndims > 0 && (dims == nullptr || periods == nullptr)) || comm_cart == nullptr) {
    return raise(comm_old, fn, err(MPI_ERR_ARG, "bad ndims or null argument"));
  }
  CommPtr c = comm_ptr(comm_old);
  int n = 1;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] <= 0) return raise(comm_old, fn, err(MPI_ERR_DIMS, "dimension " + std::to_string(i) + " is not positive"));
    n *= dims[i];
  }
  if (n > c->size) {
    return raise(comm_old, fn, err(MPI_ERR_DIMS, "grid of " + std::to_string(n) + " needs more than the " +
                                                     std::to_string(c->size) + " processes"));
  }
  std::uint32_t id = 0;
  AUGUR_MPI_CHECK(comm_old, fn, agree(c, &id));
  std::vector<int> world(c->world.begin(), c->world.begin() + n);
  *comm_cart = add_comm(id, std::move(world), *c);
  if (*comm_cart != MPI_COMM_NULL) {
    Comm& cc = *comm_of(*comm_cart);
    cc.cart = true;
    cc.dims.assign(dims, dims + ndims);
    cc.periods.assign(periods, periods + ndims);
    for (auto& p : cc.periods) p = p != 0;
  }
  return MPI_SUCCESS;
}

namespace {
Err check_cart(MPI_Comm comm) {
  AUGUR_ERR_RETURN(check_running_comm(comm));
  if (!comm_of(comm)->cart) return err(MPI_ERR_TOPOLOGY, "communicator has no cartesian topology");
  return ok();
}
void coords_of(const Comm& c, int rank, int* coords) {
  for (int i = static_cast<int>(c.dims.size()) - 1; i >= 0; --i) {
    const int d = c.dims[static_cast<std::size_t>(i)];
    coords[i] = rank % d;
    rank /= d;
  }
}
}  // namespace

AUGUR_MPI_FN(int, Cart_coords, (MPI_Comm comm, int rank, int maxdims, int coords[]), (comm, rank, maxdims, coords)) {
  AUGUR_MPI_CHECK(comm, "MPI_Cart_coords", check_cart(comm));
  const Comm& c = *comm_of(comm);
  if (rank < 0 || rank >= c.size) return raise(comm, "MPI_Cart_coords", err(MPI_ERR_RANK, "invalid rank " + std::to_string(rank)));
  if (maxdims < static_cast<int>(c.dims.size()) || coords == nullptr) {
    return raise(comm, "MPI_Cart_coords", err(MPI_ERR_ARG, "maxdims too small or null coords"));
  }
  coords_of(c, rank, coords);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Cart_rank, (MPI_Comm comm, const int coords[], int* rank), (comm, coords, rank)) {
  AUGUR_MPI_CHECK(comm, "MPI_Cart_rank", check_cart(comm));
  if (rank == nullptr || coords == nullptr) return raise(comm, "MPI_Cart_rank", err(MPI_ERR_ARG, "null argument"));
  const Comm& c = *comm_of(comm);
  int r = 0;
  for (std::size_t i = 0; i < c.dims.size(); ++i) {
    int x = coords[i];
    const int d = c.dims[i];
    if (c.periods[i]) {
      x = ((x % d) + d) % d;
    } else if (x < 0 || x >= d) {
      return raise(comm, "MPI_Cart_rank", err(MPI_ERR_ARG, "coordinate " + std::to_string(x) + " outside dimension " + std::to_string(i)));
    }
    r = r * d + x;
  }
  *rank = r;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Cart_shift, (MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest),
             (comm, direction, disp, rank_source, rank_dest)) {
  AUGUR_MPI_CHECK(comm, "MPI_Cart_shift", check_cart(comm));
  const Comm& c = *comm_of(comm);
  if (direction < 0 || direction >= static_cast<int>(c.dims.size()) || rank_source == nullptr || rank_dest == nullptr) {
    return raise(comm, "MPI_Cart_shift", err(MPI_ERR_ARG, "bad direction or null argument"));
  }
  std::vector<int> co(c.dims.size());
  coords_of(c, c.rank, co.data());
  auto at = [&](int delta) {
    std::vector<int> x = co;
    const auto dir = static_cast<std::size_t>(direction);
    const int d = c.dims[dir];
    x[dir] += delta;
    if (c.periods[dir]) {
      x[dir] = ((x[dir] % d) + d) % d;
    } else if (x[dir] < 0 || x[dir] >= d) {
      return MPI_PROC_NULL;
    }
    int r = 0;
    for (std::size_t i = 0; i < c.dims.size(); ++i) r = r * c.dims[i] + x[i];
    return r;
  };
  *rank_dest = at(disp);
  *rank_source = at(-disp);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm), (comm, remain_dims, newcomm)) {
  const char* fn = "MPI_Cart_sub";
  AUGUR_MPI_CHECK(comm, fn, check_cart(comm));
  if (remain_dims == nullptr || newcomm == nullptr) return raise(comm, fn, err(MPI_ERR_ARG, "null argument"));
  const Comm& c = *comm_of(comm);
  std::vector<int> co(c.dims.size());
  coords_of(c, c.rank, co.data());
  int color = 0, key = 0;
  std::vector<int> kept;
  for (std::size_t i = 0; i < c.dims.size(); ++i) {
    if (remain_dims[i]) {
      key = key * c.dims[i] + co[i];
      kept.push_back(c.dims[i]);
    } else {
      color = color * c.dims[i] + co[i];
    }
  }
  std::vector<int> periods;
  for (std::size_t i = 0; i < c.dims.size(); ++i) {
    if (remain_dims[i]) periods.push_back(c.periods[i]);
  }
  AUGUR_MPI_CHECK(comm, fn, split(comm, color, key, newcomm));
  Comm& nc = *comm_of(*newcomm);
  nc.cart = true;
  nc.dims = kept.empty() ? std::vector<int>{1} : kept;
  nc.periods = periods.empty() ? std::vector<int>{0} : periods;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Cart_get, (MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]),
             (comm, maxdims, dims, periods, coords)) {
  AUGUR_MPI_CHECK(comm, "MPI_Cart_get", check_cart(comm));
  const Comm& c = *comm_of(comm);
  const int n = static_cast<int>(c.dims.size());
  if (maxdims < n || (n > 0 && (dims == nullptr || periods == nullptr || coords == nullptr))) {
    return raise(comm, "MPI_Cart_get", err(MPI_ERR_ARG, "maxdims too small or null argument"));
  }
  for (int i = 0; i < n; ++i) {
    dims[i] = c.dims[static_cast<std::size_t>(i)];
    periods[i] = c.periods[static_cast<std::size_t>(i)];
  }
  coords_of(c, c.rank, coords);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Cartdim_get, (MPI_Comm comm, int* ndims), (comm, ndims)) {
  AUGUR_MPI_CHECK(comm, "MPI_Cartdim_get", check_cart(comm));
  if (ndims == nullptr) return raise(comm, "MPI_Cartdim_get", err(MPI_ERR_ARG, "null argument"));
  *ndims = static_cast<int>(comm_of(comm)->dims.size());
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Topo_test, (MPI_Comm comm, int* status), (comm, status)) {
  AUGUR_MPI_CHECK(comm, "MPI_Topo_test", check_running_comm(comm));
  if (status == nullptr) return raise(comm, "MPI_Topo_test", err(MPI_ERR_ARG, "null argument"));
  const Comm& c = *comm_of(comm);
  *status = c.cart ? MPI_CART : c.graph ? MPI_GRAPH : c.dist_graph ? MPI_DIST_GRAPH : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

// --- graph topologies ----------------------------------------------------------------------------

namespace augur::mpi {

Err neighbors_of(const Comm& c, Neighbors* n) {
  *n = {};
  if (c.cart) {
    // Per dimension the negative neighbour, then the positive one (MPI-3.1 7.6). A message sent
    // towards direction (d, dir) is tagged 2d+dir; the slot of the neighbour in direction
    // (d, dir) receives what that neighbour sent the other way, 2d+(1-dir).
    for (std::size_t d = 0; d < c.dims.size(); ++d) {
      for (int dir = 0; dir < 2; ++dir) {
        std::vector<int> co(c.dims.size());
        int r = c.rank;
        for (int i = static_cast<int>(c.dims.size()) - 1; i >= 0; --i) {
          co[static_cast<std::size_t>(i)] = r % c.dims[static_cast<std::size_t>(i)];
          r /= c.dims[static_cast<std::size_t>(i)];
        }
        const int extent = c.dims[d];
        int x = co[d] + (dir == 0 ? -1 : 1);
        int peer = MPI_PROC_NULL;
        if (c.periods[d] || (x >= 0 && x < extent)) {
          co[d] = ((x % extent) + extent) % extent;
          peer = 0;
          for (std::size_t i = 0; i < c.dims.size(); ++i) peer = peer * c.dims[i] + co[i];
        }
        n->in.push_back(peer);
        n->out.push_back(peer);
        n->in_tag.push_back(static_cast<int>(2 * d) + (1 - dir));
        n->out_tag.push_back(static_cast<int>(2 * d) + dir);
      }
    }
    return ok();
  }
  if (c.graph) {
    const int first = c.rank == 0 ? 0 : c.index[static_cast<std::size_t>(c.rank - 1)];
    for (int e = first; e < c.index[static_cast<std::size_t>(c.rank)]; ++e) n->in.push_back(c.edges[static_cast<std::size_t>(e)]);
    n->out = n->in;
  } else if (c.dist_graph) {
    n->in = c.sources;
    n->out = c.destinations;
  } else {
    return err(MPI_ERR_TOPOLOGY, "communicator has no topology (neighbourhood collectives need one)");
  }
  n->in_tag.assign(n->in.size(), 0);  // repeated edges match in order
  n->out_tag.assign(n->out.size(), 0);
  return ok();
}

}  // namespace augur::mpi

namespace {
Err check_graph(MPI_Comm comm) {
  AUGUR_ERR_RETURN(check_running_comm(comm));
  if (!comm_of(comm)->graph) return err(MPI_ERR_TOPOLOGY, "communicator has no graph topology");
  return ok();
}
Err check_dist_graph(MPI_Comm comm) {
  AUGUR_ERR_RETURN(check_running_comm(comm));
  if (!comm_of(comm)->dist_graph) return err(MPI_ERR_TOPOLOGY, "communicator has no distributed graph topology");
  return ok();
}
// Ranks of a graph given by its processes: each in [0, n).
Err check_ranks(const int* r, int count, int n, const char* what) {
  if (count > 0 && r == nullptr) return err(MPI_ERR_ARG, std::string("null ") + what);
  for (int i = 0; i < count; ++i) {
    if (r[i] < 0 || r[i] >= n) return err(MPI_ERR_RANK, std::string(what) + " " + std::to_string(r[i]) + " out of range");
  }
  return ok();
}
bool unweighted(const int* w) { return w == MPI_UNWEIGHTED; }
}  // namespace

AUGUR_MPI_FN(int, Graph_create,
             (MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder, MPI_Comm* comm_graph),
             (comm_old, nnodes, index, edges, reorder, comm_graph)) {
  (void)reorder;  // ranks keep their order
  const char* fn = "MPI_Graph_create";
  AUGUR_MPI_CHECK(comm_old, fn, check_running_comm(comm_old));
  AUGUR_MPI_CHECK(comm_old, fn, check_intra(*comm_of(comm_old)));
  CommPtr c = comm_ptr(comm_old);
  if (nnodes < 0 || nnodes > c->size || comm_graph == nullptr || (nnodes > 0 && index == nullptr)) {
    return raise(comm_old, fn, err(MPI_ERR_ARG, "bad nnodes or null argument"));
  }
  for (int i = 0; i < nnodes; ++i) {
    if (index[i] < (i ? index[i - 1] : 0)) return raise(comm_old, fn, err(MPI_ERR_ARG, "index is not non-decreasing"));
  }
  const int nedges = nnodes ? index[nnodes - 1] : 0;
  AUGUR_MPI_CHECK(comm_old, fn, check_ranks(edges, nedges, nnodes, "edge"));
  std::uint32_t id = 0;
  AUGUR_MPI_CHECK(comm_old, fn, agree(c, &id));
  *comm_graph = add_comm(id, std::vector<int>(c->world.begin(), c->world.begin() + nnodes), *c);
  if (*comm_graph != MPI_COMM_NULL) {
    Comm& g = *comm_of(*comm_graph);
    g.graph = true;
    g.index.assign(index, index + nnodes);
    g.edges.assign(edges, edges + nedges);
  }
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Graphdims_get, (MPI_Comm comm, int* nnodes, int* nedges), (comm, nnodes, nedges)) {
  AUGUR_MPI_CHECK(comm, "MPI_Graphdims_get", check_graph(comm));
  if (nnodes == nullptr || nedges == nullptr) return raise(comm, "MPI_Graphdims_get", err(MPI_ERR_ARG, "null argument"));
  const Comm& c = *comm_of(comm);
  *nnodes = static_cast<int>(c.index.size());
  *nedges = static_cast<int>(c.edges.size());
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Graph_get, (MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]),
             (comm, maxindex, maxedges, index, edges)) {
  AUGUR_MPI_CHECK(comm, "MPI_Graph_get", check_graph(comm));
  const Comm& c = *comm_of(comm);
  for (int i = 0; i < maxindex && static_cast<std::size_t>(i) < c.index.size(); ++i) index[i] = c.index[static_cast<std::size_t>(i)];
  for (int i = 0; i < maxedges && static_cast<std::size_t>(i) < c.edges.size(); ++i) edges[i] = c.edges[static_cast<std::size_t>(i)];
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Graph_neighbors_count, (MPI_Comm comm, int rank, int* nneighbors), (comm, rank, nneighbors)) {
  AUGUR_MPI_CHECK(comm, "MPI_Graph_neighbors_count", check_graph(comm));
  const Comm& c = *comm_of(comm);
  if (rank < 0 || rank >= c.size || nneighbors == nullptr) {
    return raise(comm, "MPI_Graph_neighbors_count", err(MPI_ERR_RANK, "bad rank or null argument"));
  }
  *nneighbors = c.index[static_cast<std::size_t>(rank)] - (rank ? c.index[static_cast<std::size_t>(rank - 1)] : 0);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Graph_neighbors, (MPI_Comm comm, int rank, int maxneighbors, int neighbors[]),
             (comm, rank, maxneighbors, neighbors)) {
  AUGUR_MPI_CHECK(comm, "MPI_Graph_neighbors", check_graph(comm));
  const Comm& c = *comm_of(comm);
  if (rank < 0 || rank >= c.size) return raise(comm, "MPI_Graph_neighbors", err(MPI_ERR_RANK, "bad rank"));
  const int first = rank ? c.index[static_cast<std::size_t>(rank - 1)] : 0;
  for (int e = first, k = 0; e < c.index[static_cast<std::size_t>(rank)] && k < maxneighbors; ++e, ++k) {
    neighbors[k] = c.edges[static_cast<std::size_t>(e)];
  }
  return MPI_SUCCESS;
}

namespace {
// A distributed graph communicator: comm_old's ranks in order, with this rank's edges.
int make_dist_graph(const char* fn, MPI_Comm comm_old, std::vector<int> sources, std::vector<int> sw,
                    std::vector<int> dests, std::vector<int> dw, bool weighted, MPI_Comm* out) {
  CommPtr c = comm_ptr(comm_old);
  std::uint32_t id = 0;
  AUGUR_MPI_CHECK(comm_old, fn, agree(c, &id));
  *out = add_comm(id, c->world, *c);
  Comm& g = *comm_of(*out);
  g.dist_graph = true;
  g.weighted = weighted;
  g.sources = std::move(sources);
  g.source_weights = std::move(sw);
  g.destinations = std::move(dests);
  g.dest_weights = std::move(dw);
  return MPI_SUCCESS;
}
}  // namespace

AUGUR_MPI_FN(int, Dist_graph_create_adjacent,
             (MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[], int outdegree,
              const int destinations[], const int destweights[], MPI_Info info, int reorder, MPI_Comm* comm_dist_graph),
             (comm_old, indegree, sources, sourceweights, outdegree, destinations, destweights, info, reorder,
              comm_dist_graph)) {
  (void)info;
  (void)reorder;
  const char* fn = "MPI_Dist_graph_create_adjacent";
  AUGUR_MPI_CHECK(comm_old, fn, check_running_comm(comm_old));
  AUGUR_MPI_CHECK(comm_old, fn, check_intra(*comm_of(comm_old)));
  const int n = comm_of(comm_old)->size;
  if (indegree < 0 || outdegree < 0 || comm_dist_graph == nullptr) {
    return raise(comm_old, fn, err(MPI_ERR_ARG, "negative degree or null argument"));
  }
  AUGUR_MPI_CHECK(comm_old, fn, check_ranks(sources, indegree, n, "source"));
  AUGUR_MPI_CHECK(comm_old, fn, check_ranks(destinations, outdegree, n, "destination"));
  const bool weighted = !unweighted(sourceweights) && !unweighted(destweights);
  auto weights = [&](const int* w, int deg) {
    return weighted && w != MPI_WEIGHTS_EMPTY && w != nullptr ? std::vector<int>(w, w + deg) : std::vector<int>(static_cast<std::size_t>(weighted ? deg : 0), 1);
  };
  return make_dist_graph(fn, comm_old, std::vector<int>(sources, sources + indegree), weights(sourceweights, indegree),
                         std::vector<int>(destinations, destinations + outdegree), weights(destweights, outdegree), weighted,
                         comm_dist_graph);
}

AUGUR_MPI_FN(int, Dist_graph_create,
             (MPI_Comm comm_old, int n, const int sources[], const int degrees[], const int destinations[],
              const int weights[], MPI_Info info, int reorder, MPI_Comm* comm_dist_graph),
             (comm_old, n, sources, degrees, destinations, weights, info, reorder, comm_dist_graph)) {
  (void)info;
  (void)reorder;
  const char* fn = "MPI_Dist_graph_create";
  AUGUR_MPI_CHECK(comm_old, fn, check_running_comm(comm_old));
  AUGUR_MPI_CHECK(comm_old, fn, check_intra(*comm_of(comm_old)));
  const int size = comm_of(comm_old)->size;
  if (n < 0 || comm_dist_graph == nullptr || (n > 0 && degrees == nullptr)) {
    return raise(comm_old, fn, err(MPI_ERR_ARG, "negative n or null argument"));
  }
  AUGUR_MPI_CHECK(comm_old, fn, check_ranks(sources, n, size, "source"));
  int total = 0;
  for (int i = 0; i < n; ++i) {
    if (degrees[i] < 0) return raise(comm_old, fn, err(MPI_ERR_ARG, "negative degree"));
    total += degrees[i];
  }
  AUGUR_MPI_CHECK(comm_old, fn, check_ranks(destinations, total, size, "destination"));
  const bool weighted = !unweighted(weights);
  // Each edge s -> d (weight w) is told to s as (1, d, w) and to d as (0, s, w); one all-to-all
  // of counts and one of the triples deliver every rank its own edges.
  std::vector<std::vector<int>> to(static_cast<std::size_t>(size));
  for (int i = 0, e = 0; i < n; ++i) {
    for (int k = 0; k < degrees[i]; ++k, ++e) {
      const int w = weighted && weights != MPI_WEIGHTS_EMPTY ? weights[e] : 1;
      auto& s = to[static_cast<std::size_t>(sources[i])];
      s.insert(s.end(), {1, destinations[e], w});
      auto& d = to[static_cast<std::size_t>(destinations[e])];
      d.insert(d.end(), {0, sources[i], w});
    }
  }
  std::vector<int> scounts(static_cast<std::size_t>(size)), sdispls(static_cast<std::size_t>(size)), rcounts(scounts.size()),
      rdispls(scounts.size()), flat;
  for (int r = 0; r < size; ++r) {
    sdispls[static_cast<std::size_t>(r)] = static_cast<int>(flat.size());
    scounts[static_cast<std::size_t>(r)] = static_cast<int>(to[static_cast<std::size_t>(r)].size());
    flat.insert(flat.end(), to[static_cast<std::size_t>(r)].begin(), to[static_cast<std::size_t>(r)].end());
  }
  int rc = PMPI_Alltoall(scounts.data(), 1, MPI_INT, rcounts.data(), 1, MPI_INT, comm_old);
  if (rc != MPI_SUCCESS) return rc;
  int got = 0;
  for (int r = 0; r < size; ++r) {
    rdispls[static_cast<std::size_t>(r)] = got;
    got += rcounts[static_cast<std::size_t>(r)];
  }
  std::vector<int> mine(static_cast<std::size_t>(got));
  rc = PMPI_Alltoallv(flat.data(), scounts.data(), sdispls.data(), MPI_INT, mine.data(), rcounts.data(), rdispls.data(),
                      MPI_INT, comm_old);
  if (rc != MPI_SUCCESS) return rc;
  std::vector<int> src, sw, dst, dw;
  for (std::size_t i = 0; i + 2 < mine.size(); i += 3) {
    (mine[i] == 1 ? dst : src).push_back(mine[i + 1]);
    (mine[i] == 1 ? dw : sw).push_back(mine[i + 2]);
  }
  if (!weighted) {
    sw.clear();
    dw.clear();
  }
  return make_dist_graph(fn, comm_old, std::move(src), std::move(sw), std::move(dst), std::move(dw), weighted,
                         comm_dist_graph);
}

AUGUR_MPI_FN(int, Dist_graph_neighbors_count, (MPI_Comm comm, int* indegree, int* outdegree, int* weighted),
             (comm, indegree, outdegree, weighted)) {
  AUGUR_MPI_CHECK(comm, "MPI_Dist_graph_neighbors_count", check_dist_graph(comm));
  if (indegree == nullptr || outdegree == nullptr || weighted == nullptr) {
    return raise(comm, "MPI_Dist_graph_neighbors_count", err(MPI_ERR_ARG, "null argument"));
  }
  const Comm& c = *comm_of(comm);
  *indegree = static_cast<int>(c.sources.size());
  *outdegree = static_cast<int>(c.destinations.size());
  *weighted = c.weighted ? 1 : 0;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Dist_graph_neighbors,
             (MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree, int destinations[],
              int destweights[]),
             (comm, maxindegree, sources, sourceweights, maxoutdegree, destinations, destweights)) {
  AUGUR_MPI_CHECK(comm, "MPI_Dist_graph_neighbors", check_dist_graph(comm));
  const Comm& c = *comm_of(comm);
  for (std::size_t i = 0; i < c.sources.size() && static_cast<int>(i) < maxindegree; ++i) {
    sources[i] = c.sources[i];
    if (c.weighted && !unweighted(sourceweights)) sourceweights[i] = c.source_weights[i];
  }
  for (std::size_t i = 0; i < c.destinations.size() && static_cast<int>(i) < maxoutdegree; ++i) {
    destinations[i] = c.destinations[i];
    if (c.weighted && !unweighted(destweights)) destweights[i] = c.dest_weights[i];
  }
  return MPI_SUCCESS;
}

// MPI_COMM_TYPE_SHARED: the ranks of one host (same host name; network namespaces of one
// machine count as one host, as they share its memory).
AUGUR_MPI_FN(int, Comm_split_type, (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm),
             (comm, split_type, key, info, newcomm)) {
  (void)info;
  const char* fn = "MPI_Comm_split_type";
  AUGUR_MPI_CHECK(comm, fn, check_running_comm(comm));
  AUGUR_MPI_CHECK(comm, fn, check_intra(*comm_of(comm)));
  if (split_type == MPI_UNDEFINED) return PMPI_Comm_split(comm, MPI_UNDEFINED, key, newcomm);
  if (split_type != MPI_COMM_TYPE_SHARED) {
    return raise(comm, fn, err(MPI_ERR_ARG, "split type " + std::to_string(split_type) + " (only MPI_COMM_TYPE_SHARED)"));
  }
  const Comm& c = *comm_of(comm);
  // The engine's node name: the launcher's when it placed the ranks, so this split and the
  // engine's idea of a node agree.
  const unsigned long long mine = std::hash<std::string>{}(S().engine->node_name());
  std::vector<unsigned long long> all(static_cast<std::size_t>(c.size));
  const int rc = PMPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG, comm);
  if (rc != MPI_SUCCESS) return rc;
  const int color = static_cast<int>(std::find(all.begin(), all.end(), mine) - all.begin());
  return PMPI_Comm_split(comm, color, key, newcomm);
}
