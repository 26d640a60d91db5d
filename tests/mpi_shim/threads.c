/* MPI_THREAD_MULTIPLE: several threads per rank calling MPI at once, each result checked against
 * a literal reference. Each thread exchanges messages with both neighbours on its own tag
 * (blocking and nonblocking, across the eager/rendezvous boundary, every byte checked);
 * receives with MPI_ANY_SOURCE and MPI_ANY_TAG in every thread take messages meant for no thread
 * in particular, each exactly once; every thread runs collectives on its own duplicate of
 * MPI_COMM_WORLD; every thread adds to one counter by MPI_Fetch_and_op; and one thread waits in
 * MPI_Recv while another sends it the message it waits for. */
#include <pthread.h>
#include <string.h>

#include "check.h"

enum { T = 4, ITERS = 50, BIG = 20000 };

static MPI_Comm g_dup[T];
static MPI_Win g_win;
static long g_pass_t[T], g_fail_t[T];

#define TCHECK(t, cond, ...)                                                                 \
  do {                                                                                       \
    if (cond) {                                                                              \
      ++g_pass_t[t];                                                                         \
    } else {                                                                                 \
      ++g_fail_t[t];                                                                         \
      fprintf(stderr, "rank %d thread %d: %s:%d: CHECK(%s) failed: ", g_rank, t, __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                                          \
      fputc('\n', stderr);                                                                   \
    }                                                                                        \
  } while (0)

static unsigned char byte_at(int from, int t, int i, int k) { return (unsigned char)(from * 31 + t * 7 + i * 3 + k); }

static void* neighbours(void* arg) {
  const int t = (int)(long)arg;
  const int left = (g_rank + g_size - 1) % g_size, right = (g_rank + 1) % g_size;
  static unsigned char out[T][BIG], in[T][2][BIG];
  for (int i = 0; i < ITERS; ++i) {
    const int n = i % 2 ? BIG : 100 + i; /* eager and rendezvous */
    for (int k = 0; k < n; ++k) out[t][k] = byte_at(g_rank, t, i, k);
    MPI_Request r[3];
    MPI_Irecv(in[t][0], n, MPI_BYTE, left, t, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(in[t][1], n, MPI_BYTE, right, t, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(out[t], n, MPI_BYTE, right, t, MPI_COMM_WORLD, &r[2]);
    MPI_Send(out[t], n, MPI_BYTE, left, t, MPI_COMM_WORLD);
    MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
    int bad = -1;
    for (int k = 0; k < n && bad < 0; ++k) {
      if (in[t][0][k] != byte_at(left, t, i, k) || in[t][1][k] != byte_at(right, t, i, k)) bad = k;
    }
    TCHECK(t, bad < 0, "iteration %d (%d bytes): byte %d differs", i, n, bad);
  }
  /* Collectives on this thread's own communicator, at the same time as the other threads'. */
  for (int i = 0; i < ITERS; ++i) {
    long mine = g_rank + 1000L * t + i, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, g_dup[t]);
    const long want = (long)g_size * (g_size - 1) / 2 + (1000L * t + i) * g_size;
    TCHECK(t, sum == want, "allreduce %d: %ld, expected %ld", i, sum, want);
  }
  /* One-sided: every thread of every rank adds 1 to rank 0's counter ITERS times. */
  long long one = 1, old = 0;
  for (int i = 0; i < ITERS; ++i) MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, 0, 0, MPI_SUM, g_win);
  MPI_Win_flush(0, g_win);
  return NULL;
}

/* Every rank sends T*ITERS messages to its right neighbour with tags 100 + k; the receiving
 * rank's threads take them with MPI_ANY_SOURCE and MPI_ANY_TAG, ITERS each. Every message must
 * be received exactly once: the sum and the count of the payloads tell. */
static long g_wild_sum[T];
static void* wildcards(void* arg) {
  const int t = (int)(long)arg;
  long sum = 0;
  for (int i = 0; i < ITERS; ++i) {
    int v = -1;
    MPI_Status st;
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    TCHECK(t, st.MPI_SOURCE == (g_rank + g_size - 1) % g_size && st.MPI_TAG == 100 + v % 1000,
           "wildcard receive: source %d tag %d value %d", st.MPI_SOURCE, st.MPI_TAG, v);
    sum += v;
  }
  g_wild_sum[t] = sum;
  return NULL;
}

static void* late_sender(void* arg) {
  (void)arg;
  /* Sends to this very rank once the main thread is (most likely) blocked in MPI_Recv. */
  for (volatile long k = 0; k < 2000000; ++k) {
  }
  const int v = 4242;
  MPI_Send(&v, 1, MPI_INT, g_rank, 77, MPI_COMM_WORLD);
  return NULL;
}

int main(int argc, char** argv) {
  int provided = -1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
  int level = -1, main_flag = 0;
  MPI_Query_thread(&level);
  MPI_Is_thread_main(&main_flag);
  CHECK(level == MPI_THREAD_MULTIPLE && main_flag, "query_thread %d, is_thread_main %d", level, main_flag);
  for (int t = 0; t < T; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &g_dup[t]);
  long long counter = 0;
  MPI_Win_create(&counter, sizeof counter, sizeof counter, MPI_INFO_NULL, MPI_COMM_WORLD, &g_win);
  MPI_Win_lock_all(0, g_win);

  pthread_t th[T];
  for (int t = 0; t < T; ++t) pthread_create(&th[t], NULL, neighbours, (void*)(long)t);
  for (int t = 0; t < T; ++t) pthread_join(th[t], NULL);
  MPI_Win_unlock_all(g_win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, g_win);
    CHECK(counter == (long long)T * ITERS * g_size, "fetch_and_op from every thread: %lld, expected %lld", counter,
          (long long)T * ITERS * g_size);
    MPI_Win_unlock(0, g_win);
  }

  /* Wildcards across threads: the receivers are up before the messages come, or not. */
  for (int t = 0; t < T; ++t) pthread_create(&th[t], NULL, wildcards, (void*)(long)t);
  const int right = (g_rank + 1) % g_size;
  for (int k = 0; k < T * ITERS; ++k) {
    const int v = 1000 * k + k % 1000; /* v % 1000 == tag - 100 */
    MPI_Send(&v, 1, MPI_INT, right, 100 + k % 1000, MPI_COMM_WORLD);
  }
  long total = 0, want = 0;
  for (int t = 0; t < T; ++t) {
    pthread_join(th[t], NULL);
    total += g_wild_sum[t];
  }
  for (int k = 0; k < T * ITERS; ++k) want += 1000 * k + k % 1000;
  CHECK(total == want, "wildcard receives summed %ld, expected %ld (a message lost or taken twice)", total, want);

  /* A receive blocked in one thread is satisfied by a send from another. */
  pthread_t s;
  pthread_create(&s, NULL, late_sender, NULL);
  int v = 0;
  MPI_Recv(&v, 1, MPI_INT, g_rank, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  pthread_join(s, NULL);
  CHECK(v == 4242, "blocked receive got %d", v);

  for (int t = 0; t < T; ++t) {
    g_pass += g_pass_t[t];
    g_fail += g_fail_t[t];
    MPI_Comm_free(&g_dup[t]);
  }
  MPI_Win_free(&g_win);
  return finish("threads");
}
