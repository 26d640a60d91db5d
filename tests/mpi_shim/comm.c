/* Communicators, groups, cartesian topologies: dup isolates traffic, split/create give the right
 * members and ranks and work for collectives, group set operations and rank translation,
 * Cart_create/coords/rank/shift/sub and Dims_create. */
#include <string.h>

#include "check.h"

/* The same tag on two communicators: each receive gets its own communicator's message. */
static void isolated(MPI_Comm a, MPI_Comm b, const char* what) {
  int sa, sb, ra = -1, rb = -1;
  MPI_Comm_size(a, &sa);
  MPI_Comm_size(b, &sb);
  int me = -1;
  MPI_Comm_rank(a, &me);
  const int right = (me + 1) % sa, left = (me + sa - 1) % sa;
  int va = 100 + me, vb = 200 + me;
  MPI_Request r[2];
  MPI_Irecv(&rb, 1, MPI_INT, left, 9, b, &r[0]);
  MPI_Irecv(&ra, 1, MPI_INT, left, 9, a, &r[1]);
  MPI_Send(&va, 1, MPI_INT, right, 9, a);
  MPI_Send(&vb, 1, MPI_INT, right, 9, b);
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  CHECK(sa == sb && ra == 100 + left && rb == 200 + left, "%s: traffic crossed (%d, %d)", what, ra, rb);
}

static void dup_isolates(void) {
  MPI_Comm d;
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  int res = -1;
  MPI_Comm_compare(MPI_COMM_WORLD, d, &res);
  CHECK(res == MPI_CONGRUENT, "compare(world, dup) = %d", res);
  MPI_Comm_compare(d, d, &res);
  CHECK(res == MPI_IDENT, "compare(dup, dup) = %d", res);
  isolated(MPI_COMM_WORLD, d, "dup");
  MPI_Comm_free(&d);
  CHECK(d == MPI_COMM_NULL, "comm_free");
}

static void split_and_create(void) {
  MPI_Comm half;
  /* Odd and even ranks, reversed order inside each. */
  MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, -g_rank, &half);
  int hr = -1, hs = -1;
  MPI_Comm_rank(half, &hr);
  MPI_Comm_size(half, &hs);
  const int want_size = g_size / 2 + (g_rank % 2 == 0 ? g_size % 2 : 0);
  CHECK(hs == want_size, "split size %d, want %d", hs, want_size);
  CHECK(hr == (hs - 1) - g_rank / 2, "split rank %d", hr);
  int sum = 0;
  MPI_Allreduce(&g_rank, &sum, 1, MPI_INT, MPI_SUM, half);
  int want = 0;
  for (int r = g_rank % 2; r < g_size; r += 2) want += r;
  CHECK(sum == want, "allreduce in split: %d, want %d", sum, want);
  /* Translate ranks from half back to world. */
  MPI_Group wg, hg;
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Comm_group(half, &hg);
  int zero = 0, w = -1;
  MPI_Group_translate_ranks(hg, 1, &zero, wg, &w);
  int last = g_rank % 2 + 2 * (hs - 1);
  CHECK(w == last, "half rank 0 is world rank %d, want %d", w, last);
  MPI_Comm none;
  MPI_Comm_split(MPI_COMM_WORLD, g_rank == 0 ? 0 : MPI_UNDEFINED, 0, &none);
  CHECK((g_rank == 0) == (none != MPI_COMM_NULL), "split with MPI_UNDEFINED");
  if (none != MPI_COMM_NULL) MPI_Comm_free(&none);

  /* Comm_create from a group of the first half (at least rank 0). */
  const int n = (g_size + 1) / 2;
  int* ranks = malloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n; ++i) ranks[i] = n - 1 - i;
  MPI_Group g;
  MPI_Group_incl(wg, n, ranks, &g);
  int gs = -1, grank = -2;
  MPI_Group_size(g, &gs);
  MPI_Group_rank(g, &grank);
  CHECK(gs == n && grank == (g_rank < n ? n - 1 - g_rank : MPI_UNDEFINED), "group_incl size %d rank %d", gs, grank);
  MPI_Comm c;
  MPI_Comm_create(MPI_COMM_WORLD, g, &c);
  CHECK((c != MPI_COMM_NULL) == (g_rank < n), "comm_create membership");
  if (c != MPI_COMM_NULL) {
    int cr = -1, v = g_rank, mx = -1;
    MPI_Comm_rank(c, &cr);
    CHECK(cr == n - 1 - g_rank, "comm_create rank %d", cr);
    MPI_Allreduce(&v, &mx, 1, MPI_INT, MPI_MAX, c);
    CHECK(mx == n - 1, "allreduce in created comm %d", mx);
    MPI_Comm_free(&c);
  }
  /* Group algebra. */
  MPI_Group ex, un, in, df;
  MPI_Group_excl(wg, n, ranks, &ex);
  MPI_Group_union(g, ex, &un);
  MPI_Group_intersection(g, ex, &in);
  MPI_Group_difference(wg, g, &df);
  int s1, s2, s3, s4, cmp;
  MPI_Group_size(ex, &s1);
  MPI_Group_size(un, &s2);
  MPI_Group_size(in, &s3);
  MPI_Group_size(df, &s4);
  CHECK(s1 == g_size - n && s2 == g_size && s3 == 0 && s4 == g_size - n, "group sizes %d %d %d %d", s1, s2, s3, s4);
  MPI_Group_compare(un, wg, &cmp);
  CHECK(cmp == (n > 1 ? MPI_SIMILAR : MPI_IDENT), "union vs world: %d", cmp);
  MPI_Group_compare(ex, df, &cmp);
  CHECK(cmp == MPI_IDENT, "excl vs difference: %d", cmp);
  MPI_Group_free(&g);
  MPI_Group_free(&ex);
  MPI_Group_free(&un);
  MPI_Group_free(&df);
  MPI_Group_free(&wg);
  MPI_Group_free(&hg);
  CHECK(wg == MPI_GROUP_NULL, "group_free");
  free(ranks);
  MPI_Comm_free(&half);
}

