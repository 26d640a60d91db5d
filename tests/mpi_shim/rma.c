/* One-sided communication (MPI-3.1 chapter 11), each result checked against a literal or a
 * serially computed reference: put/get under fence with displacement units, a 1 MiB transfer and
 * derived datatypes on either side; MPI_Win_allocate and the window attributes, group and name;
 * accumulate (SUM on int and double, REPLACE, MAX), get_accumulate and MPI_NO_OP reads, with the
 * serial order that concurrent accumulates to one location must have (11.7.1); passive target
 * with exclusive locks (mutual exclusion of a get-increment-put counter), fetch_and_op tickets,
 * compare_and_swap, lock_all with every flush variant and win_sync, and concurrent shared locks;
 * request-based operations; post/start/complete/wait and win_test; dynamic windows with attach,
 * detach and absolute addresses; MPI_Alloc_mem; window keyvals, error handlers and info;
 * zero-size windows and MPI_PROC_NULL targets; and many ranks accumulating into one element.
 * Every area works at any number of ranks: neighbours are (rank +- 1) % size, and with one or
 * two ranks left and right may be the same process (or this one). */
#include <stdint.h>
#include <string.h>

#include "check.h"

/* Makes the puts and accumulates others completed (flushed) before the barrier visible in this
 * rank's window memory inside a passive-target epoch (the separate model needs the syncs). */
