/* Early arrivals through the MPI interface, two ranks: rank 0 sends, rank 1 receives (a third
 * rank, if there is one, sends two messages the predictor cannot expect). Every
 * message is in before its receive is posted: rank 1 says go, rank 0 sends, rank 1 waits with
 * MPI_Iprobe until the message is there and only then posts MPI_Recv. The receives cycle over
 * three buffers and tags (what the predictor learns), with one event of each kind a predictor
 * gets wrong in between: an unpredicted buffer, a shorter and a longer message, an unseen tag, a
 * wildcard receive; with --truncate, last, a truncated receive (MPI_ERR_TRUNCATE, nothing written
 * past it; a speculative run stops there with a report). In the
 * touch round the program writes into the next predicted buffer before its message comes (in
 * AUGUR_STEERING=speculative a guard fault that revokes the credit). The program has a SIGSEGV
 * handler of its own, installed after MPI_Init, and faults on a page of its own every cycle.
 * Every byte received is checked. Rank 1 prints an `early-expect` line with the counts that
 * early_stats.sh compares with its augur-stats line.
 *
 * Usage: mpi_test_early BYTES [--touch-after] [--truncate]
 *   --touch-after: in the touch round, read the predicted buffer after its message came and
 *   before posting its receive (legal MPI: correct in the default mode; speculative stops the
 *   run with a report). */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "own_fault.h"

enum { kBufs = 3, kWarm = 4, kCycles = 14, kTouchCycle = 8, kGo = 1, kHold = 3 };

static unsigned char value(long round, size_t k) { return (unsigned char)(round * 131 + (long)(k % 251) + 1); }

static char* pages(size_t n) {
  void* p = NULL;
  const size_t span = (n + (size_t)g_page - 1) / (size_t)g_page * (size_t)g_page;
  if (posix_memalign(&p, (size_t)g_page, span) != 0) return NULL;
  memset(p, 0xee, span);
  return p;
}

static size_t g_bytes;
static char* g_tx;
static long g_round;     /* messages sent so far, every rank counts alike */
static int g_sender;     /* of the current message: rank 0, or rank 2 in its own rounds */
static long g_late;      /* receives rank 1 posted after its message was in */
static long g_predictable;  /* of those, the ones after warm-up in the learned cycle */

/* The calls of the go protocol must succeed (errors return, so that truncation can be checked):
 * any failure ends the job rather than leaving a rank waiting forever. */
static void must(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  fprintf(stderr, "rank %d: round %ld: %s failed: %s\n", g_rank, g_round, what, msg);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The sender's side of one message: wait for the go (a hold first means: wait for the go after
 * it), then send `n` bytes with `tag`. */
static void send_one(size_t n, int tag) {
  MPI_Status st;
  do {
    must(MPI_Recv(NULL, 0, MPI_CHAR, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st), "MPI_Recv of the go");
  } while (st.MPI_TAG != kGo);
  for (size_t k = 0; k < n; ++k) g_tx[k] = (char)value(g_round, k);
  must(MPI_Send(g_tx, (int)n, MPI_CHAR, 1, tag, MPI_COMM_WORLD), "MPI_Send");
  ++g_round;
}

/* Rank 1's side: go, wait until the message is in, then receive `cap` bytes into `buf` (`span`
 * bytes, all 0xee) from (src, tag) (wildcards allowed). Checks the data, the envelope, the count,
 * the error class and that nothing past the received bytes changed. */