static void cartesian(void) {
  int dims[2] = {0, 0};
  MPI_Dims_create(g_size, 2, dims);
  CHECK(dims[0] * dims[1] == g_size && dims[0] >= dims[1], "dims_create %d x %d", dims[0], dims[1]);
  int d3[3] = {0, 2, 0};
  if (12 % 2 == 0) {
    MPI_Dims_create(12, 3, d3);
    CHECK(d3[0] * d3[1] * d3[2] == 12 && d3[1] == 2 && d3[0] >= d3[2], "dims_create fixed %d %d %d", d3[0], d3[1], d3[2]);
  }
  const int periods[2] = {1, 0};
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  int status = -1;
  MPI_Topo_test(cart, &status);
  CHECK(status == MPI_CART, "topo_test");
  int coords[2], r = -1;
  MPI_Cart_coords(cart, g_rank, 2, coords);
  CHECK(coords[0] == g_rank / dims[1] && coords[1] == g_rank % dims[1], "cart_coords");
  MPI_Cart_rank(cart, coords, &r);
  CHECK(r == g_rank, "cart_rank %d", r);
  int src, dst;
  MPI_Cart_shift(cart, 0, 1, &src, &dst);
  CHECK(dst == ((coords[0] + 1) % dims[0]) * dims[1] + coords[1] && src == ((coords[0] - 1 + dims[0]) % dims[0]) * dims[1] + coords[1],
        "periodic shift %d %d", src, dst);
  MPI_Cart_shift(cart, 1, 1, &src, &dst);
  CHECK(dst == (coords[1] + 1 < dims[1] ? g_rank + 1 : MPI_PROC_NULL) && src == (coords[1] > 0 ? g_rank - 1 : MPI_PROC_NULL),
        "non-periodic shift %d %d", src, dst);
  /* A halo exchange along the shift works, PROC_NULL at the edges. */
  int mine = g_rank, from_left = -5;
  MPI_Sendrecv(&mine, 1, MPI_INT, dst, 9, &from_left, 1, MPI_INT, src, 9, cart, MPI_STATUS_IGNORE);
  CHECK(from_left == (src == MPI_PROC_NULL ? -5 : src), "shift exchange got %d", from_left);
  const int keep[2] = {0, 1};
  MPI_Comm row;
  MPI_Cart_sub(cart, keep, &row);
  int rs = -1, rr = -1, nd = -1;
  MPI_Comm_size(row, &rs);
  MPI_Comm_rank(row, &rr);
  MPI_Cartdim_get(row, &nd);
  CHECK(rs == dims[1] && rr == coords[1] && nd == 1, "cart_sub row size %d rank %d ndims %d", rs, rr, nd);
  int rowsum = 0;
  MPI_Allreduce(&g_rank, &rowsum, 1, MPI_INT, MPI_SUM, row);
  int want = 0;
  for (int j = 0; j < dims[1]; ++j) want += coords[0] * dims[1] + j;
  CHECK(rowsum == want, "row allreduce %d, want %d", rowsum, want);
  int gd[2], gp[2], gc[2];
  MPI_Cart_get(cart, 2, gd, gp, gc);
  CHECK(gd[0] == dims[0] && gp[0] == 1 && gp[1] == 0 && gc[1] == coords[1], "cart_get");
  MPI_Comm_free(&row);
  MPI_Comm_free(&cart);
}

/* MPI_Comm_create_group: called by the group's members only. Even and odd ranks build their
 * communicators at the same time with the same tag; each works, and a world-wide dup afterwards
 * still agrees (its id is above both). */
