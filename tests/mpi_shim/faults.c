/* Faults a real job meets, for faults.sh. Survivors run with MPI_ERRORS_RETURN and print one line
 *   rank R: detected: CLASS after T ms
 * when they learn of the failure (T from the moment the victim was about to die, as announced to
 * them by a message sent just before), then exit 0. Modes:
 *   compute SECS    ranks talk, then compute SECS seconds with a message every second; exit 0
 *   late-init SECS  rank 1 sleeps SECS before MPI_Init (a rank that never reaches the fence)
 *   flood           rank 1 floods rank 0 with eager messages and is SIGKILLed mid-flood
 *   rendezvous      rank 1 sends 32 MiB by rendezvous and is SIGKILLed while rank 0 READs it
 *   collective      the last rank is SIGKILLed inside a loop of allreduces
 *   hang            every rank computes forever (for launcher kill / SIGTERM tests)
 *   link SECS       pairs swap checked eager and rendezvous messages for SECS seconds; a rank
 *                   that meets an error prints when (wall clock) and exits (for mpi_link.sh) */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int rank, size;

static void report(int rc, double since) {
  char name[MPI_MAX_ERROR_STRING];
  int len = 0, cls = 0;
  MPI_Error_class(rc, &cls);
  MPI_Error_string(cls, name, &len);
  printf("rank %d: detected: %s (class %d) after %.0f ms\n", rank, cls == MPI_ERR_PROC_FAILED ? "MPI_ERR_PROC_FAILED" : name,
         cls, now_ms() - since);
  fflush(stdout);
  _exit(cls == MPI_ERR_PROC_FAILED ? 0 : 4);
}

/* link mode: when (wall clock, comparable with the script's `date`) the error was seen. */
static void link_report(int rc, long exchanges) {
  struct timespec w;
  clock_gettime(CLOCK_REALTIME, &w);
  int cls = 0;
  MPI_Error_class(rc, &cls);
  printf("rank %d: detected: %s (class %d) at %lld.%03ld after %ld exchanges\n", rank,
         cls == MPI_ERR_PROC_FAILED ? "MPI_ERR_PROC_FAILED" : "another class", cls, (long long)w.tv_sec,
         w.tv_nsec / 1000000, exchanges);
  fflush(stdout);
  _exit(cls == MPI_ERR_PROC_FAILED ? 0 : 4);
}

