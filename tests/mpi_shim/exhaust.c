/* Limits that must fail one call, cleanly, and leave the job running (docs/mpi.md, "Errors"):
 *   - a registration refused at the cache bound (run with AUGUR_RCACHE_MAX_BYTES=1048576, by
 *     exhaust.sh): a 2 MiB rendezvous send is refused at the sender, a 1 MiB receive into a
 *     buffer that straddles one more page than the bound is refused at the receiver (its sender
 *     is released); both are MPI_ERR_NO_MEM under MPI_ERRORS_RETURN, and later point-to-point
 *     and collective traffic still arrives intact;
 *   - counts whose byte size passes what a message carries (count * size > 4 GiB - 1, or past
 *     2^63) are MPI_ERR_COUNT before any memory is touched (the buffers here are 8 bytes), as are
 *     collective buffers whose displacements pass an int and Pack_size results an int cannot hold;
 *     MPI_Get_count of more than INT_MAX elements is MPI_UNDEFINED;
 *   - a legal message whose type spans more than 4 GiB (two doubles 4 GiB apart, in a sparse
 *     mapping) arrives.
 * With --fatal, rank 0 then repeats the refused send under MPI_ERRORS_ARE_FATAL, so that
 * exhaust.sh can check the message names the bound and its setting.
 * Run with at least 2 ranks (3 or more also checks the collectives' displacement limit). */
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"

static int cls(int rc) {
  int c = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &c);
  return c;
}

static unsigned char* page_buffer(size_t bytes) {
  void* p = NULL;
  if (posix_memalign(&p, 4096, bytes) != 0) return NULL;
  return p;
}

static void fill(unsigned char* p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) p[i] = (unsigned char)(i * 31u + seed);
}
static int same(const unsigned char* p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != (unsigned char)(i * 31u + seed)) return 0;
  }
  return 1;
}

/* Traffic after a refusal: both directions, eager and rendezvous, and a collective. */
static void still_works(const char* after) {
  const size_t big = 1u << 20;  /* page-aligned: exactly the bound, registrable */
  unsigned char* s = page_buffer(big);
  unsigned char* r = page_buffer(big);
  if (s == NULL || r == NULL) exit(2);
  if (g_rank < 2) {
    const int peer = 1 - g_rank;
    size_t sizes[] = {0, 100, 8192, 8193, 256 * 1024, big};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
      size_t n = sizes[k];
      fill(s, n, (unsigned)(g_rank * 7 + k));
      memset(r, 0, n);
      MPI_Status st;
      int rc = MPI_Sendrecv(s, (int)n, MPI_BYTE, peer, 50, r, (int)n, MPI_BYTE, peer, 50, MPI_COMM_WORLD, &st);
      int got = -1;
      MPI_Get_count(&st, MPI_BYTE, &got);
      CHECK(rc == MPI_SUCCESS && got == (int)n && same(r, n, (unsigned)(peer * 7 + k)),
            "after %s: %zu bytes with rank %d: rc %d, %d bytes, data %s", after, n, peer, rc, got,
            same(r, n, (unsigned)(peer * 7 + k)) ? "intact" : "wrong");
    }
  }
  int one = 1, sum = 0;
  int rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(rc == MPI_SUCCESS && sum == g_size, "after %s: allreduce rc %d sum %d", after, rc, sum);
  free(s);
  free(r);
}