static void create_group(void) {
  MPI_Group world, half;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int members[64], n = 0;
  for (int r = g_rank % 2; r < g_size && n < 64; r += 2) members[n++] = r;
  MPI_Group_incl(world, n, members, &half);
  MPI_Comm c = MPI_COMM_NULL;
  CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, half, 7, &c) == MPI_SUCCESS && c != MPI_COMM_NULL, "create_group");
  int size = -1, rank = -1, sum = -1, one = g_rank;
  MPI_Comm_size(c, &size);
  MPI_Comm_rank(c, &rank);
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
  int want = 0;
  for (int k = 0; k < n; ++k) want += members[k];
  CHECK(size == n && rank == g_rank / 2 && sum == want, "create_group: size %d rank %d sum %d (want %d %d %d)", size,
        rank, sum, n, g_rank / 2, want);
  /* Again with another tag, then a collective over the world and over the new communicator. */
  MPI_Comm c2 = MPI_COMM_NULL, d = MPI_COMM_NULL;
  MPI_Comm_create_group(MPI_COMM_WORLD, half, 8, &c2);
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  int s2 = -1, sd = -1;
  MPI_Allreduce(&one, &s2, 1, MPI_INT, MPI_SUM, c2);
  MPI_Allreduce(&one, &sd, 1, MPI_INT, MPI_SUM, d);
  CHECK(s2 == want && sd == g_size * (g_size - 1) / 2, "after create_group: %d %d", s2, sd);
  MPI_Comm empty = MPI_COMM_WORLD;
  MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, 9, &empty);
  CHECK(empty == MPI_COMM_NULL, "create_group of the empty group");
  MPI_Comm_free(&c);
  MPI_Comm_free(&c2);
  MPI_Comm_free(&d);
  MPI_Group_free(&half);
  MPI_Group_free(&world);
}

/* MPI_Comm_idup: overlapped with a nonblocking allreduce, several in flight on overlapping
 * communicators, and one that completes only because the program goes on communicating (a
 * blocking duplicate would deadlock: rank 2k+1 calls it only after rank 2k's synchronous send). */
static void idup(void) {
  MPI_Comm d, h, dh[3];
  MPI_Request r[5];
  int x = g_rank + 1, sum = 0;
  MPI_Comm_idup(MPI_COMM_WORLD, &d, &r[0]);
  MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[1]);
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  int res = -1, dsum = 0;
  MPI_Comm_compare(MPI_COMM_WORLD, d, &res);
  MPI_Allreduce(&x, &dsum, 1, MPI_INT, MPI_SUM, d);
  CHECK(res == MPI_CONGRUENT && sum == g_size * (g_size + 1) / 2 && dsum == sum, "idup: compare %d, sums %d %d", res, sum,
        dsum);
  isolated(MPI_COMM_WORLD, d, "idup of world");
  /* three at once: of world, of a half, of the dup */
  MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &h);
  MPI_Comm_idup(MPI_COMM_WORLD, &dh[0], &r[0]);
  MPI_Comm_idup(h, &dh[1], &r[1]);
  MPI_Comm_idup(d, &dh[2], &r[2]);
  MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
  isolated(MPI_COMM_WORLD, dh[0], "idup of world, with others in flight");
  isolated(h, dh[1], "idup of a half");
  isolated(d, dh[2], "idup of an idup");
  isolated(dh[0], dh[2], "two idups of world");
  /* the program goes on before the others have called it */
  MPI_Comm late;
  int token = -1;
  if (g_rank % 2 == 0) {
    MPI_Comm_idup(MPI_COMM_WORLD, &late, &r[0]);
    if (g_rank + 1 < g_size) MPI_Ssend(&g_rank, 1, MPI_INT, g_rank + 1, 4, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&token, 1, MPI_INT, g_rank - 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(token == g_rank - 1, "token %d", token);
    MPI_Comm_idup(MPI_COMM_WORLD, &late, &r[0]);
  }
  MPI_Wait(&r[0], MPI_STATUS_IGNORE);
  isolated(MPI_COMM_WORLD, late, "idup completed after point-to-point");
  /* a blocking dup after idups: ids stay distinct */
  MPI_Comm after;
  MPI_Comm_dup(MPI_COMM_WORLD, &after);
  isolated(late, after, "dup after idups");
  MPI_Comm_free(&after);
  MPI_Comm_free(&late);
  for (int i = 0; i < 3; ++i) MPI_Comm_free(&dh[i]);
  MPI_Comm_free(&h);
  MPI_Comm_free(&d);
}

int main(int argc, char** argv) {
  start(&argc, &argv);
  create_group();
  dup_isolates();
  split_and_create();
  cartesian();
  idup();
  char name[MPI_MAX_OBJECT_NAME];
  int len = 0;
  MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
  CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "comm name %s", name);
  /* Freed communicators' and groups' handles are given out again (the tables stay bounded). */
  {
    MPI_Comm first = MPI_COMM_NULL, highest = MPI_COMM_NULL;
    MPI_Group gfirst = MPI_GROUP_NULL, ghighest = MPI_GROUP_NULL;
    for (int i = 0; i < 20; ++i) {
      MPI_Comm d;
      MPI_Group g;
      MPI_Comm_dup(MPI_COMM_WORLD, &d);
      MPI_Comm_group(d, &g);
      if (i == 0) first = d, gfirst = g;
      if (d > highest) highest = d;
      if (g > ghighest) ghighest = g;
      MPI_Group_free(&g);
      MPI_Comm_free(&d);
    }
    CHECK(highest == first && ghighest == gfirst, "20 dups took comm handles %d to %d, group handles %d to %d",
          (int)first, (int)highest, (int)gfirst, (int)ghighest);
  }
  return finish("comm");
}
