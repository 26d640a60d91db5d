/* The soak workload (scripts/soak, docs/soak.md): a mixed MPI job that runs until its time is up
 * and verifies every byte it receives. Each iteration, with sizes and partners drawn from a
 * generator seeded by the iteration number (so every rank draws the same plan):
 *   - a ring halo exchange (Irecv/Isend, both neighbours, one random size);
 *   - random point-to-point messages between random pairs (self included), 0 bytes to
 *     --max-bytes, a third of them near the eager limit, received by MPI_ANY_SOURCE/MPI_ANY_TAG
 *     receives on their own communicator and identified by their tag;
 *   - a vector datatype (random blocks, block length and stride) sent round the ring and
 *     received into a different vector layout;
 *   - a receive that nothing matches, cancelled (credited when it can be: a named source, a
 *     tag, a size in the steerable range);
 *   - Allreduce (checked against the sum every rank can compute), Bcast from a random root,
 *     Alltoall, Barrier; on odd iterations the first three by their nonblocking twins;
 *   - one buffer malloc'd and freed per iteration, so the registration cache sees new memory.
 * Every payload byte is a function of (iteration, stream, source, destination, offset). Rank 0
 * decides when to stop and when to report, and broadcasts it. Progress lines every --report
 * seconds carry each rank's RSS (/proc/self/statm); --rss-log keeps them for a plot, --out
 * writes the totals. Exit status: 0 when the job verified, moved as many messages as it
 * received and the RSS stayed within the bound; 1 otherwise.
 * Usage: soak [--seconds S] [--report S] [--warmup S] [--max-bytes N] [--out FILE]
 *             [--rss-log FILE] [--rss-slack-kib K]
 */
#include <malloc.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_rank, g_size;
static long long g_errors;         /* verification failures and MPI errors on this rank */
static long long g_sent, g_recvd;  /* point-to-point messages (user level) */
static long long g_bytes_sent, g_bytes_recvd, g_coll_calls, g_cancelled;

#define FAIL(...)                                              \
  do {                                                         \
    if (g_errors++ < 20) {                                     \
      fprintf(stderr, "soak: rank %d: ", g_rank);              \
      fprintf(stderr, __VA_ARGS__);                            \
      fputc('\n', stderr);                                     \
    }                                                          \
  } while (0)
