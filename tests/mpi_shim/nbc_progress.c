/* Nonblocking collectives move on while a rank computes outside MPI, when the rank has a
 * communication-assist thread (AUGUR_ASSIST=on): the assist thread steps them.
 *
 * Rank 1 starts each collective and then computes, calling no MPI function, until every other
 * rank has finished the same collective. Each collective is chosen so that some other rank cannot
 * finish it before rank 1 has taken a second step (received, then sent on): a broadcast that rank
 * 1 relays in the binomial tree, a dissemination barrier, a recursive-doubling allreduce, a
 * pairwise alltoall. The others tell rank 1 that they finished by MPI_Put into its window (RDMA
 * WRITE, no CPU of rank 1 involved); rank 1 reads its window memory while it computes.
 *
 *   nbc_progress [SECONDS]          pass if every collective finished elsewhere while rank 1
 *                                   computed (waiting at most SECONDS, default 120)
 *   nbc_progress --expect-stall S   the control: pass if none did within S seconds (no assist
 *                                   thread: nothing steps a collective outside MPI calls)
 * Needs 4 to 65 ranks. */
#include <string.h>
#include <time.h>

#include "check.h"

enum { N = 1024 };

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int val(int r, int i) { return (r + 1) * 1000 + i % 997; }

/* Rank 1 computes until every slot of its window holds `round`, at most `seconds`; returns the
 * number of other ranks that finished in time. */
static int compute_until_told(const int* slots, int round, double seconds, double* took) {
  const double t0 = now();
  volatile double x = 1.0;
  int done = 0;
  for (;;) {
    done = 0;
    for (int r = 0; r < g_size; ++r) {
      if (r != 1 && __atomic_load_n(&slots[r], __ATOMIC_ACQUIRE) == round) ++done;
    }
    if (done == g_size - 1 || now() - t0 > seconds) break;
    for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;  // the computation
  }
  *took = now() - t0;
  return done;
}

int main(int argc, char** argv) {
  start(&argc, &argv);
  int stall = argc > 2 && strcmp(argv[1], "--expect-stall") == 0;
  double seconds = argc > 1 ? atof(argv[stall ? 2 : 1]) : 120.0;
  if (seconds <= 0) seconds = 120.0;
  if (g_size < 4 || g_size > 65) {
    if (g_rank == 0) fprintf(stderr, "nbc_progress needs 4 to 65 ranks\n");
    MPI_Finalize();
    return 2;
  }
  int* slots = NULL;
  MPI_Win win;
  CHECK(MPI_Win_allocate((MPI_Aint)(sizeof(int) * (size_t)g_size), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &slots,
                         &win) == MPI_SUCCESS, "MPI_Win_allocate");
  memset(slots, 0, sizeof(int) * (size_t)g_size);
  MPI_Barrier(MPI_COMM_WORLD);

  int* in = malloc(sizeof(int) * N * (size_t)g_size);
  int* out = malloc(sizeof(int) * N * (size_t)g_size);
  const char* names[] = {"MPI_Ibcast", "MPI_Ibarrier", "MPI_Iallreduce", "MPI_Ialltoall"};
  const int kinds = 4;
  int finished_elsewhere = 0;
  for (int k = 0; k < kinds; ++k) {
    const int round = k + 1;
    for (int i = 0; i < N * g_size; ++i) {
      in[i] = val(g_rank, i);
      out[i] = -1;
    }
    MPI_Request rq;
    /* Rank 1 starts first and says so; the others start when told. So nothing of theirs has
     * arrived when rank 1's start takes its first step: its second is taken outside that call. */
    if (g_rank != 1) MPI_Recv(NULL, 0, MPI_BYTE, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* The broadcast's root puts rank 1 at relative rank 2, which relays to relative rank 3. */
    const int root = (1 - 2 + g_size) % g_size;
    if (k == 0) {
      if (g_rank != root) memset(in, 0, sizeof(int) * N);
      MPI_Ibcast(in, N, MPI_INT, root, MPI_COMM_WORLD, &rq);
    } else if (k == 1) {
      MPI_Ibarrier(MPI_COMM_WORLD, &rq);
    } else if (k == 2) {
      MPI_Iallreduce(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq);
    } else {
      MPI_Ialltoall(in, N, MPI_INT, out, N, MPI_INT, MPI_COMM_WORLD, &rq);
    }
    if (g_rank == 1) {
      /* Started by MPI_Isend, which makes no progress (a blocking send could take the step). */
      MPI_Request told[64];
      int nt = 0;
      for (int r = 0; r < g_size && nt < 64; ++r) {
        if (r != 1) MPI_Isend(NULL, 0, MPI_BYTE, r, 99, MPI_COMM_WORLD, &told[nt++]);
      }
      double took = 0;
      const int done = compute_until_told(slots, round, seconds, &took);
      if (done == g_size - 1) ++finished_elsewhere;
      printf("rank 1: %s: %d of %d other ranks finished while rank 1 computed outside MPI (%.3f s)\n", names[k], done,
             g_size - 1, took);
      fflush(stdout);
      CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE) == MPI_SUCCESS, "%s: wait", names[k]);
      CHECK(MPI_Waitall(nt, told, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "%s: the start messages", names[k]);
    } else {
      CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE) == MPI_SUCCESS, "%s: wait", names[k]);
      MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
      MPI_Put(&round, 1, MPI_INT, 1, g_rank, 1, MPI_INT, win);
      MPI_Win_unlock(1, win);
    }
    /* The data, at every rank. */
    int bad = 0;
    for (int i = 0; i < N; ++i) {
      if (k == 0 && in[i] != val(root, i)) ++bad;
      if (k == 2) {
        long want = 0;
        for (int r = 0; r < g_size; ++r) want += val(r, i);
        if (out[i] != (int)want) ++bad;
      }
    }
    if (k == 3) {
      for (int r = 0; r < g_size; ++r) {
        for (int i = 0; i < N; ++i) {
          if (out[r * N + i] != val(r, g_rank * N + i)) ++bad;
        }
      }
    }
    CHECK(bad == 0, "%s: %d wrong elements", names[k], bad);
    MPI_Barrier(MPI_COMM_WORLD);  // rank 1 has every flag of this round before the next
  }
  if (g_rank == 1) {
    if (stall) {
      CHECK(finished_elsewhere == 0, "%d of %d collectives finished elsewhere without an MPI call at rank 1 and without an "
            "assist thread: the control cannot tell background progress from none", finished_elsewhere, kinds);
    } else {
      CHECK(finished_elsewhere == kinds, "only %d of %d collectives moved on while rank 1 computed outside MPI",
            finished_elsewhere, kinds);
    }
  }
  MPI_Win_free(&win);
  free(in);
  free(out);
  return finish(stall ? "nbc_progress --expect-stall" : "nbc_progress");
}
