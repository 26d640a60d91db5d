/* Point-to-point semantics through augur's MPI: sizes across the eager/rendezvous boundary with
 * guard bytes, wildcards and non-overtaking, the completion functions, probe and Get_count,
 * truncation (MPI_ERR_TRUNCATE, nothing written past the buffer), PROC_NULL, self messages,
 * Sendrecv(_replace), persistent requests, buffered mode, cancel, Request_free, synchronous mode.
 * Any rank count. */
#include <string.h>

#include "check.h"

static unsigned char byte_of(int from, int to, int size, int k) {
  return (unsigned char)((from * 131 + to * 31 + size * 7 + k * 13) & 0xff);
}

static void sizes_between_all_pairs(void) {
  const int sizes[] = {0, 1, 100, 8192, 8193, 300000};
  const int ns = (int)(sizeof sizes / sizeof sizes[0]);
  for (int s = 0; s < ns; ++s) {
    const int n = sizes[s];
    unsigned char* out = malloc((size_t)n + 1);
    unsigned char* in = malloc((size_t)(n + 64) * (size_t)g_size);
    MPI_Request* req = malloc(sizeof(MPI_Request) * 2 * (size_t)g_size);
    for (int k = 0; k < n; ++k) out[k] = 0;
    memset(in, 0xcc, (size_t)(n + 64) * (size_t)g_size);
    int nr = 0;
    for (int q = 0; q < g_size; ++q) {
      MPI_Irecv(in + (size_t)q * (size_t)(n + 64), n, MPI_BYTE, q, s, MPI_COMM_WORLD, &req[nr++]);
    }
    unsigned char** bufs = malloc(sizeof(unsigned char*) * (size_t)g_size);
    for (int q = 0; q < g_size; ++q) {
      bufs[q] = malloc((size_t)n + 1);
      for (int k = 0; k < n; ++k) bufs[q][k] = byte_of(g_rank, q, n, k);
      MPI_Isend(bufs[q], n, MPI_BYTE, q, s, MPI_COMM_WORLD, &req[nr++]);
    }
    MPI_Status st[64];
    MPI_Status* sts = g_size <= 32 ? st : MPI_STATUSES_IGNORE;
    CHECK(MPI_Waitall(nr, req, sts) == MPI_SUCCESS, "waitall");
    for (int q = 0; q < g_size; ++q) {
      const unsigned char* b = in + (size_t)q * (size_t)(n + 64);
      int bad = -1;
      for (int k = 0; k < n + 64 && bad < 0; ++k) {
        if (b[k] != (k < n ? byte_of(q, g_rank, n, k) : 0xcc)) bad = k;
      }
      CHECK(bad < 0, "size %d from %d: byte %d wrong", n, q, bad);
      if (sts != MPI_STATUSES_IGNORE) {
        int count = -1;
        MPI_Get_count(&st[q], MPI_BYTE, &count);
        CHECK(st[q].MPI_SOURCE == q && st[q].MPI_TAG == s && count == n, "status from %d: source %d tag %d count %d",
              q, st[q].MPI_SOURCE, st[q].MPI_TAG, count);
      }
      CHECK(req[q] == MPI_REQUEST_NULL, "request not freed");
    }
    for (int q = 0; q < g_size; ++q) free(bufs[q]);
    free(bufs);
    free(out);
    free(in);
    free(req);
  }
}

/* Every rank sends 5 messages of each of two tags to rank 0 before rank 0 receives anything;
 * rank 0 receives with wildcards: per sender, messages come in the order sent. */