static void sync_local(MPI_Win win) {
  MPI_Win_sync(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_sync(win);
}

static int cmp_i64(const void* a, const void* b) {
  const int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return (x > y) - (x < y);
}

static void fence_put_get(void) {
  const int left = (g_rank + g_size - 1) % g_size, right = (g_rank + 1) % g_size;
  const int left2 = (g_rank + 2 * g_size - 2) % g_size;
  enum { N = 32 };
  int buf[N];
  for (int k = 0; k < N; ++k) buf[k] = -1;
  MPI_Win win;
  MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  /* target_disp counts in disp_units: displacement 3 is byte 12 of the right neighbour's buffer. */
  int src[4], got[4] = {-9, -9, -9, -9};
  for (int k = 0; k < 4; ++k) src[k] = g_rank * 100 + k;
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  MPI_Put(src, 4, MPI_INT, right, 3, 4, MPI_INT, win);
  /* No local stores since the last fence, and the next epoch only reads. */
  MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT, win);
  int ok = 1;
  for (int k = 0; k < N; ++k) ok &= buf[k] == (k >= 3 && k < 7 ? left * 100 + k - 3 : -1);
  CHECK(ok, "put at disp 3 from rank %d: buf[2..7] = %d %d %d %d %d %d", left, buf[2], buf[3], buf[4], buf[5],
        buf[6], buf[7]);
  /* The left neighbour's elements 3..6 hold what its own left neighbour put there. */
  MPI_Get(got, 4, MPI_INT, left, 3, 4, MPI_INT, win);
  MPI_Win_fence(0, win);
  CHECK(got[0] == left2 * 100 && got[1] == left2 * 100 + 1 && got[3] == left2 * 100 + 3,
        "get from rank %d at disp 3: %d %d %d %d, expected %d..", left, got[0], got[1], got[2], got[3], left2 * 100);
  /* Derived datatypes: a strided origin (elements 0,3,6,9) into 4 contiguous target ints at 16,
   * and 4 contiguous origin ints into a strided target (elements 24,26,28,30). */
  int strided[12], contig[4];
  for (int k = 0; k < 12; ++k) strided[k] = g_rank * 1000 + k;
  for (int k = 0; k < 4; ++k) contig[k] = g_rank * 1000 + 500 + k;
  MPI_Datatype every3, every2;
  MPI_Type_vector(4, 1, 3, MPI_INT, &every3);
  MPI_Type_vector(4, 1, 2, MPI_INT, &every2);
  MPI_Type_commit(&every3);
  MPI_Type_commit(&every2);
  MPI_Put(strided, 1, every3, right, 16, 4, MPI_INT, win);
  MPI_Put(contig, 4, MPI_INT, right, 24, 1, every2, win);
  MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT, win);
  ok = 1;
  for (int k = 16; k < N; ++k) {
    int want = -1;
    if (k < 20) want = left * 1000 + 3 * (k - 16);
    if (k >= 24 && (k - 24) % 2 == 0) want = left * 1000 + 500 + (k - 24) / 2;
    ok &= buf[k] == want;
  }
  CHECK(ok, "vector puts from rank %d: buf[16..19] = %d %d %d %d, buf[24..27] = %d %d %d %d", left, buf[16],
        buf[17], buf[18], buf[19], buf[24], buf[25], buf[26], buf[27]);
  /* And a strided target on a get: the right neighbour's 24,26,28,30 hold what this rank put. */
  int back[4] = {-9, -9, -9, -9};
  MPI_Get(back, 4, MPI_INT, right, 24, 1, every2, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  CHECK(back[0] == contig[0] && back[1] == contig[1] && back[2] == contig[2] && back[3] == contig[3],
        "strided get: %d %d %d %d, expected %d..", back[0], back[1], back[2], back[3], contig[0]);
  MPI_Type_free(&every3);
  MPI_Type_free(&every2);
  MPI_Win_free(&win);
  CHECK(win == MPI_WIN_NULL, "MPI_Win_free sets MPI_WIN_NULL");

  /* 1 MiB of doubles to the right, then read back from the right: every element checked. */
  enum { BIG = (1 << 20) / sizeof(double) };
  double* wbuf = malloc(BIG * sizeof(double));
  double* mine = malloc(BIG * sizeof(double));
  double* rd = malloc(BIG * sizeof(double));
  for (int i = 0; i < BIG; ++i) {
    wbuf[i] = -1.0;
    mine[i] = g_rank * 1048576.0 + i;
    rd[i] = -2.0;
  }
  MPI_Win_create(wbuf, BIG * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  MPI_Put(mine, BIG, MPI_DOUBLE, right, 0, BIG, MPI_DOUBLE, win);
  MPI_Win_fence(MPI_MODE_NOSTORE, win);
  int bad = -1;
  for (int i = 0; i < BIG && bad < 0; ++i)
    if (wbuf[i] != left * 1048576.0 + i) bad = i;
  CHECK(bad < 0, "1 MiB put from rank %d: element %d = %.1f, expected %.1f", left, bad, bad < 0 ? 0 : wbuf[bad],
        bad < 0 ? 0 : left * 1048576.0 + bad);
  MPI_Get(rd, BIG, MPI_DOUBLE, right, 0, BIG, MPI_DOUBLE, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  bad = -1;
  for (int i = 0; i < BIG && bad < 0; ++i)
    if (rd[i] != mine[i]) bad = i;
  CHECK(bad < 0, "1 MiB get from rank %d: element %d = %.1f, expected %.1f", right, bad, bad < 0 ? 0 : rd[bad],
        bad < 0 ? 0 : mine[bad]);
  MPI_Win_free(&win);
  free(wbuf);
  free(mine);
  free(rd);
}

static void allocate_attrs(void) {
  const int right = (g_rank + 1) % g_size;
  /* Sizes differ per rank so MPI_WIN_SIZE must be this rank's own. */
  const int n = 4 + g_rank;
  const MPI_Aint bytes = (MPI_Aint)n * (MPI_Aint)sizeof(int);
  int* base = NULL;
  MPI_Win win;
  MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  CHECK(base != NULL, "MPI_Win_allocate returned a NULL base for %ld bytes", (long)bytes);
  void* abase = NULL;
  MPI_Aint* asize = NULL;
  int *adisp = NULL, *aflavor = NULL, *amodel = NULL, f1 = 0, f2 = 0, f3 = 0, f4 = 0, f5 = 0;
  MPI_Win_get_attr(win, MPI_WIN_BASE, &abase, &f1);
  MPI_Win_get_attr(win, MPI_WIN_SIZE, &asize, &f2);
  MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &adisp, &f3);
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &aflavor, &f4);
  MPI_Win_get_attr(win, MPI_WIN_MODEL, &amodel, &f5);
  CHECK(f1 && abase == (void*)base, "MPI_WIN_BASE: flag %d, %p, expected %p", f1, abase, (void*)base);
  CHECK(f2 && asize && *asize == bytes, "MPI_WIN_SIZE: flag %d, %ld, expected %ld", f2, asize ? (long)*asize : -1L,
        (long)bytes);
  CHECK(f3 && adisp && *adisp == (int)sizeof(int), "MPI_WIN_DISP_UNIT: flag %d, %d", f3, adisp ? *adisp : -1);
  CHECK(f4 && aflavor && *aflavor == MPI_WIN_FLAVOR_ALLOCATE, "MPI_WIN_CREATE_FLAVOR: flag %d, %d, expected %d", f4,
        aflavor ? *aflavor : -1, MPI_WIN_FLAVOR_ALLOCATE);
  CHECK(f5 && amodel && *amodel == MPI_WIN_UNIFIED, "MPI_WIN_MODEL: flag %d, %d, expected MPI_WIN_UNIFIED (%d)", f5,
        amodel ? *amodel : -1, MPI_WIN_UNIFIED);
  /* The memory is the window: local stores before the first fence, read remotely after it. */
  for (int k = 0; k < n; ++k) base[k] = g_rank * 1000 + k;
  const int rn = 4 + right;
  int* got = malloc(sizeof(int) * (size_t)rn);
  for (int k = 0; k < rn; ++k) got[k] = -1;
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  MPI_Get(got, rn, MPI_INT, right, 0, rn, MPI_INT, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  int ok = 1;
  for (int k = 0; k < rn; ++k) ok &= got[k] == right * 1000 + k;
  CHECK(ok, "get of all %d ints of rank %d's allocated window: %d .. %d", rn, right, got[0], got[rn - 1]);
  free(got);
  /* The window's group is the communicator's. */
  MPI_Group wg, cg;
  MPI_Win_get_group(win, &wg);
  MPI_Comm_group(MPI_COMM_WORLD, &cg);
  int cmp = -1;
  MPI_Group_compare(wg, cg, &cmp);
  CHECK(cmp == MPI_IDENT, "MPI_Win_get_group compares %d with the communicator's group", cmp);
  MPI_Group_free(&wg);
  MPI_Group_free(&cg);
  /* An unnamed window has the empty name (6.8, as for communicators); then the name set. */
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  MPI_Win_get_name(win, name, &len);
  CHECK(len == 0 && name[0] == '\0', "unnamed window: \"%s\" (%d)", name, len);
  MPI_Win_set_name(win, "augur rma window");
  MPI_Win_get_name(win, name, &len);
  CHECK(len == (int)strlen("augur rma window") && strcmp(name, "augur rma window") == 0, "window name \"%s\" (%d)",
        name, len);
  MPI_Win_free(&win);
}

static void accumulates(void) {
  const int left = (g_rank + g_size - 1) % g_size, right = (g_rank + 1) % g_size;
  const int S = g_size * (g_size + 1) / 2; /* sum over ranks of rank + 1 */
  int iv[6] = {0, 0, -1, -1, -1000, 7};
  double dv[2] = {0.0, 0.25};
  long long lv = 1000;
  MPI_Win iw, dw, lw;
  MPI_Win_create(iv, sizeof iv, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &iw);
  MPI_Win_create(dv, sizeof dv, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &dw);
  MPI_Win_create(&lv, sizeof lv, sizeof lv, MPI_INFO_NULL, MPI_COMM_WORLD, &lw);
  MPI_Win_fence(MPI_MODE_NOPRECEDE, iw);
  MPI_Win_fence(MPI_MODE_NOPRECEDE, dw);
  MPI_Win_fence(MPI_MODE_NOPRECEDE, lw);
  const int c = g_rank + 1, c10 = 10 * (g_rank + 1), rv = 1000 + g_rank, ga = g_rank + 1;
  const double dc = 0.5 * (g_rank + 1), dc8 = 0.125 * (g_rank + 1);
  int* mv = malloc(sizeof(int) * (size_t)g_size);
  /* Element 0 of rank 0 and element 1 of every rank: SUM from every rank. */
  MPI_Accumulate(&c, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, iw);
  MPI_Accumulate(&dc, 1, MPI_DOUBLE, 0, 0, 1, MPI_DOUBLE, MPI_SUM, dw);
  for (int t = 0; t < g_size; ++t) {
    MPI_Accumulate(&c10, 1, MPI_INT, t, 1, 1, MPI_INT, MPI_SUM, iw);
    MPI_Accumulate(&dc8, 1, MPI_DOUBLE, t, 1, 1, MPI_DOUBLE, MPI_SUM, dw);
    mv[t] = (g_rank + 1) * (t + 3) * 37 % 101;
    MPI_Accumulate(&mv[t], 1, MPI_INT, t, 4, 1, MPI_INT, MPI_MAX, iw);
  }
  /* REPLACE from the left neighbour only (deterministic), and from everyone into rank 0. */
  MPI_Accumulate(&rv, 1, MPI_INT, right, 2, 1, MPI_INT, MPI_REPLACE, iw);
  MPI_Accumulate(&g_rank, 1, MPI_INT, 0, 3, 1, MPI_INT, MPI_REPLACE, iw);
  /* Get_accumulate from the left only: fetches the initial 7. */
  int gold = -1;
  MPI_Get_accumulate(&ga, 1, MPI_INT, &gold, 1, MPI_INT, right, 5, 1, MPI_INT, MPI_SUM, iw);
  /* Everyone adds 2^rank to rank 0's long long: the fetched values must chain in some serial order. */
  const long long bit = 1LL << g_rank;
  long long lold = -1;
  MPI_Get_accumulate(&bit, 1, MPI_LONG_LONG, &lold, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, MPI_SUM, lw);
  /* Not MPI_MODE_NOPUT: the next epoch has (MPI_NO_OP) accumulate calls. */
  MPI_Win_fence(MPI_MODE_NOSTORE, iw);
  MPI_Win_fence(MPI_MODE_NOSTORE, dw);
  MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED, lw);
  if (g_rank == 0) {
    CHECK(iv[0] == S, "int SUM at rank 0: %d, expected %d", iv[0], S);
    CHECK(dv[0] == 0.5 * S, "double SUM at rank 0: %g, expected %g", dv[0], 0.5 * S);
    CHECK(iv[3] >= 0 && iv[3] < g_size, "concurrent REPLACE left %d, not one of the ranks", iv[3]);
  }
  CHECK(iv[1] == 10 * S, "int SUM from all: %d, expected %d", iv[1], 10 * S);
  CHECK(dv[1] == 0.25 + 0.125 * S, "double SUM from all: %g, expected %g", dv[1], 0.25 + 0.125 * S);
  CHECK(iv[2] == 1000 + left, "REPLACE from rank %d: %d", left, iv[2]);
  int wmax = -1000;
  for (int r = 0; r < g_size; ++r) {
    const int v = (r + 1) * (g_rank + 3) * 37 % 101;
    if (v > wmax) wmax = v;
  }
  CHECK(iv[4] == wmax, "MAX: %d, expected %d", iv[4], wmax);
  CHECK(gold == 7 && iv[5] == 7 + left + 1, "get_accumulate fetched %d (expected 7), left %d (expected %d)", gold,
        iv[5], 8 + left);
  long long* olds = malloc(sizeof(long long) * (size_t)g_size);
  MPI_Gather(&lold, 1, MPI_LONG_LONG, olds, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  if (g_rank == 0) {
    /* Walk from the initial value: the next rank fetched exactly the previous one plus its bit. */
    long long cur = 1000;
    int steps = 0;
    for (int found = 1; found && steps < g_size;) {
      found = 0;
      for (int r = 0; r < g_size; ++r)
        if (olds[r] == cur) {
          cur += 1LL << r;
          found = 1;
          ++steps;
          break;
        }
    }
    CHECK(steps == g_size && cur == lv && lv == 1000 + (1LL << g_size) - 1,
          "get_accumulate chain: %d of %d steps, reached %lld, window %lld", steps, g_size, cur, lv);
  }
  free(olds);
  /* MPI_NO_OP get_accumulate is an atomic read (the origin buffer is ignored). */
  int rd = -1, dummy = 0;
  double drd = -1;
  MPI_Get_accumulate(&dummy, 1, MPI_INT, &rd, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_NO_OP, iw);
  MPI_Get_accumulate(&dummy, 0, MPI_DOUBLE, &drd, 1, MPI_DOUBLE, right, 1, 1, MPI_DOUBLE, MPI_NO_OP, dw);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, iw);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, dw);
  CHECK(rd == S, "NO_OP read of rank 0: %d, expected %d", rd, S);
  CHECK(drd == 0.25 + 0.125 * S, "NO_OP read of rank %d's double: %g", right, drd);
  CHECK(iv[0] == (g_rank == 0 ? S : 0) && iv[1] == 10 * S, "NO_OP changed the window: %d %d", iv[0], iv[1]);
  free(mv);
  MPI_Win_free(&iw);
  MPI_Win_free(&dw);
  MPI_Win_free(&lw);
}

