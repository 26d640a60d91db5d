/* Early release through MPI (AUGUR_EARLY_RELEASE=1, docs/early-release.md): rank 0 sends large
 * messages to rank 1, which uses each receive buffer the moment the call returns, in every way a
 * program may: reads it, computes before the wait, polls with MPI_Test, overwrites it and sends
 * it back, receives into it again, frees it and reuses the memory, receives through a vector type
 * (unpacked, so not released), with MPI_Sendrecv, truncated. A SIGSEGV handler of its own is
 * installed after MPI_Init and takes a fault of its own every round. Every byte is checked.
 *
 * Rank 1 prints `release-expect rank=1 releasable=N`: the receives whose buffers hold at least
 * AUGUR_RELEASE_CHUNK (default 64 KiB) of whole pages, each of which the runtime may release
 * early when its message comes by rendezvous (release_stats.sh compares its augur-stats line).
 * Usage: mpi_test_release [ROUNDS]   (2 ranks; more ranks sit out) */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "own_fault.h"

static unsigned char value(long round, size_t k) { return (unsigned char)(round * 57 + (long)(k % 241) + (long)(k / 4099) + 5); }

static long g_releasable; /* receives into buffers the runtime could release */
static long g_sends;      /* blocking sends from buffers it could release (with an assist thread) */

static int holds_a_chunk(const void* buf, size_t n) {
  const uintptr_t pg = (uintptr_t)g_page;
  const uintptr_t a = (uintptr_t)buf;
  const uintptr_t lo = (a + pg - 1) / pg * pg, hi = (a + n) / pg * pg;
  return hi > lo && hi - lo >= 65536;
}
static void count_releasable(const void* buf, size_t n) { g_releasable += holds_a_chunk(buf, n); }
static void count_send(const void* buf, size_t n) { g_sends += holds_a_chunk(buf, n); }

static void fill(unsigned char* p, size_t n, long round) {
  for (size_t k = 0; k < n; ++k) p[k] = value(round, k);
}