static void wildcards_and_order(void) {
  const int per = 5;
  if (g_rank != 0) {
    for (int i = 0; i < per; ++i) {
      int v[2] = {g_rank, i};
      MPI_Send(v, 2, MPI_INT, 0, 10 + (i % 2), MPI_COMM_WORLD);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) {
    int next[64] = {0};
    int flag = 0;
    MPI_Status st;
    if (g_size > 1) {
      MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      int count = 0;
      MPI_Get_count(&st, MPI_INT, &count);
      CHECK(count == 2 && st.MPI_SOURCE > 0, "probe: count %d source %d", count, st.MPI_SOURCE);
      MPI_Iprobe(st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      CHECK(flag == 1, "iprobe after probe");
    }
    for (int m = 0; m < per * (g_size - 1); ++m) {
      int v[2];
      MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      CHECK(v[0] == st.MPI_SOURCE && v[1] == next[v[0]] && st.MPI_TAG == 10 + (v[1] % 2),
            "from %d got message %d (tag %d), expected %d", st.MPI_SOURCE, v[1], st.MPI_TAG, next[v[0]]);
      next[v[0]] = v[1] + 1;
    }
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CHECK(flag == 0, "no message should be left");
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Specific tag receives posted in reverse order still match the right messages. */
static void tag_matching(void) {
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  int in[4] = {-1, -1, -1, -1}, out[4];
  MPI_Request r[8];
  for (int t = 0; t < 4; ++t) MPI_Irecv(&in[t], 1, MPI_INT, left, 3 - t + 20, MPI_COMM_WORLD, &r[t]);
  for (int t = 0; t < 4; ++t) {
    out[t] = g_rank * 100 + t;
    MPI_Isend(&out[t], 1, MPI_INT, right, t + 20, MPI_COMM_WORLD, &r[4 + t]);
  }
  /* Waitany/Waitsome/Testall mixed. */
  int done = 0, idx = -1;
  MPI_Waitany(8, r, &idx, MPI_STATUS_IGNORE);
  CHECK(idx >= 0 && idx < 8 && r[idx] == MPI_REQUEST_NULL, "waitany index %d", idx);
  ++done;
  while (done < 8) {
    int outcount = 0, indices[8];
    MPI_Waitsome(8, r, &outcount, indices, MPI_STATUSES_IGNORE);
    CHECK(outcount > 0 || outcount == MPI_UNDEFINED, "waitsome outcount %d", outcount);
    if (outcount == MPI_UNDEFINED) break;
    done += outcount;
  }
  CHECK(done == 8, "completed %d of 8", done);
  int flag = 0;
  MPI_Testall(8, r, &flag, MPI_STATUSES_IGNORE);
  CHECK(flag == 1, "testall on null requests");
  for (int t = 0; t < 4; ++t) CHECK(in[t] == left * 100 + (3 - t), "tag %d got %d", 3 - t + 20, in[t]);
  MPI_Waitany(8, r, &idx, MPI_STATUS_IGNORE);
  CHECK(idx == MPI_UNDEFINED, "waitany on all-null returns MPI_UNDEFINED (got %d)", idx);
}

static void truncation(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  for (int big = 0; big < 2; ++big) {
    const int n = big ? 50000 : 100;
    char* out = malloc((size_t)n);
    memset(out, 7, (size_t)n);
    char buf[2000];
    memset(buf, 0x55, sizeof buf);
    MPI_Request s;
    MPI_Isend(out, n, MPI_CHAR, right, 30, MPI_COMM_WORLD, &s);
    MPI_Status st;
    const int cap = big ? 1000 : 50;
    const int rc = MPI_Recv(buf, cap, MPI_CHAR, left, 30, MPI_COMM_WORLD, &st);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "truncated receive returned class %d", cls);
    int ok = 1;
    for (int k = cap; k < (int)sizeof buf; ++k) ok &= buf[k] == 0x55;
    CHECK(ok, "truncated receive wrote past its buffer");
    CHECK(buf[0] == 7 && buf[cap - 1] == 7, "truncated receive kept the first bytes");
    CHECK(MPI_Wait(&s, MPI_STATUS_IGNORE) == MPI_SUCCESS, "sender of a truncated message completes");
    free(out);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void proc_null_and_self(void) {
  int x = 5;
  MPI_Status st;
  CHECK(MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "send to PROC_NULL");
  CHECK(MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st) == MPI_SUCCESS, "recv from PROC_NULL");
  int count = -1;
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK(x == 5 && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0,
        "PROC_NULL status: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, count);
  double a[1000], b[1000];
  for (int i = 0; i < 1000; ++i) a[i] = i * 0.5 + g_rank;
  MPI_Request r;
  MPI_Isend(a, 1000, MPI_DOUBLE, g_rank, 40, MPI_COMM_WORLD, &r);
  MPI_Recv(b, 1000, MPI_DOUBLE, g_rank, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  CHECK(memcmp(a, b, sizeof a) == 0, "self message");
  MPI_Sendrecv(a, 10, MPI_DOUBLE, 0, 41, b, 10, MPI_DOUBLE, 0, 41, MPI_COMM_SELF, MPI_STATUS_IGNORE);
  CHECK(b[9] == a[9], "sendrecv on MPI_COMM_SELF");
}

static void sendrecv_ring(void) {
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  long v = g_rank, got = -1;
  MPI_Status st;
  MPI_Sendrecv(&v, 1, MPI_LONG, right, 50, &got, 1, MPI_LONG, left, 50, MPI_COMM_WORLD, &st);
  CHECK(got == left && st.MPI_SOURCE == left, "sendrecv got %ld from %d", got, st.MPI_SOURCE);
  int buf[3000];
  for (int i = 0; i < 3000; ++i) buf[i] = g_rank * 10000 + i;
  MPI_Sendrecv_replace(buf, 3000, MPI_INT, right, 51, left, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(buf[0] == left * 10000 && buf[2999] == left * 10000 + 2999, "sendrecv_replace got %d", buf[0]);
}

static void persistent(void) {
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  int out = 0, in = -1;
  MPI_Request r[2];
  MPI_Recv_init(&in, 1, MPI_INT, left, 60, MPI_COMM_WORLD, &r[0]);
  MPI_Send_init(&out, 1, MPI_INT, right, 60, MPI_COMM_WORLD, &r[1]);
  for (int it = 0; it < 10; ++it) {
    out = g_rank * 1000 + it;
    MPI_Startall(2, r);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    CHECK(in == left * 1000 + it, "persistent iteration %d got %d", it, in);
    CHECK(r[0] != MPI_REQUEST_NULL, "persistent request stays allocated");
  }
  MPI_Status st;
  CHECK(MPI_Wait(&r[0], &st) == MPI_SUCCESS, "wait on an inactive persistent request");
  MPI_Request_free(&r[0]);
  MPI_Request_free(&r[1]);
  CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL, "request_free");
}

static void buffered(void) {
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  int size = 0;
  MPI_Pack_size(100, MPI_INT, MPI_COMM_WORLD, &size);
  size = 2 * (size + MPI_BSEND_OVERHEAD);
  char* mem = malloc((size_t)size);
  MPI_Buffer_attach(mem, size);
  int out[100], in[100];
  for (int i = 0; i < 100; ++i) out[i] = g_rank + i;
  MPI_Bsend(out, 100, MPI_INT, right, 70, MPI_COMM_WORLD);
  out[0] = -1; /* the buffered copy was taken */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int big[1000];
  memset(big, 0, sizeof big);
  const int rc = MPI_Bsend(big, 1000, MPI_INT, right, 71, MPI_COMM_WORLD);
  CHECK(rc == MPI_ERR_BUFFER, "bsend past the attached buffer returned %d", rc);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Recv(in, 100, MPI_INT, left, 70, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(in[0] == left && in[99] == left + 99, "bsend data %d", in[0]);
  void* back = NULL;
  int back_size = 0;
  MPI_Buffer_detach(&back, &back_size);
  CHECK(back == mem && back_size == size, "buffer_detach returns the buffer");
  free(mem);
}

static void cancel_and_free(void) {
  int x = 0;
  MPI_Request r;
  MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &r);
  MPI_Cancel(&r);
  MPI_Status st;
  MPI_Wait(&r, &st);
  int flag = 0;
  MPI_Test_cancelled(&st, &flag);
  CHECK(flag == 1, "unmatched receive is cancelled");
  /* A freed send still delivers. */
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  int v = g_rank + 7, got = -1;
  MPI_Isend(&v, 1, MPI_INT, right, 80, MPI_COMM_WORLD, &r);
  MPI_Request_free(&r);
  MPI_Recv(&got, 1, MPI_INT, left, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(got == left + 7, "freed send delivered %d", got);
  /* Test loops until done; Ssend, Rsend, Issend deliver like Send. */
  MPI_Irecv(&got, 1, MPI_INT, left, 81, MPI_COMM_WORLD, &r);
  MPI_Ssend(&v, 1, MPI_INT, right, 81, MPI_COMM_WORLD);
  flag = 0;
  while (!flag) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
  CHECK(got == left + 7 && r == MPI_REQUEST_NULL, "ssend + test");
  MPI_Request rs;
  MPI_Irecv(&got, 1, MPI_INT, left, 82, MPI_COMM_WORLD, &r);
  MPI_Barrier(MPI_COMM_WORLD); /* ready mode: the receive is posted everywhere */
  MPI_Issend(&v, 1, MPI_INT, right, 82, MPI_COMM_WORLD, &rs);
  int idx = -1;
  flag = 0;
  MPI_Request both[2] = {r, rs};
  int n = 0;
  while (n < 2) {
    MPI_Testany(2, both, &idx, &flag, MPI_STATUS_IGNORE);
    if (flag) ++n;
  }
  CHECK(got == left + 7, "issend");
}

/* A synchronous send completes only once its receive has matched it: rank 0's Issend of a
 * few bytes stays incomplete, however long it is tested, until rank 1 posts the receive, which
 * rank 1 does only after rank 0 has stopped testing. Also to oneself, and persistent. */
static void synchronous_mode(void) {
  if (g_size >= 2 && g_rank < 2) {
    int x = 42, go = 1, flag = 0;
    MPI_Request r;
    if (g_rank == 0) {
      CHECK(MPI_Issend(&x, 1, MPI_INT, 1, 77, MPI_COMM_WORLD, &r) == MPI_SUCCESS, "issend");
      for (int i = 0; i < 2000 && !flag; ++i) CHECK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS, "test");
      CHECK(flag == 0, "MPI_Issend completed before its receive was posted");
      CHECK(MPI_Send(&go, 1, MPI_INT, 1, 78, MPI_COMM_WORLD) == MPI_SUCCESS, "go");
      CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS, "wait issend");
      CHECK(MPI_Ssend(&x, 0, MPI_INT, 1, 79, MPI_COMM_WORLD) == MPI_SUCCESS, "zero-byte ssend");
    } else {
      int got = 0;
      CHECK(MPI_Recv(&go, 1, MPI_INT, 0, 78, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS, "recv go");
      CHECK(MPI_Recv(&got, 1, MPI_INT, 0, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS, "recv ssend");
      CHECK(got == 42, "synchronous message carried %d", got);
      CHECK(MPI_Recv(&got, 0, MPI_INT, 0, 79, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS, "recv zero-byte");
    }
  }
  int a = g_rank, b = -1, flag = 0;
  MPI_Request s;
  CHECK(MPI_Issend(&a, 1, MPI_INT, g_rank, 5, MPI_COMM_WORLD, &s) == MPI_SUCCESS, "issend to self");
  CHECK(MPI_Test(&s, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag == 0, "issend to self done before its receive");
  CHECK(MPI_Recv(&b, 1, MPI_INT, g_rank, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS && b == g_rank, "self");
  CHECK(MPI_Wait(&s, MPI_STATUS_IGNORE) == MPI_SUCCESS, "wait issend to self");
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Matched probe: Mprobe/Improbe take the earliest matching message out of matching, so that
 * only Mrecv/Imrecv on its handle receives it, whatever is received in between; eager and
 * rendezvous, into a contiguous and a strided buffer; truncation; PROC_NULL; bad handles. */
static void matched_probe(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  enum { kBig = 5000 }; /* ints: 20000 bytes, above the eager limit */
  int a[3] = {g_rank, 1, 2}, b[3] = {g_rank, 3, 4}, c[4] = {10, 11, 12, 13};
  int* big = malloc(kBig * sizeof(int));
  int* got_big = malloc(kBig * sizeof(int));
  for (int i = 0; i < kBig; ++i) big[i] = i * 7 + g_rank;
  MPI_Request s[5];
  MPI_Isend(a, 3, MPI_INT, right, 50, MPI_COMM_WORLD, &s[0]);
  MPI_Isend(b, 3, MPI_INT, right, 50, MPI_COMM_WORLD, &s[1]);
  MPI_Isend(big, kBig, MPI_INT, right, 51, MPI_COMM_WORLD, &s[2]);
  MPI_Isend(c, 4, MPI_INT, right, 52, MPI_COMM_WORLD, &s[3]);
  MPI_Isend(c, 4, MPI_INT, right, 53, MPI_COMM_WORLD, &s[4]);

  MPI_Message m1 = MPI_MESSAGE_NULL, m2 = MPI_MESSAGE_NULL;
  MPI_Status st;
  CHECK(MPI_Mprobe(left, 50, MPI_COMM_WORLD, &m1, &st) == MPI_SUCCESS, "mprobe");
  int count = -1;
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK(m1 != MPI_MESSAGE_NULL && st.MPI_SOURCE == left && st.MPI_TAG == 50 && count == 3,
        "mprobe status: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, count);
  /* The second message is still in matching; the first is not. */
  int flag = 0;
  while (!flag) MPI_Improbe(left, 50, MPI_COMM_WORLD, &flag, &m2, &st);
  CHECK(m2 != MPI_MESSAGE_NULL && m2 != m1, "improbe took the second message (handles %d, %d)", m1, m2);
  MPI_Iprobe(left, 50, MPI_COMM_WORLD, &flag, &st);
  CHECK(flag == 0, "probed messages are out of matching");
  /* Received in the other order: each handle names its message. */
  const MPI_Message m1_was = m1;
  int x[3] = {-1, -1, -1}, y[3] = {-1, -1, -1};
  CHECK(MPI_Mrecv(y, 3, MPI_INT, &m2, &st) == MPI_SUCCESS && m2 == MPI_MESSAGE_NULL, "mrecv sets the handle to null");
  CHECK(MPI_Mrecv(x, 3, MPI_INT, &m1, MPI_STATUS_IGNORE) == MPI_SUCCESS, "mrecv");
  CHECK(x[0] == left && x[1] == 1 && x[2] == 2 && y[0] == left && y[1] == 3 && y[2] == 4,
        "matched messages in order: %d %d %d / %d %d %d", x[0], x[1], x[2], y[0], y[1], y[2]);
  CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 50, "mrecv status: source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);

  /* Rendezvous: a receive posted after the probe cannot take it; Imrecv reads it. */
  MPI_Message mb;
  CHECK(MPI_Mprobe(MPI_ANY_SOURCE, 51, MPI_COMM_WORLD, &mb, &st) == MPI_SUCCESS, "mprobe rendezvous");
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK(count == kBig && st.MPI_SOURCE == left, "rendezvous probe: count %d source %d", count, st.MPI_SOURCE);
  MPI_Request r;
  CHECK(MPI_Imrecv(got_big, kBig, MPI_INT, &mb, &r) == MPI_SUCCESS && mb == MPI_MESSAGE_NULL, "imrecv");
  CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS, "wait imrecv");
  MPI_Get_count(&st, MPI_INT, &count);
  int ok = count == kBig;
  for (int i = 0; i < kBig; ++i) ok &= got_big[i] == i * 7 + left;
  CHECK(ok, "rendezvous data through imrecv (count %d)", count);

  /* Into a strided layout: every other int. */
  MPI_Datatype every_other;
  MPI_Type_vector(4, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  int z[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
  MPI_Message mz;
  MPI_Mprobe(left, 52, MPI_COMM_WORLD, &mz, MPI_STATUS_IGNORE);
  CHECK(MPI_Mrecv(z, 1, every_other, &mz, MPI_STATUS_IGNORE) == MPI_SUCCESS, "mrecv strided");
  CHECK(z[0] == 10 && z[2] == 11 && z[4] == 12 && z[6] == 13 && z[1] == -1 && z[3] == -1 && z[5] == -1 && z[7] == -1,
        "strided mrecv: %d %d %d %d %d %d %d %d", z[0], z[1], z[2], z[3], z[4], z[5], z[6], z[7]);
  MPI_Type_free(&every_other);

  /* Truncation is reported and writes nothing past the buffer. */
  int t[4] = {-1, -1, -1, -1};
  MPI_Message mt;
  MPI_Mprobe(left, 53, MPI_COMM_WORLD, &mt, MPI_STATUS_IGNORE);
  int cls = -1;
  MPI_Error_class(MPI_Mrecv(t, 2, MPI_INT, &mt, MPI_STATUS_IGNORE), &cls);
  CHECK(cls == MPI_ERR_TRUNCATE && t[0] == 10 && t[1] == 11 && t[2] == -1 && t[3] == -1, "truncated mrecv: class %d", cls);
  CHECK(MPI_Waitall(5, s, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "sends of probed messages complete");

  /* PROC_NULL: the no-process message, received at once with an empty status. */
  MPI_Message mn;
  CHECK(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &mn, &st) == MPI_SUCCESS && mn == MPI_MESSAGE_NO_PROC, "mprobe PROC_NULL");
  CHECK(MPI_Mrecv(t, 4, MPI_INT, &mn, &st) == MPI_SUCCESS && mn == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL,
        "mrecv of the no-process message: source %d", st.MPI_SOURCE);
  /* Bad handles: null, received already, never issued. */
  MPI_Message bad[3] = {MPI_MESSAGE_NULL, m1_was, 12345};
  for (int i = 0; i < 3; ++i) {
    MPI_Error_class(MPI_Mrecv(t, 4, MPI_INT, &bad[i], MPI_STATUS_IGNORE), &cls);
    CHECK(cls == MPI_ERR_REQUEST, "mrecv of bad handle %d: class %d", bad[i], cls);
  }
  MPI_Message none = 99;
  flag = 1;
  CHECK(MPI_Improbe(left, 54, MPI_COMM_WORLD, &flag, &none, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag == 0, "improbe, nothing sent");
  free(big);
  free(got_big);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  start(&argc, &argv);
  sizes_between_all_pairs();
  wildcards_and_order();
  tag_matching();
  truncation();
  proc_null_and_self();
  sendrecv_ring();
  persistent();
  buffered();
  cancel_and_free();
  synchronous_mode();
  matched_probe();
  return finish("p2p");
}
