/* MPI_Pack / MPI_Unpack against a plain C loop doing the same copy, in one run, through the MPI
 * interface only, so the same source measures augur's MPI (augur-perf-pack) and the system's
 * Open MPI (augur-perf-pack-openmpi); scripts/pack-bench runs both and prints them side by side.
 *
 * Shapes (512 KiB of typed data each): every 4th double (a vector), the last column of a
 * 1024 x 64 array of doubles (a subarray: a halo column), an indexed type of irregular blocks of
 * 1-8 doubles, and 64 Ki contiguous doubles (control). Before timing, each MPI result is compared
 * byte for byte with the loop's (exit 1 on a mismatch). The four alternatives of a shape (loop
 * pack, MPI_Pack, loop unpack, MPI_Unpack) are measured interleaved, one sample each per round,
 * each sample repeating the operation for about 2 ms; medians over the rounds.
 *
 * Usage: pack_time [ROUNDS]   (default 31). Prints one row per shape: microseconds per call of
 * each alternative and the ratios pack_r = loop pack / MPI_Pack, unpk_r = loop unpack /
 * MPI_Unpack (1.0: as fast as the loop). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TYPED_DOUBLES 65536 /* 512 KiB */
#define ROWS 1024
#define COLS 64
#define MAX_BLOCKS 16384

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The plain loops: what one writes by hand for each shape. noinline so each is one call, as
 * MPI_Pack is. */
__attribute__((noinline)) static void loop_pack_vec4(const double* restrict a, double* restrict out) {
  for (int i = 0; i < TYPED_DOUBLES / 4; ++i) out[i] = a[4 * i];
}
__attribute__((noinline)) static void loop_unpack_vec4(const double* restrict in, double* restrict a) {
  for (int i = 0; i < TYPED_DOUBLES / 4; ++i) a[4 * i] = in[i];
}
__attribute__((noinline)) static void loop_pack_col(const double* restrict a, double* restrict out) {
  for (int r = 0; r < ROWS; ++r) out[r] = a[r * COLS + COLS - 1];
}
__attribute__((noinline)) static void loop_unpack_col(const double* restrict in, double* restrict a) {
  for (int r = 0; r < ROWS; ++r) a[r * COLS + COLS - 1] = in[r];
}
static int g_nblocks, g_blen[MAX_BLOCKS], g_disp[MAX_BLOCKS];
__attribute__((noinline)) static void loop_pack_idx(const double* restrict a, double* restrict out) {
  for (int b = 0; b < g_nblocks; ++b)
    for (int j = 0; j < g_blen[b]; ++j) *out++ = a[g_disp[b] + j];
}
__attribute__((noinline)) static void loop_unpack_idx(const double* restrict in, double* restrict a) {
  for (int b = 0; b < g_nblocks; ++b)
    for (int j = 0; j < g_blen[b]; ++j) a[g_disp[b] + j] = *in++;
}
__attribute__((noinline)) static void loop_pack_contig(const double* restrict a, double* restrict out) {
  for (int i = 0; i < TYPED_DOUBLES; ++i) out[i] = a[i];
}
__attribute__((noinline)) static void loop_unpack_contig(const double* restrict in, double* restrict a) {
  for (int i = 0; i < TYPED_DOUBLES; ++i) a[i] = in[i];
}

struct Shape {
  const char* name;
  MPI_Datatype type;
  void (*pack)(const double*, double*);
  void (*unpack)(const double*, double*);
  int packed_bytes;
};

static double* g_typed;   /* the typed (user) buffer */
static double* g_dst;     /* unpack target, a second typed buffer */
static double* g_packed;  /* packed data */
static struct Shape* g_shape;

enum { kLoopPack, kMpiPack, kLoopUnpack, kMpiUnpack, kAlts };

static void run(int alt) {
  int pos = 0;
  switch (alt) {
    case kLoopPack: g_shape->pack(g_typed, g_packed); break;
    case kMpiPack:
      if (MPI_Pack(g_typed, 1, g_shape->type, g_packed, g_shape->packed_bytes, &pos, MPI_COMM_WORLD) != MPI_SUCCESS) exit(1);
      break;
    case kLoopUnpack: g_shape->unpack(g_packed, g_dst); break;
    default:
      if (MPI_Unpack(g_packed, g_shape->packed_bytes, &pos, g_dst, 1, g_shape->type, MPI_COMM_WORLD) != MPI_SUCCESS) exit(1);
      break;
  }
}

