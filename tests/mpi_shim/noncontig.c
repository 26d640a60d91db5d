/* Non-contiguous point-to-point between two ranks: vector and indexed types with few runs go by
 * the engine's gather/scatter lists, types with many runs are packed (AUGUR_SGE_MAX_RUNS decides);
 * both eager and rendezvous sizes, truncation into a shorter type. Every received buffer is
 * compared with what MPI_Pack/MPI_Unpack of the sender's data gives (guard values elsewhere).
 * Each rank prints how many messages it expects to have sent and received by gather/scatter
 * list; noncontig_stats.sh compares that with its augur-stats line. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static double value(int rank, int c, long i) { return rank * 1e6 + c * 1e4 + (double)i; }

/* Sender buffer of `elems` doubles for case c from `rank`. */
static void fill(double* b, long elems, int rank, int c) {
  for (long i = 0; i < elems; ++i) b[i] = value(rank, c, i);
}

static long g_sge_sends, g_sge_recvs, g_limit = 16;

/* Sends `stype` from a filled buffer to the peer and receives `rtype` from it; checks the
 * received bytes against pack-then-unpack of the peer's buffer. Runs counts decide the path. */
static void exchange(int c, MPI_Datatype stype, int scount, long sruns, MPI_Datatype rtype, int rcount, long rruns,
                     long elems, int expect_err) {
  const int peer = 1 - g_rank;
  double* sbuf = malloc(elems * sizeof(double));
  double* rbuf = malloc(elems * sizeof(double));
  double* peer_buf = malloc(elems * sizeof(double));
  double* want = malloc(elems * sizeof(double));
  fill(sbuf, elems, g_rank, c);
  fill(peer_buf, elems, peer, c);
  for (long i = 0; i < elems; ++i) rbuf[i] = want[i] = -1.0;
  MPI_Status st;
  const int rc = MPI_Sendrecv(sbuf, scount, stype, peer, c, rbuf, rcount, rtype, peer, c, MPI_COMM_WORLD, &st);
  int cls = MPI_SUCCESS;
  MPI_Error_class(rc, &cls);
  CHECK(cls == (expect_err ? MPI_ERR_TRUNCATE : MPI_SUCCESS), "case %d: error class %d", c, cls);
  int psize = 0, pos = 0;
  MPI_Pack_size(scount, stype, MPI_COMM_WORLD, &psize);
  char* packed = malloc((size_t)psize + 1);
  MPI_Pack(peer_buf, scount, stype, packed, psize, &pos, MPI_COMM_WORLD);
  int rsize = 0;
  MPI_Type_size(rtype, &rsize);
  const int whole = rsize > 0 ? pos / rsize : 0; /* whole receive-type copies in the message */
  int upos = 0;
  MPI_Unpack(packed, pos, &upos, want, whole < rcount ? whole : rcount, rtype, MPI_COMM_WORLD);
  long bad = 0;
  for (long i = 0; i < elems; ++i) bad += memcmp(&rbuf[i], &want[i], sizeof(double)) != 0;
  CHECK(bad == 0, "case %d: %ld elements differ from pack-then-unpack", c, bad);
  if (!expect_err) {
    int got = 0;
    MPI_Get_count(&st, MPI_BYTE, &got);
    CHECK(got == pos, "case %d: received %d bytes, sent %d", c, got, pos);
  }
  g_sge_sends += sruns > 1 && sruns <= g_limit;
  g_sge_recvs += rruns > 1 && rruns <= g_limit;
  free(packed);
  free(sbuf);
  free(rbuf);
  free(peer_buf);
  free(want);
}

int main(int argc, char** argv) {
  start(&argc, &argv);
  if (g_size != 2) {
    if (g_rank == 0) fprintf(stderr, "noncontig: needs 2 ranks\n");
    MPI_Finalize();
    return 1;
  }
  const char* lim = getenv("AUGUR_SGE_MAX_RUNS");
  if (lim != NULL) g_limit = atol(lim);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Datatype v16, v48, v1000, v10, v30, idx, cont_idx;
  MPI_Type_vector(16, 3, 5, MPI_DOUBLE, &v16);      /* 16 runs, 384 B: eager */
  MPI_Type_vector(48, 250, 300, MPI_DOUBLE, &v48);  /* 48 runs, 96000 B: rendezvous */
  MPI_Type_vector(1000, 1, 2, MPI_DOUBLE, &v1000);  /* 1000 runs: packed */
  MPI_Type_vector(10, 3, 5, MPI_DOUBLE, &v10);      /* shorter than v16 */
  MPI_Type_vector(30, 250, 300, MPI_DOUBLE, &v30);  /* shorter than v48 */
  /* 20 misaligned byte runs (7, 13, 1, ... bytes at odd offsets): 260 B; x40 copies of the
   * same shape through hindexed below makes it rendezvous. */
  int lens[20], displs[20], total = 0;
  for (int i = 0; i < 20; ++i) {
    lens[i] = 1 + (i * 7) % 25;
    displs[i] = 3 + i * 40 + (i % 3);
    total += lens[i];
  }
  MPI_Type_indexed(20, lens, displs, MPI_BYTE, &idx);
  MPI_Type_contiguous(total, MPI_BYTE, &cont_idx);
  MPI_Datatype big_idx;
  int blens[40], bdispls[40];
  for (int i = 0; i < 40; ++i) {
    blens[i] = 3001 + i;
    bdispls[i] = 5 + i * 3100;
  }
  MPI_Type_indexed(40, blens, bdispls, MPI_BYTE, &big_idx);
  int big_total = 0;
  MPI_Type_size(big_idx, &big_total);
  MPI_Datatype big_cont;
  MPI_Type_contiguous(big_total, MPI_BYTE, &big_cont);
  MPI_Datatype all[] = {v16, v48, v1000, v10, v30, idx, cont_idx, big_idx, big_cont};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) MPI_Type_commit(&all[i]);

  exchange(0, v16, 1, 16, v16, 1, 16, 100, 0);
  exchange(1, v48, 1, 48, v48, 1, 48, 48 * 300, 0);
  exchange(2, v1000, 1, 1000, v1000, 1, 1000, 2000, 0);
  exchange(3, v1000, 10, 10000, v1000, 10, 10000, 20000, 0); /* 80000 B by rendezvous, packed */
  exchange(4, idx, 1, 20, cont_idx, 1, 1, 200, 0);           /* gather, contiguous receive */
  exchange(5, cont_idx, 1, 1, idx, 1, 20, 200, 0);           /* contiguous send, scatter */
  exchange(6, big_idx, 1, 40, big_cont, 1, 1, 40 * 3100 / 8 + 16, 0);
  exchange(7, big_cont, 1, 1, big_idx, 1, 40, 40 * 3100 / 8 + 16, 0);
  exchange(8, v16, 4, 61, v16, 4, 61, 400, 0);               /* 4 copies: runs merge across copies */
  exchange(9, v16, 1, 16, v10, 1, 10, 100, 1);               /* eager truncation */
  exchange(10, v48, 1, 48, v30, 1, 30, 48 * 300, 1);         /* rendezvous truncation */
  exchange(11, v16, 0, 0, v16, 0, 0, 100, 0);                /* 0 bytes */

  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) MPI_Type_free(&all[i]);
  printf("noncontig-expect rank=%d sge_sends=%ld sge_recvs=%ld\n", g_rank, g_sge_sends, g_sge_recvs);
  fflush(stdout);
  return finish("noncontig");
}