static void registration_bound(void) {
  const size_t two = 2u << 20;
  unsigned char* s = page_buffer(two);
  unsigned char* r = page_buffer(two + 4096);
  if (s == NULL || r == NULL) exit(2);
  fill(s, two, 3);

  /* A rendezvous send larger than the bound: refused at the sender, nothing sent. */
  if (g_rank == 0) {
    int rc = MPI_Send(s, (int)two, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
    CHECK(cls(rc) == MPI_ERR_NO_MEM, "a 2 MiB send over a 1 MiB bound: class %d, want MPI_ERR_NO_MEM", cls(rc));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  still_works("a refused send");

  /* 1 MiB into a buffer 100 bytes past a page: 257 pages to register at the receiver (the sender's
   * page-aligned 256 fit). The receive fails; the send completes (its buffer is free again). */
  if (g_rank == 0) {
    int rc = MPI_Send(s, 1 << 20, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "the send to a receive refused its registration: rc %d", rc);
  } else if (g_rank == 1) {
    MPI_Status st;
    int rc = MPI_Recv(r + 100, 1 << 20, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &st);
    CHECK(cls(rc) == MPI_ERR_NO_MEM, "a 1 MiB receive needing 257 pages over a 256-page bound: class %d, want MPI_ERR_NO_MEM",
          cls(rc));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  still_works("a refused receive");

  /* Nonblocking: the refused request fails alone, the others around it complete. */
  if (g_rank == 0) {
    MPI_Request q[3];
    MPI_Status st[3];
    int rc0 = MPI_Isend(s, 4096, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &q[0]);
    int rc1 = MPI_Isend(s, (int)two, MPI_BYTE, 1, 4, MPI_COMM_WORLD, &q[1]);
    int rc2 = MPI_Isend(s, 20000, MPI_BYTE, 1, 5, MPI_COMM_WORLD, &q[2]);
    CHECK(rc0 == MPI_SUCCESS && rc2 == MPI_SUCCESS, "the sends around a refused one: rc %d %d", rc0, rc2);
    /* The refusal comes at the call or at completion, depending on who registers. */
    int rc = rc1 != MPI_SUCCESS ? rc1 : MPI_Wait(&q[1], &st[1]);
    CHECK(cls(rc) == MPI_ERR_NO_MEM, "a refused Isend: class %d, want MPI_ERR_NO_MEM", cls(rc));
    if (rc0 == MPI_SUCCESS) MPI_Wait(&q[0], &st[0]);
    if (rc2 == MPI_SUCCESS) MPI_Wait(&q[2], &st[2]);
  } else if (g_rank == 1) {
    MPI_Status st;
    memset(r, 0, 20000);
    int rc0 = MPI_Recv(r, 4096, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &st);
    CHECK(rc0 == MPI_SUCCESS && same(r, 4096, 3), "the message before a refused one: rc %d", rc0);
    int rc2 = MPI_Recv(r, 20000, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st);
    CHECK(rc2 == MPI_SUCCESS && same(r, 20000, 3), "the message after a refused one: rc %d", rc2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  still_works("a refused Isend");
  free(s);
  free(r);
}

static void counts(void) {
  double tiny[1] = {0};
  int rc;
  const int peer = g_rank == 0 ? 1 : 0;
  /* 2^31 - 1 doubles: 16 GiB. */
  rc = MPI_Send(tiny, INT_MAX, MPI_DOUBLE, peer, 9, MPI_COMM_WORLD);
  CHECK(cls(rc) == MPI_ERR_COUNT, "MPI_Send of INT_MAX doubles: class %d", cls(rc));
  rc = MPI_Recv(tiny, INT_MAX, MPI_DOUBLE, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(cls(rc) == MPI_ERR_COUNT, "MPI_Recv of INT_MAX doubles: class %d", cls(rc));
  MPI_Request q = MPI_REQUEST_NULL;
  rc = MPI_Irecv(tiny, INT_MAX / 2 + 1, MPI_INT64_T, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &q);
  CHECK(cls(rc) == MPI_ERR_COUNT && q == MPI_REQUEST_NULL, "MPI_Irecv of 8 GiB: class %d", cls(rc));
  /* Exactly 4 GiB: one byte past the limit. */
  MPI_Datatype kib;
  MPI_Type_contiguous(1024, MPI_BYTE, &kib);
  MPI_Type_commit(&kib);
  rc = MPI_Send(tiny, 4 << 20, kib, peer, 9, MPI_COMM_WORLD);
  CHECK(cls(rc) == MPI_ERR_COUNT, "MPI_Send of 4 GiB: class %d", cls(rc));
  /* A derived type of 2^40 bytes: count * size passes 2^63, not wrapped. */
  MPI_Datatype mib, tib;
  MPI_Type_contiguous(1 << 20, MPI_BYTE, &mib);
  MPI_Type_contiguous(1 << 20, mib, &tib);
  MPI_Type_commit(&tib);
  MPI_Count tsize = 0;
  MPI_Type_size_x(tib, &tsize);
  CHECK(tsize == (MPI_Count)1 << 40, "a 2^40-byte type has size %lld", (long long)tsize);
  rc = MPI_Send(tiny, INT_MAX, tib, peer, 9, MPI_COMM_WORLD);
  CHECK(cls(rc) == MPI_ERR_COUNT, "MPI_Send of INT_MAX x 2^40 bytes: class %d", cls(rc));
  rc = MPI_Send(tiny, 1, tib, peer, 9, MPI_COMM_WORLD);
  CHECK(cls(rc) == MPI_ERR_COUNT, "MPI_Send of one 2^40-byte type: class %d", cls(rc));
  int psize = 0;
  rc = MPI_Pack_size(INT_MAX, MPI_DOUBLE, MPI_COMM_WORLD, &psize);
  CHECK(cls(rc) == MPI_ERR_COUNT, "MPI_Pack_size of INT_MAX doubles: class %d (size %d)", cls(rc), psize);
  int pos = 0;
  unsigned char out[16];
  rc = MPI_Pack(tiny, 1, tib, out, (int)sizeof out, &pos, MPI_COMM_WORLD);
  CHECK(cls(rc) == MPI_ERR_COUNT && pos == 0, "MPI_Pack of a 2^40-byte type: class %d", cls(rc));
  /* Collectives: every rank refuses locally, nobody waits. */
  rc = MPI_Bcast(tiny, INT_MAX, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  CHECK(cls(rc) == MPI_ERR_COUNT, "MPI_Bcast of INT_MAX doubles: class %d", cls(rc));
  double tiny2[1];
  rc = MPI_Allreduce(tiny, tiny2, INT_MAX, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  CHECK(cls(rc) == MPI_ERR_COUNT, "MPI_Allreduce of INT_MAX doubles: class %d", cls(rc));
  if (g_size >= 3) {  /* 2^30 bytes per rank is legal per block; the third block's displacement is not an int */
    rc = MPI_Alltoall(tiny, 1 << 30, MPI_BYTE, tiny2, 1 << 30, MPI_BYTE, MPI_COMM_WORLD);
    CHECK(cls(rc) == MPI_ERR_COUNT, "MPI_Alltoall of 2^30 bytes per rank on %d ranks: class %d", g_size, cls(rc));
  }
  /* A status of 2^32 bytes: more elements than an int holds. */
  MPI_Status st;
  memset(&st, 0, sizeof st);
  st.augur_count_lo = 0;
  st.augur_count_hi = 1;
  int n = 0;
  MPI_Get_count(&st, MPI_BYTE, &n);
  CHECK(n == MPI_UNDEFINED, "MPI_Get_count of 2^32 bytes: %d, want MPI_UNDEFINED", n);
  MPI_Get_elements(&st, MPI_BYTE, &n);
  CHECK(n == MPI_UNDEFINED, "MPI_Get_elements of 2^32 bytes: %d, want MPI_UNDEFINED", n);
  MPI_Type_free(&kib);
  MPI_Type_free(&mib);
  MPI_Type_free(&tib);
  still_works("refused counts");

  /* Legal: two doubles 4 GiB + 8 bytes apart (a vector whose extent passes 2^32), in a sparse
   * mapping of which only two pages are touched. */
  const size_t stride = ((size_t)1 << 29) + 1; /* doubles */
  const size_t span = (stride + 1) * sizeof(double);
  double* m = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) {
    if (g_rank == 0) printf("exhaust: no sparse %zu-byte mapping here: the 4 GiB-extent case is skipped\n", span);
  } else {
    MPI_Datatype wide;
    MPI_Type_vector(2, 1, (int)stride, MPI_DOUBLE, &wide);
    MPI_Type_commit(&wide);
    MPI_Aint lb = 0, extent = 0;
    MPI_Type_get_extent(wide, &lb, &extent);
    CHECK(extent == (MPI_Aint)span, "vector extent %lld, want %zu", (long long)extent, span);
    if (g_rank < 2) {
      m[0] = 1.5 + g_rank;
      m[stride] = -2.5 - g_rank;
      double got[2] = {0, 0};
      MPI_Status s2;
      rc = MPI_Sendrecv(m, 1, wide, peer, 60, got, 2, MPI_DOUBLE, peer, 60, MPI_COMM_WORLD, &s2);
      CHECK(rc == MPI_SUCCESS && got[0] == 1.5 + peer && got[1] == -2.5 - peer,
            "two doubles 4 GiB apart: rc %d, got %g %g", rc, got[0], got[1]);
      got[0] = 7.25;
      got[1] = -7.25;
      m[0] = m[stride] = 0;
      rc = MPI_Sendrecv(got, 2, MPI_DOUBLE, peer, 61, m, 1, wide, peer, 61, MPI_COMM_WORLD, &s2);
      CHECK(rc == MPI_SUCCESS && m[0] == 7.25 && m[stride] == -7.25, "received 4 GiB apart: rc %d, got %g %g", rc, m[0],
            m[stride]);
    }
    MPI_Type_free(&wide);
    munmap(m, span);
  }
}

int main(int argc, char** argv) {
  start(&argc, &argv);
  if (g_size < 2) {
    if (g_rank == 0) printf("exhaust: needs 2 ranks\n");
    MPI_Finalize();
    return 1;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  registration_bound();
  counts();
  if (argc > 1 && strcmp(argv[1], "--fatal") == 0) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (g_rank == 0) {
      unsigned char* s = page_buffer(2u << 20);
      MPI_Send(s, 2 << 20, MPI_BYTE, 1, 1, MPI_COMM_WORLD);  /* aborts the job with the message */
      printf("exhaust: FAILED: the refused send returned under MPI_ERRORS_ARE_FATAL\n");
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  return finish("exhaust");
}