static void verify(const unsigned char* p, size_t n, long round, const char* what) {
  for (size_t k = 0; k < n; ++k) {
    if (p[k] != value(round, k)) {
      fprintf(stderr, "mpi_test_release: %s (round %ld): byte %zu is %u, want %u\n", what, round, k, p[k], value(round, k));
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
}

static double g_sink;
static void compute(void) { /* something to do while the data lands */
  double s = 0;
  for (int i = 1; i < 200000; ++i) s += 1.0 / i;
  g_sink += s;
}

enum { kTag = 11, kBackTag = 12 };

/* The buffer is rewritten the moment the previous MPI_Send returns: with sends released early
 * (an assist thread), those stores wait until the receiver has read the previous message. */
static void send_round(unsigned char* tx, size_t n, long round) {
  fill(tx, n, round);
  count_send(tx, n);
  CHECK(MPI_Send(tx, (int)n, MPI_BYTE, 1, kTag, MPI_COMM_WORLD) == MPI_SUCCESS, "send round %ld", round);
}

int main(int argc, char** argv) {
  start(&argc, &argv);
  const int rank = g_rank;
  if (g_size < 2) {
    fprintf(stderr, "mpi_test_release: needs 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int rounds = argc > 1 ? atoi(argv[1]) : 2;
  own_fault_install();
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const size_t sizes[] = {256u << 10, 1u << 20, (4u << 20) + 100};
  const size_t kMax = (4u << 20) + 100;
  unsigned char* tx = malloc(kMax);
  long round = 0;
  for (int r = 0; r < rounds; ++r) {
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
      const size_t n = sizes[si];
      if (rank == 0) {
        for (int k = 0; k < 4; ++k) send_round(tx, n, ++round); /* read at once, compute, test, overwrite */
        const long overwritten = round;
        unsigned char* back = malloc(n);
        CHECK(MPI_Recv(back, (int)n, MPI_BYTE, 1, kBackTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS, "recv back");
        verify(back, n, 1000 + overwritten, "sent back after overwriting at once");
        for (int k = 0; k < 4; ++k) send_round(tx, n, ++round); /* twice into one buffer, freed, contiguous type */
        send_round(tx, n / 64 * 64, ++round);                  /* a vector type's worth */
        fill(tx, n, ++round);                                  /* sendrecv */
        CHECK(MPI_Sendrecv(tx, (int)n, MPI_BYTE, 1, kTag, back, (int)n, MPI_BYTE, 1, kBackTag, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE) == MPI_SUCCESS, "sendrecv");
        verify(back, n, 2000 + round, "sendrecv reply");
        free(back);
        send_round(tx, n, ++round); /* truncated */
      } else if (rank == 1) {
        const size_t span = n + 2 * (size_t)g_page;
        unsigned char* buf = malloc(span);
        unsigned char* at = buf + 100; /* not page-aligned: both edges */
        MPI_Status st;
        MPI_Request q;
        int count = 0;
        /* MPI_Recv, then read it all at once */
        count_releasable(at, n);
        CHECK(MPI_Recv(at, (int)n, MPI_BYTE, 0, kTag, MPI_COMM_WORLD, &st) == MPI_SUCCESS, "recv");
        verify(at, n, ++round, "read at once after MPI_Recv");
        /* MPI_Irecv, compute, MPI_Wait, read */
        count_releasable(at, n);
        CHECK(MPI_Irecv(at, (int)n, MPI_BYTE, 0, kTag, MPI_COMM_WORLD, &q) == MPI_SUCCESS, "irecv");
        compute();
        CHECK(MPI_Wait(&q, &st) == MPI_SUCCESS, "wait");
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK((size_t)count == n && st.MPI_SOURCE == 0 && st.MPI_TAG == kTag, "status after an early release");
        verify(at, n, ++round, "read after compute and MPI_Wait");
        /* MPI_Test until done, then read from the end backwards */
        count_releasable(at, n);
        CHECK(MPI_Irecv(at, (int)n, MPI_BYTE, 0, kTag, MPI_COMM_WORLD, &q) == MPI_SUCCESS, "irecv");
        for (int done = 0; !done;) CHECK(MPI_Test(&q, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS, "test");
        ++round;
        for (size_t k = n; k-- > 0;) {
          if (at[k] != value(round, k)) {
            fprintf(stderr, "mpi_test_release: read backwards after MPI_Test: byte %zu\n", k);
            MPI_Abort(MPI_COMM_WORLD, 1);
          }
        }
        /* overwritten at once (the stores wait for the data under them), then sent back */
        count_releasable(at, n);
        CHECK(MPI_Recv(at, (int)n, MPI_BYTE, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS, "recv");
        fill(at, n, 1000 + ++round);
        count_send(at, n);
        CHECK(MPI_Send(at, (int)n, MPI_BYTE, 0, kBackTag, MPI_COMM_WORLD) == MPI_SUCCESS, "send back");
        /* (the next receive into it waits, with sends released, until rank 0 has read it) */
        /* twice into the same buffer, the second posted the moment the first returns */
        count_releasable(at, n);
        CHECK(MPI_Recv(at, (int)n, MPI_BYTE, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS, "recv");
        ++round;
        count_releasable(at, n);
        CHECK(MPI_Recv(at, (int)n, MPI_BYTE, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS, "recv");
        verify(at, n, ++round, "second message into the same buffer");
        /* the program's own fault, with released pages about */
        own_fault();
        /* freed at once; the memory handed out again and written */
        unsigned char* heap = malloc(n);
        count_releasable(heap, n);
        CHECK(MPI_Recv(heap, (int)n, MPI_BYTE, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS, "recv");
        ++round;
        free(heap);
        unsigned char* reuse = malloc(n);
        memset(reuse, 0x3e, n);
        compute();
        size_t clobbered = 0;
        for (size_t k = 0; k < n; ++k) clobbered += reuse[k] != 0x3e;
        CHECK(clobbered == 0, "reused memory: %zu bytes overwritten by late data", clobbered);
        free(reuse);
        /* a contiguous derived type: released as bytes are */
        MPI_Datatype contig;
        MPI_Type_contiguous((int)(n / 4), MPI_INT, &contig);
        MPI_Type_commit(&contig);
        count_releasable(at, n / 4 * 4);
        CHECK(MPI_Recv(at, 1, contig, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS, "recv contiguous type");
        verify(at, n / 4 * 4, ++round, "contiguous type");
        MPI_Type_free(&contig);
        /* a vector type: received into a temporary and unpacked, not released */
        MPI_Datatype vec;
        MPI_Type_vector((int)(n / 64), 64, 128, MPI_BYTE, &vec);
        MPI_Type_commit(&vec);
        unsigned char* wide = malloc(2 * n);
        CHECK(MPI_Recv(wide, 1, vec, 0, kTag, MPI_COMM_WORLD, &st) == MPI_SUCCESS, "recv vector");
        ++round;
        for (size_t k = 0; k < n / 64 * 64; ++k) {
          if (wide[k / 64 * 128 + k % 64] != value(round, k)) {
            fprintf(stderr, "mpi_test_release: vector type: byte %zu\n", k);
            MPI_Abort(MPI_COMM_WORLD, 1);
          }
        }
        MPI_Type_free(&vec);
        free(wide);
        /* sendrecv: the receive half is released */
        fill(tx, n, 2000 + round + 1);
        count_releasable(at, n);
        CHECK(MPI_Sendrecv(tx, (int)n, MPI_BYTE, 0, kBackTag, at, (int)n, MPI_BYTE, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
                  MPI_SUCCESS, "sendrecv");
        verify(at, n, ++round, "sendrecv");
        /* truncated: MPI_ERR_TRUNCATE, nothing past the count */
        const size_t cap = n / 2 + 10;
        memset(buf, 0xcc, span);
        count_releasable(at, cap);
        const int rc = MPI_Recv(at, (int)cap, MPI_BYTE, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int cls = 0;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "truncation not reported");
        verify(at, cap, ++round, "truncated receive");
        size_t past = 0;
        for (size_t k = cap; k < span - 100; ++k) past += at[k] != 0xcc;
        CHECK(past == 0, "%zu bytes written past a truncated receive", past);
        free(buf);
      }
    }
  }
  if (rank == 1) {
    CHECK(g_own_faults >= (sig_atomic_t)rounds, "the program's own handler missed its faults: %d", (int)g_own_faults);
  }
  if (rank <= 1) {
    printf("release-expect rank=%d releasable=%ld sends=%ld own_faults=%d\n", rank, g_releasable, g_sends, (int)g_own_faults);
    fflush(stdout);
  }
  free(tx);
  own_fault_remove();
  return finish("mpi_test_release");
}