static void passive_target(void) {
  const int left = (g_rank + g_size - 1) % g_size, right = (g_rank + 1) % g_size;
  enum { N = 100 };
  const int total = N * g_size;
  /* An exclusive lock makes get-increment-put atomic: any lost update shows in the total. */
  int cnt = 0;
  MPI_Win win;
  MPI_Win_create(&cnt, sizeof cnt, sizeof cnt, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  for (int i = 0; i < N; ++i) {
    int v = -1;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Win_flush(0, win);
    ++v;
    MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  int fin = -1;
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
  MPI_Get(&fin, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
  MPI_Win_unlock(0, win);
  CHECK(fin == total, "exclusive-lock counter: %d, expected %d", fin, total);
  if (g_rank == 0) {
    /* Loads of one's own window are valid inside a lock epoch on oneself. */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    CHECK(cnt == total, "exclusive-lock counter in rank 0's memory: %d, expected %d", cnt, total);
    MPI_Win_unlock(0, win);
  }
  MPI_Win_free(&win);

  /* fetch_and_op under a shared lock: the fetched values over all ranks are 0 .. total-1, and each
   * rank's own are increasing (accumulates from one origin to one location are ordered, 11.7.2). */
  int64_t ctr = 0, one = 1;
  int64_t* got = malloc(sizeof(int64_t) * N);
  MPI_Win_create(&ctr, sizeof ctr, sizeof ctr, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
  for (int i = 0; i < N; ++i) {
    got[i] = -1;
    MPI_Fetch_and_op(&one, &got[i], MPI_INT64_T, 0, 0, MPI_SUM, win);
    if (i % 25 == 24) MPI_Win_flush(0, win);
  }
  MPI_Win_unlock(0, win);
  int incr = 1;
  for (int i = 1; i < N; ++i) incr &= got[i] > got[i - 1];
  CHECK(incr, "one origin's fetch_and_op results are not increasing: %lld %lld %lld ..", (long long)got[0],
        (long long)got[1], (long long)got[2]);
  int64_t* all = g_rank == 0 ? malloc(sizeof(int64_t) * (size_t)total) : NULL;
  MPI_Gather(got, N, MPI_INT64_T, all, N, MPI_INT64_T, 0, MPI_COMM_WORLD);
  if (g_rank == 0) {
    qsort(all, (size_t)total, sizeof(int64_t), cmp_i64);
    int bad = -1;
    for (int i = 0; i < total && bad < 0; ++i)
      if (all[i] != i) bad = i;
    CHECK(bad < 0, "fetch_and_op values are not a permutation of 0..%d: sorted[%d] = %lld", total - 1, bad,
          bad < 0 ? 0LL : (long long)all[bad]);
    free(all);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  int64_t now = -1;
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
  MPI_Fetch_and_op(NULL, &now, MPI_INT64_T, 0, 0, MPI_NO_OP, win);
  MPI_Win_unlock(0, win);
  CHECK(now == total, "fetch_and_op counter: %lld, expected %d", (long long)now, total);
  MPI_Win_free(&win);
  free(got);

  /* compare_and_swap from -1 to one's rank: one winner, and every loser saw the winner's rank. */
  int ticket = -1, minus1 = -1, prev = -2;
  MPI_Win_create(&ticket, sizeof ticket, sizeof ticket, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
  MPI_Compare_and_swap(&g_rank, &minus1, &prev, MPI_INT, 0, 0, win);
  MPI_Win_unlock(0, win);
  int won = prev == -1, winners = 0, winner = -1, mine = won ? g_rank : -1;
  MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &winner, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  CHECK(winners == 1, "%d ranks won the compare_and_swap", winners);
  CHECK(won || prev == winner, "losing compare_and_swap fetched %d, the winner is %d", prev, winner);
  /* A non-matching compare fetches the value and leaves it. */
  int other = 99, wrong = -5, prev2 = -2, fin2 = -2;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
  MPI_Compare_and_swap(&other, &wrong, &prev2, MPI_INT, 0, 0, win);
  MPI_Win_flush(0, win);
  MPI_Get(&fin2, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
  MPI_Win_unlock(0, win);
  CHECK(prev2 == winner && fin2 == winner, "failed compare_and_swap: fetched %d, value %d, expected %d", prev2, fin2,
        winner);
  MPI_Win_free(&win);

  /* lock_all: a put to every rank, element [rank]; flush_local_all frees the origin buffers,
   * flush_all completes them remotely. */
  int* wb = malloc(sizeof(int) * (size_t)g_size);
  int* out = malloc(sizeof(int) * (size_t)g_size);
  for (int t = 0; t < g_size; ++t) {
    wb[t] = -1;
    out[t] = g_rank * 1000 + t;
  }
  MPI_Win_create(wb, sizeof(int) * (size_t)g_size, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_lock_all(0, win);
  for (int t = 0; t < g_size; ++t) MPI_Put(&out[t], 1, MPI_INT, t, g_rank, 1, MPI_INT, win);
  MPI_Win_flush_local_all(win);
  for (int t = 0; t < g_size; ++t) out[t] = -7; /* reusing the buffers must not change what arrives */
  MPI_Win_flush_all(win);
  sync_local(win);
  int ok = 1;
  for (int r = 0; r < g_size; ++r) ok &= wb[r] == r * 1000 + g_rank;
  CHECK(ok, "lock_all puts from every rank: wb[0] = %d, wb[%d] = %d", wb[0], g_size - 1, wb[g_size - 1]);
  int g1 = -1, g2 = -1;
  MPI_Get(&g1, 1, MPI_INT, right, g_rank, 1, MPI_INT, win);
  MPI_Win_flush(right, win);
  CHECK(g1 == g_rank * 1000 + right, "get + flush from rank %d: %d", right, g1);
  MPI_Get(&g2, 1, MPI_INT, left, g_rank, 1, MPI_INT, win);
  MPI_Win_flush_local(left, win); /* local completion of a get means the data has arrived */
  CHECK(g2 == g_rank * 1000 + left, "get + flush_local from rank %d: %d", left, g2);
  MPI_Barrier(MPI_COMM_WORLD); /* everyone has read wb before it is overwritten */
  const int v2 = g_rank * 1000 + right + 500;
  MPI_Put(&v2, 1, MPI_INT, right, g_rank, 1, MPI_INT, win);
  MPI_Win_flush(right, win);
  sync_local(win);
  CHECK(wb[left] == left * 1000 + g_rank + 500, "put + flush from rank %d: %d", left, wb[left]);
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  free(wb);
  free(out);

  /* Shared locks are concurrent: every rank holds one on rank 0 across a barrier (a shared lock
   * that excluded would deadlock here), reading rank 0's and then the left neighbour's data. */
  int sv[4], r0[4] = {-1, -1, -1, -1}, rl[4] = {-1, -1, -1, -1};
  for (int k = 0; k < 4; ++k) sv[k] = g_rank * 10 + k;
  MPI_Win_create(sv, sizeof sv, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
  MPI_Get(r0, 4, MPI_INT, 0, 0, 4, MPI_INT, win);
  MPI_Win_flush(0, win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_unlock(0, win);
  MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win);
  MPI_Get(rl, 4, MPI_INT, left, 0, 4, MPI_INT, win);
  MPI_Win_unlock(left, win);
  CHECK(r0[0] == 0 && r0[1] == 1 && r0[3] == 3, "shared-lock get from rank 0: %d %d %d %d", r0[0], r0[1], r0[2], r0[3]);
  CHECK(rl[0] == left * 10 && rl[3] == left * 10 + 3, "shared-lock get from rank %d: %d %d %d %d", left, rl[0], rl[1],
        rl[2], rl[3]);
  MPI_Win_free(&win);
}

static void request_based(void) {
  const int left = (g_rank + g_size - 1) % g_size, right = (g_rank + 1) % g_size;
  const int S = g_size * (g_size + 1) / 2;
  /* 0: put from the left; 1: read by the right; 2: SUM into rank 0; 3: get_accumulate from the left. */
  int w[4] = {-1, 500 + g_rank, 0, 7};
  MPI_Win win;
  MPI_Win_create(w, sizeof w, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_lock_all(0, win);
  const int pv = 100 + g_rank, av = g_rank + 1, gv = g_rank + 1;
  int rget = -1, fetched = -1;
  MPI_Request rq[4];
  MPI_Rput(&pv, 1, MPI_INT, right, 0, 1, MPI_INT, win, &rq[0]);
  MPI_Rget(&rget, 1, MPI_INT, left, 1, 1, MPI_INT, win, &rq[1]);
  MPI_Raccumulate(&av, 1, MPI_INT, 0, 2, 1, MPI_INT, MPI_SUM, win, &rq[2]);
  MPI_Rget_accumulate(&gv, 1, MPI_INT, &fetched, 1, MPI_INT, right, 3, 1, MPI_INT, MPI_SUM, win, &rq[3]);
  MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
  /* A completed rget / rget_accumulate request has its data in the origin buffer. */
  CHECK(rget == 500 + left, "MPI_Rget from rank %d: %d", left, rget);
  MPI_Status st[4];
  MPI_Waitall(4, rq, st);
  CHECK(fetched == 7, "MPI_Rget_accumulate fetched %d, expected 7", fetched);
  CHECK(rq[0] == MPI_REQUEST_NULL && rq[3] == MPI_REQUEST_NULL, "completed RMA requests are freed");
  MPI_Win_flush_all(win);
  sync_local(win);
  CHECK(w[0] == 100 + left, "MPI_Rput from rank %d: %d", left, w[0]);
  if (g_rank == 0) CHECK(w[2] == S, "MPI_Raccumulate SUM at rank 0: %d, expected %d", w[2], S);
  CHECK(w[3] == 7 + left + 1, "MPI_Rget_accumulate from rank %d left %d", left, w[3]);
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
}

static void pscw(void) {
  const int left = (g_rank + g_size - 1) % g_size, right = (g_rank + 1) % g_size;
  int buf[4] = {-1, -1, -1, -1};
  MPI_Win win;
  MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Group world, lg, rg;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &left, &lg);
  MPI_Group_incl(world, 1, &right, &rg);
  int src[4];
  for (int k = 0; k < 4; ++k) src[k] = g_rank * 10 + k;
  /* Exposed to the left neighbour, accessing the right one. */
  MPI_Win_post(lg, 0, win);
  MPI_Win_start(rg, 0, win);
  MPI_Put(src, 4, MPI_INT, right, 0, 4, MPI_INT, win);
  MPI_Win_complete(win);
  MPI_Win_wait(win);
  CHECK(buf[0] == left * 10 && buf[1] == left * 10 + 1 && buf[3] == left * 10 + 3,
        "PSCW put from rank %d: %d %d %d %d", left, buf[0], buf[1], buf[2], buf[3]);
  /* Again, completing the exposure epoch by polling MPI_Win_test. */
  for (int k = 0; k < 4; ++k) src[k] = g_rank * 10 + 5 + k;
  int got = -1;
  MPI_Win_post(lg, 0, win);
  MPI_Win_start(rg, 0, win);
  MPI_Put(src, 2, MPI_INT, right, 2, 2, MPI_INT, win);
  MPI_Get(&got, 1, MPI_INT, right, 0, 1, MPI_INT, win);
  MPI_Win_complete(win);
  int flag = 0;
  long polls = 0;
  const double deadline = MPI_Wtime() + 60.0;
  while (!flag && MPI_Wtime() < deadline) {
    MPI_Win_test(win, &flag);
    ++polls;
  }
  CHECK(flag, "MPI_Win_test not true after 60 s (%ld polls)", polls);
  if (!flag) MPI_Win_wait(win); /* the exposure epoch is still open: close it to go on */
  CHECK(buf[0] == left * 10 && buf[2] == left * 10 + 5 && buf[3] == left * 10 + 6,
        "PSCW + win_test from rank %d: %d %d %d %d", left, buf[0], buf[1], buf[2], buf[3]);
  CHECK(got == g_rank * 10, "PSCW get from rank %d: %d", right, got);
  MPI_Group_free(&lg);
  MPI_Group_free(&rg);
  MPI_Group_free(&world);
  MPI_Win_free(&win);
}

static void dynamic_window(void) {
  const int left = (g_rank + g_size - 1) % g_size, right = (g_rank + 1) % g_size;
  MPI_Win win;
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  int flavor_flag = 0, *flavor = NULL;
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flavor_flag);
  CHECK(flavor_flag && flavor && *flavor == MPI_WIN_FLAVOR_DYNAMIC, "dynamic window flavor %d",
        flavor ? *flavor : -1);
  int* a = malloc(8 * sizeof(int));
  for (int k = 0; k < 8; ++k) a[k] = -1;
  MPI_Win_attach(win, a, 8 * sizeof(int));
  MPI_Aint addr, *addrs = malloc(sizeof(MPI_Aint) * (size_t)g_size);
  MPI_Get_address(a, &addr);
  MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
  /* Displacements in a dynamic window are absolute addresses (disp_unit 1). */
  int src[4];
  for (int k = 0; k < 4; ++k) src[k] = g_rank * 100 + k;
  MPI_Win_lock_all(0, win);
  MPI_Put(src, 4, MPI_INT, right, MPI_Aint_add(addrs[right], 2 * sizeof(int)), 4, MPI_INT, win);
  MPI_Win_flush(right, win);
  sync_local(win);
  int ok = 1;
  for (int k = 0; k < 8; ++k) ok &= a[k] == (k >= 2 && k < 6 ? left * 100 + k - 2 : -1);
  CHECK(ok, "dynamic put from rank %d: a[1..6] = %d %d %d %d %d %d", left, a[1], a[2], a[3], a[4], a[5], a[6]);
  /* Get it back into MPI_BOTTOM + an absolute-address origin datatype. */
  int back[4] = {-9, -9, -9, -9};
  MPI_Aint back_addr;
  MPI_Get_address(back, &back_addr);
  MPI_Datatype abs_t;
  int four = 4;
  MPI_Type_create_hindexed(1, &four, &back_addr, MPI_INT, &abs_t);
  MPI_Type_commit(&abs_t);
  MPI_Get(MPI_BOTTOM, 1, abs_t, right, MPI_Aint_add(addrs[right], 2 * sizeof(int)), 4, MPI_INT, win);
  MPI_Win_flush(right, win);
  MPI_Type_free(&abs_t);
  CHECK(back[0] == src[0] && back[1] == src[1] && back[3] == src[3], "dynamic get from rank %d: %d %d %d %d", right,
        back[0], back[1], back[2], back[3]);
  MPI_Win_unlock_all(win);
  /* A second region attached later; both are then reachable. */
  double* b = malloc(3 * sizeof(double));
  for (int k = 0; k < 3; ++k) b[k] = -1.0;
  MPI_Win_attach(win, b, 3 * sizeof(double));
  MPI_Aint baddr, *baddrs = malloc(sizeof(MPI_Aint) * (size_t)g_size);
  MPI_Get_address(b, &baddr);
  MPI_Allgather(&baddr, 1, MPI_AINT, baddrs, 1, MPI_AINT, MPI_COMM_WORLD);
  const double dsrc[3] = {g_rank + 0.5, g_rank + 0.25, g_rank + 0.125};
  const int last = 4000 + g_rank;
  MPI_Win_lock_all(0, win);
  MPI_Put(dsrc, 3, MPI_DOUBLE, right, baddrs[right], 3, MPI_DOUBLE, win);
  MPI_Put(&last, 1, MPI_INT, right, MPI_Aint_add(addrs[right], 7 * sizeof(int)), 1, MPI_INT, win);
  MPI_Win_flush_all(win);
  sync_local(win);
  CHECK(b[0] == left + 0.5 && b[1] == left + 0.25 && b[2] == left + 0.125, "second region from rank %d: %g %g %g",
        left, b[0], b[1], b[2]);
  CHECK(a[7] == 4000 + left && a[2] == left * 100, "first region after the second attach: a[7] = %d, a[2] = %d", a[7],
        a[2]);
  MPI_Win_unlock_all(win);
  /* Nobody may access the regions once detached. */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_detach(win, a);
  MPI_Win_detach(win, b);
  MPI_Win_free(&win);
  free(a);
  free(b);
  free(addrs);
  free(baddrs);
}

static void alloc_mem(void) {
  const int left = (g_rank + g_size - 1) % g_size, right = (g_rank + 1) % g_size;
  enum { N = 64 };
  int* mem = NULL;
  int rc = MPI_Alloc_mem(N * sizeof(int), MPI_INFO_NULL, &mem);
  CHECK(rc == MPI_SUCCESS && mem != NULL, "MPI_Alloc_mem: rc %d, %p", rc, (void*)mem);
  for (int k = 0; k < N; ++k) mem[k] = -1;
  /* The window promises not to use locks: fences only. */
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "no_locks", "true");
  MPI_Win win;
  MPI_Win_create(mem, N * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &win);
  MPI_Info_free(&info);
  int src[N];
  for (int k = 0; k < N; ++k) src[k] = g_rank * 1000 + k;
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  MPI_Put(src, N, MPI_INT, right, 0, N, MPI_INT, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  int ok = 1;
  for (int k = 0; k < N; ++k) ok &= mem[k] == left * 1000 + k;
  CHECK(ok, "put into MPI_Alloc_mem memory from rank %d: %d .. %d", left, mem[0], mem[N - 1]);
  MPI_Win_free(&win);
  rc = MPI_Free_mem(mem);
  CHECK(rc == MPI_SUCCESS, "MPI_Free_mem: rc %d", rc);
}

static int g_copies, g_deletes, g_deleted_value;
static int g_extra;
static int win_copy(MPI_Win win, int key, void* extra, void* in, void* out, int* flag) {
  (void)win, (void)key, (void)extra, (void)in, (void)out;
  ++g_copies; /* windows are never duplicated, so never called */
  *flag = 0;
  return MPI_SUCCESS;
}
static int win_delete(MPI_Win win, int key, void* val, void* extra) {
  (void)win, (void)key;
  ++g_deletes;
  g_deleted_value = extra == &g_extra ? *(int*)val : -999;
  return MPI_SUCCESS;
}
static int g_win_handler_calls, g_win_handler_code;
static void win_handler(MPI_Win* win, int* code, ...) {
  (void)win;
  ++g_win_handler_calls;
  g_win_handler_code = *code;
}

static void keyvals_errors_info(void) {
  int mem[2] = {0, 0};
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  int key = MPI_KEYVAL_INVALID;
  MPI_Win_create_keyval(win_copy, win_delete, &key, &g_extra);
  CHECK(key != MPI_KEYVAL_INVALID, "MPI_Win_create_keyval gave MPI_KEYVAL_INVALID");
  static int v1 = 11, v2 = 22, v3 = 33;
  int* got = NULL;
  int flag = -1;
  MPI_Win_get_attr(win, key, &got, &flag);
  CHECK(flag == 0, "an unset attribute is found");
  MPI_Win_set_attr(win, key, &v1);
  MPI_Win_get_attr(win, key, &got, &flag);
  CHECK(flag == 1 && got == &v1, "get_attr: flag %d, %p, expected %p", flag, (void*)got, (void*)&v1);
  /* Setting again deletes the old value first (6.7.2). */
  MPI_Win_set_attr(win, key, &v2);
  CHECK(g_deletes == 1 && g_deleted_value == 11, "replacing an attribute: %d deletes, last of %d", g_deletes,
        g_deleted_value);
  MPI_Win_delete_attr(win, key);
  MPI_Win_get_attr(win, key, &got, &flag);
  CHECK(g_deletes == 2 && g_deleted_value == 22 && flag == 0, "delete_attr: %d deletes, last of %d, flag %d",
        g_deletes, g_deleted_value, flag);
  MPI_Win_set_attr(win, key, &v3);
  /* A freed keyval stays usable by the windows that still hold it. */
  const int key0 = key;
  MPI_Win_free_keyval(&key);
  CHECK(key == MPI_KEYVAL_INVALID, "MPI_Win_free_keyval left %d", key);
  MPI_Win_get_attr(win, key0, &got, &flag);
  CHECK(flag == 1 && got == &v3, "attribute after free_keyval: flag %d", flag);

  /* Errors: MPI_ERRORS_RETURN, then a target rank out of range. */
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  MPI_Win_get_errhandler(win, &eh);
  CHECK(eh == MPI_ERRORS_RETURN, "MPI_Win_get_errhandler is not MPI_ERRORS_RETURN");
  MPI_Errhandler_free(&eh);
  int x = 5, cls = -1;
  MPI_Win_fence(0, win);
  const int rc = MPI_Put(&x, 1, MPI_INT, g_size, 0, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  MPI_Error_class(rc, &cls);
  CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_RANK, "MPI_Put to rank %d: rc %d, class %d, expected MPI_ERR_RANK (%d)",
        g_size, rc, cls, MPI_ERR_RANK);
  CHECK(mem[0] == 0 && mem[1] == 0, "the failed put changed the window: %d %d", mem[0], mem[1]);
  /* Bad transfers are refused with their class, before anything moves (the argument checks'
     one-pass common case must fall back to the checks that name the error). */
  struct {
    const void* buf;
    int ocount;
    MPI_Datatype otype;
    int tcount;
    int expected;
    const char* what;
  } bad[] = {
      {&x, 1, MPI_INT, 2, MPI_ERR_TYPE, "origin and target sizes differ"},
      {&x, -1, MPI_INT, -1, MPI_ERR_COUNT, "a negative count"},
      {&x, 1, MPI_DATATYPE_NULL, 1, MPI_ERR_TYPE, "MPI_DATATYPE_NULL"},
      {NULL, 1, MPI_INT, 1, MPI_ERR_BUFFER, "a null buffer"},
  };
  MPI_Win_fence(0, win);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    const int prc = MPI_Put(bad[i].buf, bad[i].ocount, bad[i].otype, 0, 0, bad[i].tcount, MPI_INT, win);
    const int grc = MPI_Get((void*)bad[i].buf, bad[i].ocount, bad[i].otype, 0, 0, bad[i].tcount, MPI_INT, win);
    int pcls = -1, gcls = -1;
    MPI_Error_class(prc, &pcls);
    MPI_Error_class(grc, &gcls);
    CHECK(pcls == bad[i].expected && gcls == bad[i].expected, "MPI_Put/MPI_Get with %s: classes %d, %d, expected %d",
          bad[i].what, pcls, gcls, bad[i].expected);
  }
  MPI_Win_fence(0, win);
  CHECK(mem[0] == 0 && mem[1] == 0, "a refused transfer changed the window: %d %d", mem[0], mem[1]);
  /* A user handler is called with the code (MPI_Win_call_errhandler). */
  MPI_Errhandler mine;
  MPI_Win_create_errhandler(win_handler, &mine);
  MPI_Win_set_errhandler(win, mine);
  MPI_Errhandler_free(&mine);
  MPI_Win_call_errhandler(win, MPI_ERR_OTHER);
  CHECK(g_win_handler_calls == 1 && g_win_handler_code == MPI_ERR_OTHER, "window error handler: %d calls, code %d",
        g_win_handler_calls, g_win_handler_code);
  MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL);

  /* Info: get_info returns a new object the caller frees; set_info is collective. */
  MPI_Info info = MPI_INFO_NULL;
  MPI_Win_get_info(win, &info);
  int nkeys = -1;
  if (info != MPI_INFO_NULL) MPI_Info_get_nkeys(info, &nkeys);
  CHECK(info != MPI_INFO_NULL && nkeys >= 0, "MPI_Win_get_info: %s, %d keys", info == MPI_INFO_NULL ? "null" : "ok",
        nkeys);
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  CHECK(info == MPI_INFO_NULL, "MPI_Info_free");
  MPI_Info set;
  MPI_Info_create(&set);
  MPI_Info_set(set, "no_locks", "false");
  CHECK(MPI_Win_set_info(win, set) == MPI_SUCCESS, "MPI_Win_set_info");
  MPI_Info_free(&set);
  MPI_Win_get_info(win, &info);
  char val[MPI_MAX_INFO_VAL + 1] = "";
  flag = 0;
  if (info != MPI_INFO_NULL) MPI_Info_get(info, "no_locks", MPI_MAX_INFO_VAL, val, &flag);
  /* Hints may be ignored; if reported, it is the value in force. */
  CHECK(info != MPI_INFO_NULL && (!flag || strcmp(val, "false") == 0), "no_locks after set_info: \"%s\"", val);
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);

  /* Freeing the window deletes the remaining attribute. */
  MPI_Win_free(&win);
  CHECK(g_deletes == 3 && g_deleted_value == 33 && g_copies == 0, "MPI_Win_free: %d deletes, last of %d, %d copies",
        g_deletes, g_deleted_value, g_copies);
}

static void zero_size(void) {
  /* Odd ranks expose nothing (NULL, size 0); everyone writes element [rank] of every even rank. */
  const int exposes = g_rank % 2 == 0;
  int* buf = NULL;
  if (exposes) {
    buf = malloc(sizeof(int) * (size_t)g_size);
    for (int r = 0; r < g_size; ++r) buf[r] = -1;
  }
  MPI_Win win;
  MPI_Win_create(buf, exposes ? (MPI_Aint)sizeof(int) * g_size : 0, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Aint* asize = NULL;
  int flag = 0;
  MPI_Win_get_attr(win, MPI_WIN_SIZE, &asize, &flag);
  CHECK(flag && asize && *asize == (exposes ? (MPI_Aint)sizeof(int) * g_size : 0), "MPI_WIN_SIZE %ld",
        asize ? (long)*asize : -1L);
  const int v = g_rank + 1;
  int pn = -42, an = -43;
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  for (int t = 0; t < g_size; t += 2) MPI_Put(&v, 1, MPI_INT, t, g_rank, 1, MPI_INT, win);
  /* MPI_PROC_NULL targets are no-ops, origin buffers untouched. */
  MPI_Put(&v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win);
  MPI_Get(&pn, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win);
  MPI_Accumulate(&v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, MPI_SUM, win);
  MPI_Get_accumulate(&v, 1, MPI_INT, &an, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, MPI_SUM, win);
  MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT, win);
  CHECK(pn == -42 && an == -43, "MPI_PROC_NULL get changed the buffer: %d %d", pn, an);
  if (exposes) {
    int ok = 1;
    for (int r = 0; r < g_size; ++r) ok &= buf[r] == r + 1;
    CHECK(ok, "puts into even rank %d: %d .. %d", g_rank, buf[0], buf[g_size - 1]);
  }
  /* Read back from the last even rank. */
  const int last_even = (g_size - 1) / 2 * 2;
  int back = -1;
  MPI_Get(&back, 1, MPI_INT, last_even, g_rank, 1, MPI_INT, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  CHECK(back == g_rank + 1, "get from rank %d: %d", last_even, back);
  /* Passive target on the same window: lock_all, read rank 0. */
  int r0 = -1;
  MPI_Win_lock_all(0, win);
  MPI_Get(&r0, 1, MPI_INT, 0, g_rank, 1, MPI_INT, win);
  MPI_Win_unlock_all(win);
  CHECK(r0 == g_rank + 1, "lock_all get from rank 0: %d", r0);
  MPI_Win_free(&win);
  free(buf);
}

static void concurrent_accumulate(void) {
  /* 1000 accumulates in all, split over the ranks, into element 0 of rank 0, interleaved with
   * atomic reads (fetch_and_op MPI_NO_OP) that must never go backwards or miss this rank's own. */
  enum { TOTAL = 1000 };
  const int mine = TOTAL / g_size + (g_rank < TOTAL % g_size);
  int expect = 0;
  for (int r = 0; r < g_size; ++r) expect += (TOTAL / g_size + (r < TOTAL % g_size)) * (r + 1);
  int w = 0;
  MPI_Win win;
  MPI_Win_create(&w, sizeof w, sizeof w, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  const int c = g_rank + 1;
  int last = 0, monotone = 1, covers = 1;
  MPI_Win_lock_all(0, win);
  for (int i = 0; i < mine; ++i) {
    MPI_Accumulate(&c, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);
    if (i % 100 == 99) {
      int now = -1;
      MPI_Fetch_and_op(NULL, &now, MPI_INT, 0, 0, MPI_NO_OP, win);
      MPI_Win_flush(0, win);
      monotone &= now >= last;
      covers &= now >= (i + 1) * c;
      last = now;
    }
  }
  MPI_Win_unlock_all(win);
  CHECK(monotone && covers && last <= expect, "atomic reads while accumulating: last %d (of %d)", last, expect);
  MPI_Barrier(MPI_COMM_WORLD);
  int fin = -1;
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
  MPI_Get(&fin, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
  MPI_Win_unlock(0, win);
  CHECK(fin == expect, "%d accumulates from %d ranks: %d, expected %d", TOTAL, g_size, fin, expect);
  MPI_Win_free(&win);
}

static void int64_atomics(void) {
  /* 8-byte integers go by the NIC's own atomics (fetch-and-add, compare-and-swap loops): every
   * rank at once, on the same elements of rank 0, SUM, MAX, REPLACE, BXOR and compare-and-swap,
   * and a strided get_accumulate on every rank's window. */
  enum { N = 40, E = 8 };
  int64_t w[E];
  for (int k = 0; k < E; ++k) w[k] = 0;
  w[3] = -1;
  MPI_Win win;
  MPI_Win_create(w, sizeof w, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Barrier(MPI_COMM_WORLD);
  int64_t one = 1, old = 0, cas_old = -7, me = g_rank, mask = (int64_t)1 << (g_rank % 60);
  MPI_Win_lock_all(0, win);
  for (int i = 0; i < N; ++i) {
    const int64_t v = (int64_t)g_rank * 1000 + i;
    MPI_Accumulate(&one, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, MPI_SUM, win);
    MPI_Accumulate(&v, 1, MPI_INT64_T, 0, 1, 1, MPI_INT64_T, MPI_MAX, win);
    MPI_Fetch_and_op(&me, &old, MPI_INT64_T, 0, 2, MPI_REPLACE, win);
    if (i == 0) {
      MPI_Compare_and_swap(&me, &(int64_t){-1}, &cas_old, MPI_INT64_T, 0, 3, win);
      MPI_Accumulate(&mask, 1, MPI_INT64_T, 0, 4, 1, MPI_INT64_T, MPI_BXOR, win);
    }
  }
  MPI_Win_unlock_all(win);
  int won = cas_old == -1, winners = 0;
  MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(winners == 1 && (cas_old == -1 || (cas_old >= 0 && cas_old < g_size)), "int64 CAS: %d winners, got %lld",
        winners, (long long)cas_old);
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) {
    int64_t xmask = 0;
    for (int r = 0; r < g_size; ++r) xmask ^= (int64_t)1 << (r % 60);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    CHECK(w[0] == (int64_t)N * g_size, "int64 SUM: %lld, expected %lld", (long long)w[0], (long long)N * g_size);
    CHECK(w[1] == (int64_t)(g_size - 1) * 1000 + N - 1, "int64 MAX: %lld", (long long)w[1]);
    CHECK(w[2] >= 0 && w[2] < g_size, "int64 REPLACE left %lld", (long long)w[2]);
    CHECK(w[3] >= 0 && w[3] < g_size, "int64 CAS left %lld", (long long)w[3]);
    CHECK(w[4] == xmask, "int64 BXOR: %llx, expected %llx", (long long)w[4], (long long)xmask);
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  /* Strided: add 1..4 to elements 0, 2, 4, 6 of the right neighbour's window, fetching the old. */
  const int right = (g_rank + 1) % g_size;
  MPI_Datatype every2;
  MPI_Type_vector(4, 1, 2, MPI_INT64_T, &every2);
  MPI_Type_commit(&every2);
  for (int k = 0; k < E; ++k) w[k] = 100 + k;
  MPI_Win_fence(0, win);
  const int64_t add[4] = {1, 2, 3, 4};
  int64_t got[4] = {0, 0, 0, 0};
  MPI_Get_accumulate(add, 4, MPI_INT64_T, got, 4, MPI_INT64_T, right, 0, 1, every2, MPI_SUM, win);
  MPI_Win_fence(0, win);
  CHECK(got[0] == 100 && got[1] == 102 && got[2] == 104 && got[3] == 106, "strided int64 get_accumulate fetched %lld %lld %lld %lld",
        (long long)got[0], (long long)got[1], (long long)got[2], (long long)got[3]);
  CHECK(w[0] == 101 && w[1] == 101 && w[2] == 104 && w[3] == 103 && w[4] == 107 && w[6] == 110 && w[7] == 107,
        "strided int64 accumulate left %lld %lld %lld %lld %lld %lld %lld %lld", (long long)w[0], (long long)w[1],
        (long long)w[2], (long long)w[3], (long long)w[4], (long long)w[5], (long long)w[6], (long long)w[7]);
  MPI_Type_free(&every2);
  MPI_Win_free(&win);
}

/* MPI_Win_allocate_shared over the ranks of one host: rank r owns r + 1 ints (the last rank
 * none), laid out back to back; every rank reads every other's part by plain loads after a fence,
 * writes into its right neighbour's part by MPI_Put and by a store, and MPI_Win_shared_query names
 * each part (MPI_PROC_NULL: the first with memory). */
static void shared_window(void) {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &node);
  int me = -1, n = -1;
  MPI_Comm_rank(node, &me);
  MPI_Comm_size(node, &n);
  const int mine = me == n - 1 && n > 1 ? 0 : me + 1;
  int* base = NULL;
  MPI_Win win;
  MPI_Win_allocate_shared((MPI_Aint)(mine * sizeof(int)), sizeof(int), MPI_INFO_NULL, node, &base, &win);
  int* flavor = NULL;
  int flag = 0;
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
  CHECK(flag && *flavor == MPI_WIN_FLAVOR_SHARED, "shared window flavour %d", flag ? *flavor : -1);
  for (int i = 0; i < mine; ++i) base[i] = 1000 * me + i;
  MPI_Win_fence(0, win);
  int* prev_end = NULL;
  for (int r = 0; r < n; ++r) {
    MPI_Aint sz = -1;
    int du = -1;
    int* p = NULL;
    MPI_Win_shared_query(win, r, &sz, &du, &p);
    const int want = r == n - 1 && n > 1 ? 0 : r + 1;
    CHECK(sz == (MPI_Aint)(want * sizeof(int)) && du == (int)sizeof(int), "shared_query(%d): size %ld unit %d", r, (long)sz, du);
    if (r > 0 && want > 0) CHECK(p == prev_end, "rank %d's part does not follow rank %d's", r, r - 1);
    if (want > 0) prev_end = p + want;
    int ok = 1;
    for (int i = 0; i < want; ++i) ok &= p[i] == 1000 * r + i;
    CHECK(ok, "loads from rank %d's part", r);
  }
  MPI_Aint sz = -1;
  int du = -1;
  int* first = NULL;
  MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &first);
  int* zero = NULL;
  MPI_Win_shared_query(win, 0, &sz, &du, &zero);
  CHECK(first == zero && sz == (MPI_Aint)sizeof(int), "shared_query(MPI_PROC_NULL) is rank 0's part");
  /* a put into the right neighbour's first int, then a store into its last */
  const int right = (me + 1) % n;
  const int rsize = right == n - 1 && n > 1 ? 0 : right + 1;
  int v = -me - 1;
  MPI_Win_fence(0, win);
  if (rsize > 0) MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  if (rsize > 1) {
    int* rp = NULL;
    MPI_Win_shared_query(win, right, &sz, &du, &rp);
    rp[rsize - 1] = 7777 + me;
  }
  MPI_Win_fence(0, win);
  const int left = (me + n - 1) % n;
  if (mine > 0) CHECK(base[0] == -left - 1, "put into the shared part: %d", base[0]);
  if (mine > 1) CHECK(base[mine - 1] == 7777 + left, "store into the shared part: %d", base[mine - 1]);
  MPI_Win_free(&win);
  /* a window that is not shared has nothing to query */
  MPI_Win plain;
  int* pb = NULL;
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, node, &pb, &plain);
  MPI_Win_set_errhandler(plain, MPI_ERRORS_RETURN);
  int cls = -1;
  MPI_Error_class(MPI_Win_shared_query(plain, 0, &sz, &du, &pb), &cls);
  CHECK(cls == MPI_ERR_RMA_FLAVOR, "shared_query of an allocated window: class %d", cls);
  MPI_Win_free(&plain);
  MPI_Comm_free(&node);
}

int main(int argc, char** argv) {
  start(&argc, &argv);
  int64_atomics();
  fence_put_get();
  allocate_attrs();
  accumulates();
  passive_target();
  request_based();
  pscw();
  dynamic_window();
  alloc_mem();
  keyvals_errors_info();
  zero_size();
  concurrent_accumulate();
  shared_window();
  return finish("rma");
}