/* Seconds per call: repeats for about 2 ms. */
static double sample(int alt, long reps) {
  const double t0 = now();
  for (long i = 0; i < reps; ++i) run(alt);
  return (now() - t0) / (double)reps;
}

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* Byte-for-byte: MPI_Pack equals the loop's pack, MPI_Unpack writes what the loop writes. */
static int check(struct Shape* s, size_t typed_bytes) {
  g_shape = s;
  unsigned char* want = malloc((size_t)s->packed_bytes);
  unsigned char* want_dst = malloc(typed_bytes);
  run(kLoopPack);
  memcpy(want, g_packed, (size_t)s->packed_bytes);
  memset(g_packed, 0, (size_t)s->packed_bytes);
  run(kMpiPack);
  int ok = memcmp(want, g_packed, (size_t)s->packed_bytes) == 0;
  memset(g_dst, 0x5A, typed_bytes);
  run(kLoopUnpack);
  memcpy(want_dst, g_dst, typed_bytes);
  memset(g_dst, 0x5A, typed_bytes);
  run(kMpiUnpack);
  ok &= memcmp(want_dst, g_dst, typed_bytes) == 0;
  free(want);
  free(want_dst);
  if (!ok) fprintf(stderr, "pack_time: %s: MPI result differs from the loop's\n", s->name);
  return ok;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rounds = argc > 1 ? atoi(argv[1]) : 31;
  const size_t typed_bytes = TYPED_DOUBLES * sizeof(double);
  g_typed = malloc(typed_bytes);
  g_dst = malloc(typed_bytes);
  g_packed = malloc(typed_bytes);
  for (int i = 0; i < TYPED_DOUBLES; ++i) g_typed[i] = i * 0.5 + 1;

  struct Shape shapes[4];
  int n = 0;

  MPI_Datatype vec;
  MPI_Type_vector(TYPED_DOUBLES / 4, 1, 4, MPI_DOUBLE, &vec);
  MPI_Type_commit(&vec);
  shapes[n++] = (struct Shape){"vector every 4th double", vec, loop_pack_vec4, loop_unpack_vec4, TYPED_DOUBLES / 4 * 8};

  MPI_Datatype col;
  const int sizes[] = {ROWS, COLS}, subs[] = {ROWS, 1}, starts[] = {0, COLS - 1};
  MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &col);
  MPI_Type_commit(&col);
  shapes[n++] = (struct Shape){"subarray halo column", col, loop_pack_col, loop_unpack_col, ROWS * 8};

  /* Irregular blocks: 1-8 doubles, gaps of 0-7 doubles (a fixed LCG, so every run is the same). */
  unsigned lcg = 12345;
  int at = 0, total = 0;
  while (g_nblocks < MAX_BLOCKS) {
    lcg = lcg * 1103515245u + 12345u;
    const int len = 1 + (int)((lcg >> 16) % 8), gap = (int)((lcg >> 24) % 8);
    if (at + gap + len > TYPED_DOUBLES) break;
    g_disp[g_nblocks] = at + gap;
    g_blen[g_nblocks++] = len;
    at += gap + len;
    total += len;
  }
  MPI_Datatype idx;
  MPI_Type_indexed(g_nblocks, g_blen, g_disp, MPI_DOUBLE, &idx);
  MPI_Type_commit(&idx);
  shapes[n++] = (struct Shape){"indexed 1-8 doubles", idx, loop_pack_idx, loop_unpack_idx, total * 8};

  MPI_Datatype contig;
  MPI_Type_contiguous(TYPED_DOUBLES, MPI_DOUBLE, &contig);
  MPI_Type_commit(&contig);
  shapes[n++] = (struct Shape){"contiguous (control)", contig, loop_pack_contig, loop_unpack_contig, TYPED_DOUBLES * 8};

  int ok = 1;
  for (int s = 0; s < n; ++s) ok &= check(&shapes[s], typed_bytes);
  if (!ok) return 1;

  printf("%-26s %9s %9s %9s %9s %7s %7s  (us per call, median of %d rounds)\n", "shape", "loop_pk", "MPI_Pack",
         "loop_unpk", "MPI_Unpk", "pack_r", "unpk_r", rounds);
  for (int s = 0; s < n; ++s) {
    g_shape = &shapes[s];
    long reps[kAlts];
    for (int a = 0; a < kAlts; ++a) {  /* calibrate: about 2 ms per sample */
      double t = sample(a, 1);
      reps[a] = t > 2e-3 ? 1 : (long)(2e-3 / (t > 1e-9 ? t : 1e-9)) + 1;
    }
    double* t = malloc(sizeof(double) * (size_t)(kAlts * rounds));
    for (int r = 0; r < rounds; ++r)
      for (int k = 0; k < kAlts; ++k) {
        const int a = (k + r) % kAlts;  /* rotate the start */
        t[a * rounds + r] = sample(a, reps[a]);
      }
    double med[kAlts];
    for (int a = 0; a < kAlts; ++a) {
      qsort(t + a * rounds, (size_t)rounds, sizeof(double), cmp_double);
      med[a] = t[a * rounds + rounds / 2];
    }
    free(t);
    printf("%-26s %9.2f %9.2f %9.2f %9.2f %7.2f %7.2f\n", shapes[s].name, med[kLoopPack] * 1e6, med[kMpiPack] * 1e6,
           med[kLoopUnpack] * 1e6, med[kMpiUnpack] * 1e6, med[kLoopPack] / med[kMpiPack],
           med[kLoopUnpack] / med[kMpiUnpack]);
  }
  for (int s = 0; s < n; ++s) MPI_Type_free(&shapes[s].type);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