static void recv_one(char* buf, size_t cap, size_t span, int src, int tag, int want_tag, size_t sent,
                     int want_class, int predictable, void (*before_go)(char*), void (*after_in)(char*)) {
  if (before_go) {
    must(MPI_Send(NULL, 0, MPI_CHAR, g_sender, kHold, MPI_COMM_WORLD), "MPI_Send of the hold");  /* stages the predicted */
    before_go(buf);
  }
  must(MPI_Send(NULL, 0, MPI_CHAR, g_sender, kGo, MPI_COMM_WORLD), "MPI_Send of the go");
  int in = 0;
  MPI_Status st;
  while (!in) must(MPI_Iprobe(g_sender, want_tag, MPI_COMM_WORLD, &in, &st), "MPI_Iprobe");
  CHECK(st.MPI_SOURCE == g_sender && st.MPI_TAG == want_tag, "round %ld: probe envelope %d/%d", g_round, st.MPI_SOURCE, st.MPI_TAG);
  if (after_in) after_in(buf);
  const int rc = MPI_Recv(buf, (int)cap, MPI_CHAR, src, tag, MPI_COMM_WORLD, &st);
  int cls = MPI_SUCCESS;
  MPI_Error_class(rc, &cls);
  CHECK(cls == want_class, "round %ld: error class %d, want %d", g_round, cls, want_class);
  const size_t got = sent < cap ? sent : cap;
  if (cls == MPI_SUCCESS) {
    int count = -1;
    MPI_Get_count(&st, MPI_CHAR, &count);
    CHECK(count == (int)sent && st.MPI_SOURCE == g_sender && st.MPI_TAG == want_tag, "round %ld: count %d tag %d", g_round, count,
          st.MPI_TAG);
  }
  size_t bad = 0;
  for (size_t k = 0; k < got; ++k) bad += (unsigned char)buf[k] != value(g_round, k);
  CHECK(bad == 0, "round %ld: %zu of %zu bytes wrong", g_round, bad, got);
  size_t past = 0;
  for (size_t k = got; k < span; ++k) past += (unsigned char)buf[k] != 0xee;
  CHECK(past == 0, "round %ld: %zu bytes written past the %zu received", g_round, past, got);
  memset(buf, 0xee, span);  /* before the next MPI call: the buffer is the program's until then */
  ++g_late;
  g_predictable += predictable;
  ++g_round;
}

static void touch_before(char* buf) { buf[17] = 42; }  /* the buffer is the program's until posted */
static unsigned char g_seen;
static void touch_after(char* buf) { g_seen ^= ((volatile char*)buf)[0]; }

/* One cycle: the three buffers in turn, tags 10, 11, 12. */
static void cycle(char** bufs, size_t span, int cyc, int touch_after_mode) {
  if (g_rank == 2) {  /* not in it: only counts */
    g_round += kBufs;
    return;
  }
  for (int b = 0; b < kBufs; ++b) {
    const int tag = 10 + b;
    if (g_rank == 0) {
      send_one(g_bytes, tag);
      continue;
    }
    const int touch = cyc == kTouchCycle && b == 1;
    recv_one(bufs[b], g_bytes, span, 0, tag, tag, g_bytes, MPI_SUCCESS, cyc >= kWarm && !touch,
             touch && !touch_after_mode ? touch_before : NULL, touch && touch_after_mode ? touch_after : NULL);
  }
  if (g_rank == 1) own_fault();
}