static void die(void) {
  fflush(stdout);
  raise(SIGKILL);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  const int secs = argc > 2 ? atoi(argv[2]) : 0;
  if (strcmp(mode, "late-init") == 0 && getenv("AUGUR_RANK") && atoi(getenv("AUGUR_RANK")) == 1) sleep((unsigned)secs);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rc = MPI_SUCCESS;
  double t0 = 0;
  if (strcmp(mode, "compute") == 0 || strcmp(mode, "late-init") == 0) {
    const int peer = rank ^ 1;
    for (int s = 0; s <= secs; ++s) {
      int out = rank * 1000 + s, in = -1;
      if (peer < size) {
        rc = MPI_Sendrecv(&out, 1, MPI_INT, peer, s, &in, 1, MPI_INT, peer, s, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || in != peer * 1000 + s) {
          printf("rank %d: step %d: rc %d, got %d\n", rank, s, rc, in);
          return 1;
        }
      }
      if (s < secs) sleep(1); /* computation: no MPI call at all */
    }
    rc = MPI_Barrier(MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS) rc = MPI_Finalize();
    if (rank == 0 && rc == MPI_SUCCESS) printf("computed %d s between MPI calls, all messages verified\n", secs);
    return rc == MPI_SUCCESS ? 0 : 1;
  }
  if (strcmp(mode, "link") == 0) {
    /* Traffic for link faults (mpi_link.sh cuts the link under it): pairs (0,1), (2,3)... swap
     * an eager and a rendezvous message, every byte checked, for SECS seconds (rank 0's clock).
     * On the first error a rank prints the wall-clock time it learnt of it, which the script
     * compares with the moment it cut the link. */
    enum { kEager = 1024, kRndv = 256 << 10 };
    static unsigned char out[kRndv], in[kRndv];
    const int peer = rank ^ 1;
    const double start = now_ms();
    long exchanges = 0;
    for (int stop = 0; !stop && peer < size; ++exchanges) {
      const int n = exchanges % 2 ? kRndv : kEager;
      for (int i = 0; i < n; ++i) out[i] = (unsigned char)(exchanges * 7 + rank * 13 + i);
      rc = MPI_Sendrecv(out, n, MPI_BYTE, peer, 9, in, n, MPI_BYTE, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS) link_report(rc, exchanges);
      for (int i = 0; i < n; ++i) {
        if (in[i] != (unsigned char)(exchanges * 7 + peer * 13 + i)) {
          printf("rank %d: exchange %ld: byte %d differs\n", rank, exchanges, i);
          return 1;
        }
      }
      if (rank == 0 && exchanges == 20) {
        printf("rank 0: link traffic flowing\n"); /* the script cuts the link after this */
        fflush(stdout);
      }
      stop = now_ms() - start >= secs * 1e3;
      rc = MPI_Allreduce(MPI_IN_PLACE, &stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      if (rc != MPI_SUCCESS) link_report(rc, exchanges);
    }
    rc = MPI_Finalize();
    printf("rank %d: %ld exchanges verified, %s\n", rank, exchanges, rc == MPI_SUCCESS ? "finalized" : "failed");
    return rc == MPI_SUCCESS ? 0 : 1;
  }
  if (strcmp(mode, "flood") == 0) {
    enum { kBytes = 1024, kWindow = 64 };
    static char buf[kWindow][kBytes];
    MPI_Request reqs[kWindow];
    for (int round = 0;; ++round) {
      if (rank == 1) {
        for (int i = 0; i < kWindow; ++i) MPI_Isend(buf[i], kBytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &reqs[i]);
        if (round == 20) {
          int bye = 1; /* announce, then die with sends in flight */
          MPI_Send(&bye, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
          die();
        }
        MPI_Waitall(kWindow, reqs, MPI_STATUSES_IGNORE);
      } else if (rank == 0) {
        if (round == 20) t0 = now_ms(); /* the victim dies in this round */
        for (int i = 0; i < kWindow && rc == MPI_SUCCESS; ++i) rc = MPI_Recv(buf[i], kBytes, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (round == 20) {
          int bye = 0;
          if (rc == MPI_SUCCESS) rc = MPI_Recv(&bye, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          while (rc == MPI_SUCCESS) rc = MPI_Recv(buf[0], kBytes, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          report(rc, t0);
        }
        if (rc != MPI_SUCCESS) report(rc, t0);
      } else {
        pause();
      }
    }
  }
  if (strcmp(mode, "rendezvous") == 0) {
    const int kBytes = 32 << 20;
    char* big = malloc((size_t)kBytes);
    memset(big, rank, (size_t)kBytes);
    int go = 0;
    if (rank == 1) {
      MPI_Request r;
      MPI_Recv(&go, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* rank 0's receive is posted */
      MPI_Isend(big, kBytes, MPI_CHAR, 0, 4, MPI_COMM_WORLD, &r);
      int bye = 1;
      MPI_Send(&bye, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
      usleep(20000); /* rank 0 is READing the 32 MiB by now (rxe moves ~40 MB/s) */
      die();
    } else if (rank == 0) {
      MPI_Request r;
      rc = MPI_Irecv(big, kBytes, MPI_CHAR, 1, 4, MPI_COMM_WORLD, &r);
      if (rc == MPI_SUCCESS) rc = MPI_Send(&go, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
      int bye = 0;
      if (rc == MPI_SUCCESS) rc = MPI_Recv(&bye, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      t0 = now_ms();
      if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
      if (rc == MPI_SUCCESS) { /* the READ beat the kill: the data must be whole */
        for (int i = 0; i < kBytes; ++i) {
          if (big[i] != 1) {
            printf("rank 0: completed rendezvous with wrong data at %d\n", i);
            return 1;
          }
        }
        printf("rank 0: rendezvous completed before the kill\n");
        rc = MPI_Recv(&bye, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* never sent */
      }
      report(rc, t0);
    }
    pause();
  }
  if (strcmp(mode, "collective") == 0) {
    enum { kDoubles = 8192 };
    static double in[kDoubles], out[kDoubles];
    for (int it = 0;; ++it) {
      for (int i = 0; i < kDoubles; ++i) in[i] = rank + it;
      if (it == 50 && rank == size - 1) die();
      if (it == 50) t0 = now_ms(); /* the victim dies at this iteration */
      rc = MPI_Allreduce(in, out, kDoubles, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      if (rc != MPI_SUCCESS) report(rc, t0 > 0 ? t0 : now_ms());
      if (out[0] != (double)size * it + (double)size * (size - 1) / 2) {
        printf("rank %d: wrong allreduce result %g at iteration %d\n", rank, out[0], it);
        return 1;
      }
    }
  }
  if (strcmp(mode, "hang") == 0) {
    printf("rank %d: hanging\n", rank);
    fflush(stdout);
    for (;;) pause();
  }
  printf("unknown mode '%s'\n", mode);
  return 2;
}