#define MPI_OK(call)                                                                  \
  do {                                                                                \
    int rc_ = (call);                                                                 \
    if (rc_ != MPI_SUCCESS) {                                                         \
      char s_[MPI_MAX_ERROR_STRING];                                                  \
      int n_ = 0;                                                                     \
      MPI_Error_string(rc_, s_, &n_);                                                 \
      FAIL("%s:%d: %s returned %d (%s)", __FILE__, __LINE__, #call, rc_, s_);         \
    }                                                                                 \
  } while (0)

static uint64_t mix(uint64_t x) { /* splitmix64 */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
static uint64_t key(long it, int stream, int src, int dst) {
  return mix(((uint64_t)it << 24) ^ ((uint64_t)stream << 16) ^ ((uint64_t)src << 8) ^ (uint64_t)dst);
}
/* Byte k of a payload is byte k%8 of mix(key + k/8). */
static void fill(unsigned char* p, size_t n, uint64_t k) {
  for (size_t i = 0; i < n; i += 8) {
    uint64_t w = mix(k + i / 8);
    size_t m = n - i < 8 ? n - i : 8;
    memcpy(p + i, &w, m);
  }
}
static long verify(const unsigned char* p, size_t n, uint64_t k) { /* first bad offset or -1 */
  for (size_t i = 0; i < n; i += 8) {
    uint64_t w = mix(k + i / 8);
    size_t m = n - i < 8 ? n - i : 8;
    if (memcmp(p + i, &w, m) != 0) {
      for (size_t j = 0; j < m; ++j) {
        if (p[i + j] != ((unsigned char*)&w)[j]) return (long)(i + j);
      }
    }
  }
  return -1;
}

/* A per-iteration generator every rank seeds alike. */
typedef struct { uint64_t s; } Rng;
static uint64_t next(Rng* r) { return mix(r->s++); }
static long pick(Rng* r, long lo, long hi) { return lo + (long)(next(r) % (uint64_t)(hi - lo + 1)); }
/* Sizes across the eager/rendezvous boundary: a third near the eager limit, the rest spread
 * log-uniformly from 0 to max. */
static long size_draw(Rng* r, long eager, long max) {
  long kind = pick(r, 0, 2);
  if (kind == 0) {
    long lo = eager - 512 > 0 ? eager - 512 : 0, hi = eager + 512 < max ? eager + 512 : max;
    return pick(r, lo, hi);
  }
  int bits = 0;
  while ((1L << bits) < max) ++bits;
  long top = 1L << pick(r, 0, bits);
  if (top > max) top = max;
  return pick(r, 0, top);
}

/* Bytes the program (and the library) hold in malloc'd blocks: with RSS, tells a leak (this
 * grows) from heap fragmentation (RSS grows, this does not). glibc keeps freed memory mapped.
 * Under AddressSanitizer malloc is ASan's, so the count comes from its allocator; and RSS is
 * not bounded there: freed blocks sit in ASan's quarantine (256 MiB per process by default),
 * so RSS climbs for minutes in a program that leaks nothing. The bound then applies to the
 * bytes in use, which is what a leak grows. */
#if defined(__SANITIZE_ADDRESS__)
#define SOAK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SOAK_ASAN 1
#endif
#endif
#ifdef SOAK_ASAN
/* From <sanitizer/allocator_interface.h>, which GCC does not install; libasan exports it. */
size_t __sanitizer_get_current_allocated_bytes(void);
static long heap_kib(void) { return (long)(__sanitizer_get_current_allocated_bytes() / 1024); }
static const int kBoundHeap = 1;
#else
static long heap_kib(void) { return (long)(mallinfo2().uordblks / 1024); }
static const int kBoundHeap = 0;
#endif

static long rss_kib(void) {
  FILE* f = fopen("/proc/self/statm", "r");
  long pages = 0, resident = 0;
  if (f == NULL) return -1;
  if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
  fclose(f);
  return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

#define MAXMSG 64 /* random point-to-point messages per iteration, at most */

static void iteration(long it, long max_bytes, long eager, MPI_Comm halo, MPI_Comm wild, unsigned char* sbuf,
                      unsigned char* rbuf, unsigned char* big, size_t big_bytes) {
  Rng rng = {mix((uint64_t)it * 7919u + 17u)};
  const int left = (g_rank + g_size - 1) % g_size, right = (g_rank + 1) % g_size;
  MPI_Request req[2 * MAXMSG + 8];
  MPI_Status st[2 * MAXMSG + 8];
  int nreq = 0;

  /* 1. Halo exchange with both neighbours. */
  {
    long n = size_draw(&rng, eager, max_bytes);
    unsigned char* to_right = sbuf;
    unsigned char* to_left = sbuf + max_bytes;
    unsigned char* from_left = rbuf;
    unsigned char* from_right = rbuf + max_bytes;
    fill(to_right, (size_t)n, key(it, 1, g_rank, right));
    fill(to_left, (size_t)n, key(it, 2, g_rank, left));
    MPI_OK(MPI_Irecv(from_left, (int)n, MPI_BYTE, left, 1, halo, &req[nreq++]));
    MPI_OK(MPI_Irecv(from_right, (int)n, MPI_BYTE, right, 2, halo, &req[nreq++]));
    MPI_OK(MPI_Isend(to_right, (int)n, MPI_BYTE, right, 1, halo, &req[nreq++]));
    MPI_OK(MPI_Isend(to_left, (int)n, MPI_BYTE, left, 2, halo, &req[nreq++]));
    MPI_OK(MPI_Waitall(nreq, req, st));
    long bad;
    int got = -1;
    MPI_Get_count(&st[0], MPI_BYTE, &got);
    if (got != n) FAIL("iteration %ld: halo from %d: %d bytes, want %ld", it, left, got, n);
    if ((bad = verify(from_left, (size_t)n, key(it, 1, left, g_rank))) >= 0) {
      FAIL("iteration %ld: halo from %d (%ld bytes): byte %ld differs", it, left, n, bad);
    }
    if ((bad = verify(from_right, (size_t)n, key(it, 2, right, g_rank))) >= 0) {
      FAIL("iteration %ld: halo from %d (%ld bytes): byte %ld differs", it, right, n, bad);
    }
    g_sent += 2;
    g_recvd += 2;
    g_bytes_sent += 2 * n;
    g_bytes_recvd += 2 * n;
    nreq = 0;
  }

  /* 2. Random pairs, received by wildcards; the tag names the message. */
  {
    const int cap = 4 * g_size < MAXMSG ? 4 * g_size : MAXMSG;
    int nmsg = (int)pick(&rng, g_size < cap ? g_size : cap, cap);
    int src[MAXMSG], dst[MAXMSG];
    long len[MAXMSG];
    for (int m = 0; m < nmsg; ++m) {
      src[m] = (int)pick(&rng, 0, g_size - 1);
      dst[m] = (int)pick(&rng, 0, g_size - 1);
      len[m] = size_draw(&rng, eager, max_bytes);
    }
    /* Receives first (each into its own max-size slot), then sends. */
    int nrecv = 0;
    for (int m = 0; m < nmsg; ++m) {
      if (dst[m] != g_rank) continue;
      MPI_OK(MPI_Irecv(rbuf + 2 * max_bytes + (size_t)nrecv * max_bytes, (int)max_bytes, MPI_BYTE, MPI_ANY_SOURCE,
                       MPI_ANY_TAG, wild, &req[nreq++]));
      ++nrecv;
    }
    size_t off = 2 * (size_t)max_bytes;
    for (int m = 0; m < nmsg; ++m) {
      if (src[m] != g_rank) continue;
      fill(sbuf + off, (size_t)len[m], key(it, 100 + m, g_rank, dst[m]));
      MPI_OK(MPI_Isend(sbuf + off, (int)len[m], MPI_BYTE, dst[m], 100 + m, wild, &req[nreq++]));
      off += (size_t)max_bytes;
      ++g_sent;
      g_bytes_sent += len[m];
    }
    MPI_OK(MPI_Waitall(nreq, req, st));
    for (int k = 0; k < nrecv; ++k) {
      int m = st[k].MPI_TAG - 100, got = -1;
      if (m < 0 || m >= nmsg || dst[m] != g_rank) {
        FAIL("iteration %ld: wildcard receive got tag %d", it, st[k].MPI_TAG);
        continue;
      }
      MPI_Get_count(&st[k], MPI_BYTE, &got);
      if (st[k].MPI_SOURCE != src[m] || got != len[m]) {
        FAIL("iteration %ld: message %d: from %d with %d bytes, want %d and %ld", it, m, st[k].MPI_SOURCE, got, src[m],
             len[m]);
        continue;
      }
      long bad = verify(rbuf + 2 * max_bytes + (size_t)k * max_bytes, (size_t)len[m], key(it, 100 + m, src[m], g_rank));
      if (bad >= 0) FAIL("iteration %ld: message %d (%ld bytes from %d): byte %ld differs", it, m, len[m], src[m], bad);
      ++g_recvd;
      g_bytes_recvd += len[m];
    }
    nreq = 0;
  }

  /* 3. A vector type round the ring, into another vector layout. */
  {
    int blocks = (int)pick(&rng, 1, 512), blen = (int)pick(&rng, 1, 16);
    int sstride = blen + (int)pick(&rng, 0, 8), rstride = blen + (int)pick(&rng, 0, 8);
    size_t n = (size_t)blocks * (size_t)blen * sizeof(double);
    MPI_Datatype sv, rv;
    MPI_OK(MPI_Type_vector(blocks, blen, sstride, MPI_DOUBLE, &sv));
    MPI_OK(MPI_Type_vector(blocks, blen, rstride, MPI_DOUBLE, &rv));
    MPI_OK(MPI_Type_commit(&sv));
    MPI_OK(MPI_Type_commit(&rv));
    unsigned char* packed = big; /* the payload, laid out by the vector below */
    fill(packed, n, key(it, 3, g_rank, right));
    double* s = (double*)sbuf;
    double* r = (double*)rbuf;
    for (int b = 0; b < blocks; ++b) memcpy(s + (size_t)b * sstride, packed + (size_t)b * blen * 8, (size_t)blen * 8);
    memset(r, 0, (size_t)blocks * (size_t)rstride * sizeof(double));
    MPI_OK(MPI_Irecv(r, 1, rv, left, 3, halo, &req[0]));
    MPI_OK(MPI_Isend(s, 1, sv, right, 3, halo, &req[1]));
    MPI_OK(MPI_Waitall(2, req, st));
    for (int b = 0; b < blocks; ++b) memcpy(packed + (size_t)b * blen * 8, r + (size_t)b * rstride, (size_t)blen * 8);
    long bad = verify(packed, n, key(it, 3, left, g_rank));
    if (bad >= 0) FAIL("iteration %ld: vector from %d (%d x %d doubles): byte %ld differs", it, left, blocks, blen, bad);
    MPI_Type_free(&sv);
    MPI_Type_free(&rv);
    g_sent += 1;
    g_recvd += 1;
    g_bytes_sent += (long long)n;
    g_bytes_recvd += (long long)n;
  }

  /* 4. A receive nothing matches, cancelled. */
  {
    long n = pick(&rng, 1, 8192);
    MPI_Request c;
    int cancelled = 0;
    MPI_Status cs;
    int source = pick(&rng, 0, 1) ? left : MPI_ANY_SOURCE;
    MPI_OK(MPI_Irecv(rbuf, (int)n, MPI_BYTE, source, 4000, halo, &c));
    MPI_OK(MPI_Cancel(&c));
    MPI_OK(MPI_Wait(&c, &cs));
    MPI_OK(MPI_Test_cancelled(&cs, &cancelled));
    if (!cancelled) FAIL("iteration %ld: a receive nothing matches was not cancelled", it);
    ++g_cancelled;
  }

  /* 5. Collectives. */
  {
    int count = (int)pick(&rng, 1, (long)(max_bytes / 8 < 65536 ? max_bytes / 8 : 65536));
    long* in = (long*)sbuf;
    long* out = (long*)rbuf;
    for (int i = 0; i < count; ++i) in[i] = (long)(mix((uint64_t)it ^ ((uint64_t)g_rank << 40) ^ (uint64_t)i) & 0xffffff);
    MPI_Request nbc = MPI_REQUEST_NULL;  /* odd iterations: the nonblocking twins, started then waited */
    if (it & 1) {
      MPI_OK(MPI_Iallreduce(in, out, count, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &nbc));
      MPI_OK(MPI_Wait(&nbc, MPI_STATUS_IGNORE));
    } else {
      MPI_OK(MPI_Allreduce(in, out, count, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    }
    for (int i = 0; i < count; ++i) {
      long want = 0;
      for (int q = 0; q < g_size; ++q) want += (long)(mix((uint64_t)it ^ ((uint64_t)q << 40) ^ (uint64_t)i) & 0xffffff);
      if (out[i] != want) {
        FAIL("iteration %ld: allreduce of %d longs: element %d is %ld, want %ld", it, count, i, out[i], want);
        break;
      }
    }
    int root = (int)pick(&rng, 0, g_size - 1);
    long n = size_draw(&rng, eager, max_bytes);
    if (g_rank == root) fill(sbuf, (size_t)n, key(it, 5, root, 0));
    else memset(sbuf, 0, (size_t)n);
    if (it & 1) {
      MPI_OK(MPI_Ibcast(sbuf, (int)n, MPI_BYTE, root, MPI_COMM_WORLD, &nbc));
      MPI_OK(MPI_Wait(&nbc, MPI_STATUS_IGNORE));
    } else {
      MPI_OK(MPI_Bcast(sbuf, (int)n, MPI_BYTE, root, MPI_COMM_WORLD));
    }
    long bad = verify(sbuf, (size_t)n, key(it, 5, root, 0));
    if (bad >= 0) FAIL("iteration %ld: bcast of %ld bytes from %d: byte %ld differs", it, n, root, bad);
    long per = size_draw(&rng, eager, max_bytes / g_size);
    for (int q = 0; q < g_size; ++q) fill(sbuf + (size_t)q * per, (size_t)per, key(it, 6, g_rank, q));
    if (it & 1) {
      MPI_OK(MPI_Ialltoall(sbuf, (int)per, MPI_BYTE, rbuf, (int)per, MPI_BYTE, MPI_COMM_WORLD, &nbc));
      MPI_OK(MPI_Wait(&nbc, MPI_STATUS_IGNORE));
    } else {
      MPI_OK(MPI_Alltoall(sbuf, (int)per, MPI_BYTE, rbuf, (int)per, MPI_BYTE, MPI_COMM_WORLD));
    }
    for (int q = 0; q < g_size; ++q) {
      if ((bad = verify(rbuf + (size_t)q * per, (size_t)per, key(it, 6, q, g_rank))) >= 0) {
        FAIL("iteration %ld: alltoall block of %ld bytes from %d: byte %ld differs", it, per, q, bad);
      }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    g_coll_calls += 4;
  }

  /* 6. A fresh buffer to the right neighbour: new memory for the registration cache. Every
   * other iteration by blocking MPI_Send and MPI_Recv (even ranks send first), the buffer
   * rewritten the moment MPI_Send returns (AUGUR_EARLY_RELEASE with an assist thread releases
   * such sends early: those stores wait until the receiver has read the message). */
  {
    long n = size_draw(&rng, eager, max_bytes);
    unsigned char* fresh = malloc((size_t)n + 1);
    unsigned char* got = malloc((size_t)n + 1);
    if (fresh == NULL || got == NULL) {
      FAIL("out of memory");
      free(fresh);
      free(got);
      return;
    }
    fill(fresh, (size_t)n, key(it, 7, g_rank, right));
    if ((it & 1) || g_size < 2) { /* one rank: a blocking send to itself could wait forever */
      MPI_OK(MPI_Sendrecv(fresh, (int)n, MPI_BYTE, right, 7, got, (int)n, MPI_BYTE, left, 7, halo, MPI_STATUS_IGNORE));
    } else if ((g_rank & 1) == 0) {
      MPI_OK(MPI_Send(fresh, (int)n, MPI_BYTE, right, 7, halo));
      fill(fresh, (size_t)n, key(it, 8, g_rank, right));
      MPI_OK(MPI_Recv(got, (int)n, MPI_BYTE, left, 7, halo, MPI_STATUS_IGNORE));
    } else {
      MPI_OK(MPI_Recv(got, (int)n, MPI_BYTE, left, 7, halo, MPI_STATUS_IGNORE));
      MPI_OK(MPI_Send(fresh, (int)n, MPI_BYTE, right, 7, halo));
      fill(fresh, (size_t)n, key(it, 8, g_rank, right));
    }
    long bad = verify(got, (size_t)n, key(it, 7, left, g_rank));
    if (bad >= 0) FAIL("iteration %ld: fresh buffer of %ld bytes from %d: byte %ld differs", it, n, left, bad);
    free(fresh);
    free(got);
    g_sent += 1;
    g_recvd += 1;
    g_bytes_sent += n;
    g_bytes_recvd += n;
  }
  (void)big_bytes;
}

int main(int argc, char** argv) {
  double seconds = 60, report = 30, warmup = -1;
  long max_bytes = 1L << 20, slack_kib = 8192;
  const char* out_path = NULL;
  const char* log_path = NULL;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (v == NULL) { fprintf(stderr, "soak: %s needs a value\n", a); return 2; }
    if (!strcmp(a, "--seconds")) seconds = atof(v);
    else if (!strcmp(a, "--report")) report = atof(v);
    else if (!strcmp(a, "--warmup")) warmup = atof(v);
    else if (!strcmp(a, "--max-bytes")) max_bytes = atol(v);
    else if (!strcmp(a, "--rss-slack-kib")) slack_kib = atol(v);
    else if (!strcmp(a, "--out")) out_path = v;
    else if (!strcmp(a, "--rss-log")) log_path = v;
    else { fprintf(stderr, "soak: unknown option %s\n", a); return 2; }
    ++i;
  }
  if (seconds <= 0 || report <= 0 || max_bytes < (1L << 17) || max_bytes > (1L << 26)) {
    fprintf(stderr, "soak: need --seconds > 0, --report > 0, 128 KiB <= --max-bytes <= 64 MiB\n");
    return 2;
  }
  if (report > seconds / 4) report = seconds / 4;  /* a short run still reports a few times */
  if (warmup < 0) warmup = seconds / 5 < 120 ? seconds / 5 : 120;
  const char* el = getenv("AUGUR_EAGER_LIMIT");
  long eager = el != NULL && atol(el) > 0 ? atol(el) : 8192;
  if (eager > max_bytes) eager = max_bytes / 2;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);  /* count errors, do not die */
  MPI_Comm halo, wild;
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &halo));
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &wild));
  MPI_Comm_set_errhandler(halo, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(wild, MPI_ERRORS_RETURN);
  /* Send and receive areas: two halos, then one max-size slot per random message. The vector
   * step needs blocks * stride doubles: 512 * 24 * 8 = 96 KiB, within one slot. */
  const int slots = 4 * g_size < MAXMSG ? 4 * g_size : MAXMSG;  /* random messages, at most */
  size_t area = (size_t)max_bytes * (size_t)(2 + slots);
  unsigned char* sbuf = malloc(area);
  unsigned char* rbuf = malloc(area);
  size_t big_bytes = 512 * 16 * sizeof(double);
  unsigned char* big = malloc(big_bytes);
  if (sbuf == NULL || rbuf == NULL || big == NULL) {
    fprintf(stderr, "soak: rank %d: cannot allocate %zu bytes\n", g_rank, 2 * area);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  memset(sbuf, 0, area);  /* touched now, so RSS counts them from the start */
  memset(rbuf, 0, area);

  FILE* log = NULL;
  if (g_rank == 0 && log_path != NULL) {
    log = fopen(log_path, "w");
    if (log == NULL) { perror(log_path); MPI_Abort(MPI_COMM_WORLD, 2); }
    fprintf(log, "# seconds iteration");
    for (int q = 0; q < g_size; ++q) fprintf(log, " rss_kib_rank%d", q);
    fputc('\n', log);
  }
  if (g_rank == 0) {
    printf("soak: %d ranks, %.0f s, reports every %.0f s, RSS baseline after %.0f s, messages 0-%ld bytes (eager limit %ld)\n",
           g_size, seconds, report, warmup, max_bytes, eager);
    fflush(stdout);
  }
  long* rss = calloc((size_t)g_size, sizeof(long));
  long* rss_base = calloc((size_t)g_size, sizeof(long));
  long* rss_first = calloc((size_t)g_size, sizeof(long));
  long* heap = calloc((size_t)g_size, sizeof(long));
  long* heap_base = calloc((size_t)g_size, sizeof(long));
  long* heap_first = calloc((size_t)g_size, sizeof(long));
  long* both = calloc(2 * (size_t)g_size, sizeof(long));
  int have_base = 0;
  const double t0 = MPI_Wtime();
  double next_report = report;
  long it = 0;
  for (;; ++it) {
    /* 0: stop; 1: go on; 2: go on and report (rank 0 owns the clock). */
    int what = 1;
    double now = MPI_Wtime() - t0;
    if (g_rank == 0) {
      if (now >= seconds) what = 0;
      else if (now >= next_report || it == 0) what = 2;
    }
    MPI_OK(MPI_Bcast(&what, 1, MPI_INT, 0, MPI_COMM_WORLD));
    if (what == 2 || what == 0) {
      long mine[2] = {rss_kib(), heap_kib()};
      MPI_OK(MPI_Gather(mine, 2, MPI_LONG, both, 2, MPI_LONG, 0, MPI_COMM_WORLD));
      for (int q = 0; g_rank == 0 && q < g_size; ++q) {
        rss[q] = both[2 * q];
        heap[q] = both[2 * q + 1];
      }
      long long mine4[4] = {g_sent, g_bytes_sent, g_errors, g_cancelled}, all4[4] = {0, 0, 0, 0};
      MPI_OK(MPI_Reduce(mine4, all4, 4, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
      if (g_rank == 0) {
        if (it == 0) {
          memcpy(rss_first, rss, (size_t)g_size * sizeof(long));
          memcpy(heap_first, heap, (size_t)g_size * sizeof(long));
        }
        if (!have_base && now >= warmup) {
          memcpy(rss_base, rss, (size_t)g_size * sizeof(long));
          memcpy(heap_base, heap, (size_t)g_size * sizeof(long));
          have_base = 1;
        }
        printf("soak: t=%.0fs iteration=%ld messages=%lld bytes=%lld cancelled=%lld errors=%lld rss_kib=", now, it,
               all4[0], all4[1], all4[3], all4[2]);
        for (int q = 0; q < g_size; ++q) printf("%s%ld", q ? "," : "", rss[q]);
        printf(" heap_kib=");
        for (int q = 0; q < g_size; ++q) printf("%s%ld", q ? "," : "", heap[q]);
        putchar('\n');
        fflush(stdout);
        if (log != NULL) {
          fprintf(log, "%.1f %ld", now, it);
          for (int q = 0; q < g_size; ++q) fprintf(log, " %ld", rss[q]);
          fputc('\n', log);
          fflush(log);
        }
        while (next_report <= now) next_report += report;
      }
    }
    if (what == 0) break;
    iteration(it, max_bytes, eager, halo, wild, sbuf, rbuf, big, big_bytes);
  }
  const double elapsed = MPI_Wtime() - t0;

  long long mine[6] = {g_sent, g_recvd, g_bytes_sent, g_bytes_recvd, g_errors, g_coll_calls};
  long long all[6] = {0, 0, 0, 0, 0, 0};
  MPI_OK(MPI_Reduce(mine, all, 6, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
  int failed = 0;
  if (g_rank == 0) {
    if (!have_base) {
      memcpy(rss_base, rss_first, (size_t)g_size * sizeof(long));
      memcpy(heap_base, heap_first, (size_t)g_size * sizeof(long));
    }
    if (all[0] != all[1] || all[2] != all[3]) {
      printf("soak: FAILED: %lld messages (%lld bytes) sent, %lld (%lld bytes) received\n", all[0], all[2], all[1], all[3]);
      failed = 1;
    }
    if (all[4] != 0) {
      printf("soak: FAILED: %lld errors (first ones on stderr)\n", all[4]);
      failed = 1;
    }
    const char* what_grew = kBoundHeap ? "heap in use (AddressSanitizer build)" : "RSS";
    const long* now_kib = kBoundHeap ? heap : rss;
    const long* base_kib = kBoundHeap ? heap_base : rss_base;
    for (int q = 0; q < g_size; ++q) {
      long growth = now_kib[q] - base_kib[q];
      long bound = base_kib[q] / 10 > slack_kib ? base_kib[q] / 10 : slack_kib;
      if (growth > bound) {
        printf("soak: FAILED: rank %d: %s grew by %ld KiB after warm-up (%ld -> %ld KiB), bound %ld KiB\n", q,
               what_grew, growth, base_kib[q], now_kib[q], bound);
        failed = 1;
      }
    }
    printf("soak: %s: %.0f s, %ld iterations, %lld point-to-point messages (%lld bytes) sent and received, "
           "%lld collective calls, %lld errors\n",
           failed ? "FAILED" : "passed", elapsed, it, all[0], all[2], all[5], all[4]);
    if (out_path != NULL) {
      FILE* f = fopen(out_path, "w");
      if (f == NULL) {
        perror(out_path);
        failed = 1;
      } else {
        fprintf(f, "ranks=%d\nseconds=%.1f\niterations=%ld\nmessages_sent=%lld\nmessages_received=%lld\n", g_size,
                elapsed, it, all[0], all[1]);
        fprintf(f, "bytes_sent=%lld\nbytes_received=%lld\ncollective_calls=%lld\nerrors=%lld\nwarmup_seconds=%.0f\n",
                all[2], all[3], all[5], all[4], warmup);
        for (int q = 0; q < g_size; ++q) {
          fprintf(f, "rank%d_rss_kib start=%ld after_warmup=%ld end=%ld\n", q, rss_first[q], rss_base[q], rss[q]);
          fprintf(f, "rank%d_heap_in_use_kib start=%ld after_warmup=%ld end=%ld\n", q, heap_first[q], heap_base[q],
                  heap[q]);
        }
        fprintf(f, "result=%s\n", failed ? "FAILED" : "passed");
        fclose(f);
      }
    }
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (log != NULL) fclose(log);
  free(rss);
  free(rss_base);
  free(rss_first);
  free(heap);
  free(heap_base);
  free(heap_first);
  free(both);
  free(sbuf);
  free(rbuf);
  free(big);
  MPI_Comm_free(&halo);
  MPI_Comm_free(&wild);
  MPI_Finalize();
  return failed || g_errors != 0;
}