int main(int argc, char** argv) {
  start(&argc, &argv);
  g_page = sysconf(_SC_PAGESIZE);
  if (g_size < 2 || g_size > 3 || argc < 2) {
    if (g_rank == 0) fprintf(stderr, "usage: mpi_test_early BYTES [--touch-after] [--truncate] (2 or 3 ranks)\n");
    MPI_Finalize();
    return 2;
  }
  g_bytes = (size_t)strtoul(argv[1], NULL, 10);
  int touch_after_mode = 0, truncate = 0;
  for (int i = 2; i < argc; ++i) {
    touch_after_mode |= strcmp(argv[i], "--touch-after") == 0;
    truncate |= strcmp(argv[i], "--truncate") == 0;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  own_fault_install();

  const size_t big = 2 * g_bytes;  /* room for the longer message */
  const size_t span = (big + (size_t)g_page - 1) / (size_t)g_page * (size_t)g_page;
  char* bufs[kBufs];
  for (int b = 0; b < kBufs; ++b) bufs[b] = pages(big);
  char* other = pages(big);
  g_tx = malloc(big);
  int cyc = 0;
  for (; cyc < kTouchCycle + 1; ++cyc) cycle(bufs, span, cyc, touch_after_mode);
  /* The mispredictions, one at a time, each followed by a cycle; with 3 ranks, two messages from
   * rank 2 where the predictor expects rank 0's: received by name and by wildcard. */
  const int nev = g_size == 3 ? 7 : 5;
  for (int ev = 0; ev < nev; ++ev) {
    g_sender = ev >= 5 ? 2 : 0;
    if (g_rank != 1 && g_rank != g_sender) {
      ++g_round;
    } else if (g_rank == g_sender) {
      const size_t n = ev == 1 ? g_bytes / 2 : ev == 2 ? big : g_bytes;
      send_one(n, ev == 3 ? 20 : 10);
    } else if (ev == 0) {  /* an unpredicted buffer */
      recv_one(other, g_bytes, span, 0, 10, 10, g_bytes, MPI_SUCCESS, 0, NULL, NULL);
    } else if (ev == 1) {  /* shorter than predicted */
      recv_one(bufs[0], g_bytes, span, 0, 10, 10, g_bytes / 2, MPI_SUCCESS, 0, NULL, NULL);
    } else if (ev == 2) {  /* longer than predicted */
      recv_one(bufs[0], big, span, 0, 10, 10, big, MPI_SUCCESS, 0, NULL, NULL);
    } else if (ev == 3) {  /* a tag never seen */
      recv_one(bufs[0], g_bytes, span, 0, 20, 20, g_bytes, MPI_SUCCESS, 0, NULL, NULL);
    } else if (ev == 4) {  /* a wildcard receive */
      recv_one(bufs[0], g_bytes, span, MPI_ANY_SOURCE, MPI_ANY_TAG, 10, g_bytes, MPI_SUCCESS, 0, NULL, NULL);
    } else if (ev == 5) {  /* another source, by name */
      recv_one(bufs[0], g_bytes, span, 2, 10, 10, g_bytes, MPI_SUCCESS, 0, NULL, NULL);
    } else {  /* another source, by wildcard */
      recv_one(bufs[0], g_bytes, span, MPI_ANY_SOURCE, 10, 10, g_bytes, MPI_SUCCESS, 0, NULL, NULL);
    }
    g_sender = 0;
    if (g_rank == 1) {  /* the rest of that cycle, then one whole cycle */
      for (int b = 1; b < kBufs; ++b) recv_one(bufs[b], g_bytes, span, 0, 10 + b, 10 + b, g_bytes, MPI_SUCCESS, 0, NULL, NULL);
    } else if (g_rank == 0) {
      for (int b = 1; b < kBufs; ++b) send_one(g_bytes, 10 + b);
    } else {
      g_round += kBufs - 1;
    }
    cycle(bufs, span, cyc++, touch_after_mode);
  }
  for (; cyc < kCycles + nev + 1; ++cyc) cycle(bufs, span, cyc, touch_after_mode);
  if (truncate) {  /* last: a speculative run stops here (what was written past the receive is lost) */
    if (g_rank == 0) {
      send_one(g_bytes, 10);
    } else if (g_rank == 1) {
      recv_one(bufs[0], g_bytes - 1000, span, 0, 10, 10, g_bytes, MPI_ERR_TRUNCATE, 0, NULL, NULL);
    }
  }
  if (g_rank == 1) {
    CHECK(g_own_faults == cyc, "the program's own handler took %d faults of %d", (int)g_own_faults, cyc);
    printf("early-expect rank=1 late_recvs=%ld predictable=%ld bytes=%zu own_faults=%d\n", g_late, g_predictable, g_bytes,
           (int)g_own_faults);
    fflush(stdout);
  }
  const int rc = finish("early");
  for (int b = 0; b < kBufs; ++b) free(bufs[b]);  /* after MPI_Finalize: no speculation is out then */
  free(other);
  free(g_tx);
  own_fault_remove();
  return rc;
}
