/* Derived datatypes: sizes and extents as MPI defines them, and data moved by every constructor
 * checked against a serial reference (the receiver gets the type's elements in type-map order
 * as a contiguous array). Pack/Unpack/Pack_size, Get_elements, non-contiguous receives. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define N 64

/* Struct {int; double; char[3]} with C padding, and its datatype (committed). */
struct S {
  int a;
  double b;
  char c[3];
};
static MPI_Datatype struct_s_type(void) {
  MPI_Datatype st;
  const int sbl[] = {1, 1, 3};
  const MPI_Aint sdisp[] = {offsetof(struct S, a), offsetof(struct S, b), offsetof(struct S, c)};
  const MPI_Datatype stypes[] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  MPI_Type_create_struct(3, sbl, sdisp, stypes, &st);
  MPI_Type_commit(&st);
  return st;
}

/* Sends `count` of `type` over buf (doubles 0..N-1 + 1000*rank) to the right neighbour, which
 * receives contiguous doubles; compares against the offsets (in doubles) the type should pick. */
static void roundtrip(const char* name, MPI_Datatype type, int count, const int* want, int nwant) {
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  double src[N], got[N];
  for (int i = 0; i < N; ++i) src[i] = i + 1000.0 * g_rank;
  for (int i = 0; i < N; ++i) got[i] = -1;
  MPI_Request r;
  MPI_Irecv(got, N, MPI_DOUBLE, left, 5, MPI_COMM_WORLD, &r);
  MPI_Send(src, count, type, right, 5, MPI_COMM_WORLD);
  MPI_Status st;
  MPI_Wait(&r, &st);
  int n = -1;
  MPI_Get_count(&st, MPI_DOUBLE, &n);
  int ok = n == nwant;
  for (int i = 0; i < nwant && ok; ++i) ok &= got[i] == want[i] + 1000.0 * left;
  CHECK(ok, "%s: received %d doubles, expected %d (first %g, want %g)", name, n, nwant, got[0],
        nwant > 0 ? want[0] + 1000.0 * left : 0.0);
  /* And the reverse: contiguous doubles into the non-contiguous type. */
  double back[N];
  for (int i = 0; i < N; ++i) back[i] = -1;
  double flat[N];
  for (int i = 0; i < nwant; ++i) flat[i] = i + 0.5 + g_rank;
  MPI_Irecv(back, count, type, left, 6, MPI_COMM_WORLD, &r);
  MPI_Send(flat, nwant, MPI_DOUBLE, right, 6, MPI_COMM_WORLD);
  MPI_Wait(&r, &st);
  ok = 1;
  char touched[N] = {0};
  for (int i = 0; i < nwant; ++i) {
    ok &= back[want[i]] == i + 0.5 + left;
    touched[want[i]] = 1;
  }
  for (int i = 0; i < N; ++i) ok &= touched[i] || back[i] == -1;
  CHECK(ok, "%s: unpacking into the type", name);
  int elems = -1;
  MPI_Get_elements(&st, type, &elems);
  CHECK(elems == nwant, "%s: get_elements %d", name, elems);
}

/* MPI_Pack / MPI_Unpack of `count` copies of `type`, byte for byte against its type map given
 * as `nruns` (offset, length) byte runs of one copy repeated at `extent`: Pack at an offset
 * writes exactly the runs' bytes in order and nothing around them; Unpack writes exactly the
 * runs' bytes back and leaves every other byte of the buffer alone. */
static void pack_exact(const char* name, MPI_Datatype type, int count, const long* runs, int nruns, long extent) {
  long end = 0, want_size = 0;
  for (int r = 0; r < nruns; ++r) {
    if (runs[2 * r] + runs[2 * r + 1] > end) end = runs[2 * r] + runs[2 * r + 1];
    want_size += runs[2 * r + 1];
  }
  const long span = (count - 1) * extent + end;
  unsigned char* src = malloc((size_t)span);
  for (long i = 0; i < span; ++i) src[i] = (unsigned char)(i * 7 + 3 + g_rank + (i >> 8));
  int psize = -1;
  MPI_Pack_size(count, type, MPI_COMM_WORLD, &psize);
  CHECK(psize == count * want_size, "%s: pack_size %d, want %ld", name, psize, count * want_size);
  unsigned char* want = malloc((size_t)psize + 1);
  unsigned char* packed = malloc((size_t)psize + 8);
  long n = 0;
  for (long k = 0; k < count; ++k)
    for (int r = 0; r < nruns; ++r) {
      memcpy(want + n, src + k * extent + runs[2 * r], (size_t)runs[2 * r + 1]);
      n += runs[2 * r + 1];
    }
  memset(packed, 0xEE, (size_t)psize + 8);
  int pos = 4;
  int rc = MPI_Pack(src, count, type, packed, psize + 8, &pos, MPI_COMM_WORLD);
  int guards = 1;
  for (int i = 0; i < 4; ++i) guards &= packed[i] == 0xEE && packed[psize + 4 + i] == 0xEE;
  CHECK(rc == MPI_SUCCESS && pos == 4 + psize && memcmp(packed + 4, want, (size_t)psize) == 0 && guards,
        "%s: MPI_Pack of %d copies (rc %d, position %d)", name, count, rc, pos);
  unsigned char* dst = malloc((size_t)span);
  unsigned char* expect = malloc((size_t)span);
  memset(dst, 0x5A, (size_t)span);
  memset(expect, 0x5A, (size_t)span);
  for (long k = 0; k < count; ++k)
    for (int r = 0; r < nruns; ++r) memcpy(expect + k * extent + runs[2 * r], src + k * extent + runs[2 * r], (size_t)runs[2 * r + 1]);
  pos = 4;
  rc = MPI_Unpack(packed, psize + 8, &pos, dst, count, type, MPI_COMM_WORLD);
  CHECK(rc == MPI_SUCCESS && pos == 4 + psize && memcmp(dst, expect, (size_t)span) == 0,
        "%s: MPI_Unpack of %d copies (rc %d, position %d)", name, count, rc, pos);
  free(src);
  free(want);
  free(packed);
  free(dst);
  free(expect);
}

/* Byte runs of a vector of `count` blocks of `blocklen` elements of `esize` bytes, `stride`
 * elements apart (caller frees). */
static long* vector_runs(int count, int blocklen, int stride, long esize) {
  long* r = malloc(sizeof(long) * 2 * (size_t)count);
  for (int i = 0; i < count; ++i) {
    r[2 * i] = (long)i * stride * esize;
    r[2 * i + 1] = blocklen * esize;
  }
  return r;
}

/* Pack/Unpack through the library's relations, byte for byte: vector, indexed, struct, a 2-D
 * halo column, copies enough to be packed in chunks, a freed handle given to a new type (whose
 * packing must not be the old type's), and a message that ends inside a copy. */
static void pack_unpack_exact(void) {
  MPI_Datatype v;
  MPI_Type_vector(1000, 1, 4, MPI_DOUBLE, &v);  /* every 4th double */
  MPI_Type_commit(&v);
  long* vr = vector_runs(1000, 1, 4, 8);
  pack_exact("vector every 4th double", v, 1, vr, 1000, (999 * 4 + 1) * 8);
  pack_exact("vector every 4th double x3", v, 3, vr, 1000, (999 * 4 + 1) * 8);
  free(vr);
  MPI_Type_free(&v);

  MPI_Datatype ix;
  const int bl[] = {1, 3, 2, 5}, disp[] = {10, 0, 4, 20};
  MPI_Type_indexed(4, bl, disp, MPI_INT, &ix);
  MPI_Type_commit(&ix);
  const long ixr[] = {40, 4, 0, 12, 16, 8, 80, 20};
  pack_exact("indexed ints", ix, 1, ixr, 4, 100);
  pack_exact("indexed ints x7", ix, 7, ixr, 4, 100);
  MPI_Type_free(&ix);

  MPI_Datatype st = struct_s_type();
  const long str[] = {(long)offsetof(struct S, a), 4, (long)offsetof(struct S, b), 8, (long)offsetof(struct S, c), 3};
  pack_exact("struct x5", st, 5, str, 3, (long)sizeof(struct S));
  MPI_Type_free(&st);

  /* The last column of a 50 x 40 C array of doubles (a halo column). */
  MPI_Datatype col;
  const int sizes[] = {50, 40}, subs[] = {50, 1}, starts[] = {0, 39};
  MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &col);
  MPI_Type_commit(&col);
  long colr[100];
  for (int i = 0; i < 50; ++i) {
    colr[2 * i] = (i * 40 + 39) * 8;
    colr[2 * i + 1] = 8;
  }
  pack_exact("subarray halo column", col, 1, colr, 50, 50 * 40 * 8);
  MPI_Type_free(&col);

  /* 600000 ints in 300000 copies: more than one relation holds (2^18 elements), so packed in
   * chunks, the last one partial. Rank 0 only: the check is the same on every rank, and eight
   * ranks doing it at once on the guest's two emulated cores took minutes under ASan. */
  if (g_rank == 0) {
    MPI_Datatype pair;
    MPI_Type_vector(2, 1, 3, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    const long pr[] = {0, 4, 12, 4};
    pack_exact("300000 copies of vector(2,1,3)", pair, 300000, pr, 2, 16);
    MPI_Type_free(&pair);
  }

  /* A freed handle given out again names a new type: its relations are its own. */
  MPI_Datatype a, b;
  MPI_Type_vector(100, 1, 2, MPI_INT, &a);
  MPI_Type_commit(&a);
  long* ar = vector_runs(100, 1, 2, 4);
  pack_exact("vector(100,1,2) before free", a, 2, ar, 100, (99 * 2 + 1) * 4);
  free(ar);
  const MPI_Datatype old = a;
  MPI_Type_free(&a);
  MPI_Type_vector(100, 1, 3, MPI_INT, &b);
  MPI_Type_commit(&b);
  long* br = vector_runs(100, 1, 3, 4);
  pack_exact(b == old ? "vector(100,1,3) on a reused handle" : "vector(100,1,3)", b, 2, br, 100, (99 * 3 + 1) * 4);
  free(br);

  /* A message that ends inside the second copy: 250 ints into 2 copies of 200 at stride 2. */
  {
    MPI_Datatype w;
    MPI_Type_vector(200, 1, 2, MPI_INT, &w);
    MPI_Type_commit(&w);
    const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
    int flat[250], got[2 * 399 + 1];
    for (int i = 0; i < 250; ++i) flat[i] = g_rank * 1000 + i;
    for (int i = 0; i < 2 * 399 + 1; ++i) got[i] = -1;
    MPI_Status stt;
    MPI_Sendrecv(flat, 250, MPI_INT, right, 9, got, 2, w, left, 9, MPI_COMM_WORLD, &stt);
    int count = -1, ok = 1;
    MPI_Get_count(&stt, MPI_INT, &count);
    /* copy k starts at k * extent (399 ints); element j of a copy is at 2j */
    for (int i = 0; i < 2 * 399 + 1; ++i) {
      const int k = i / 399, j = i % 399, e = k * 200 + j / 2;
      const int want = (j % 2 == 0 && k < 2 && e < 250) ? left * 1000 + e : -1;
      ok &= got[i] == want;
    }
    CHECK(count == 250 && ok, "short message into a vector: count %d", count);
    MPI_Type_free(&w);
  }
  MPI_Type_free(&b);
}

/* MPI_Type_get_envelope/contents give back each constructor's arguments as they were passed
 * (MPI-3.1 4.1.13); derived component types come back as new handles the caller frees. */
static void envelopes(void) {
  int ni, na, nd, comb;
  MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb);
  CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0, "MPI_INT: combiner %d", comb);

  MPI_Datatype vec, hidx, st, sub, res, dup;
  MPI_Type_vector(3, 2, 5, MPI_DOUBLE, &vec);
  MPI_Type_get_envelope(vec, &ni, &na, &nd, &comb);
  int iv[16] = {0};
  MPI_Aint av[8] = {0};
  MPI_Datatype tv[4] = {0};
  MPI_Type_get_contents(vec, 16, 8, 4, iv, av, tv);
  CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nd == 1 && iv[0] == 3 && iv[1] == 2 && iv[2] == 5 &&
            tv[0] == MPI_DOUBLE,
        "vector envelope: %d %d %d %d / %d %d %d", comb, ni, na, nd, iv[0], iv[1], iv[2]);

  const int bl[2] = {1, 4};
  const MPI_Aint disp[2] = {8, 40};
  MPI_Type_create_hindexed(2, bl, disp, vec, &hidx);
  MPI_Type_get_envelope(hidx, &ni, &na, &nd, &comb);
  MPI_Type_get_contents(hidx, 16, 8, 4, iv, av, tv);
  CHECK(comb == MPI_COMBINER_HINDEXED && ni == 3 && na == 2 && nd == 1 && iv[0] == 2 && iv[1] == 1 && iv[2] == 4 &&
            av[0] == 8 && av[1] == 40,
        "hindexed envelope: %d %d %d %d", comb, ni, na, nd);
  /* The component is derived: a new handle to an equal type, freed by the caller. */
  int n1 = 0, n2 = 0, c2 = 0;
  MPI_Type_size(tv[0], &n1);
  MPI_Type_get_envelope(tv[0], &ni, &na, &nd, &c2);
  MPI_Type_size(vec, &n2);
  CHECK(tv[0] != MPI_DOUBLE && n1 == n2 && c2 == MPI_COMBINER_VECTOR, "hindexed's component: size %d, combiner %d", n1, c2);
  MPI_Type_free(&tv[0]);

  const MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  const int sbl[3] = {2, 1, 5};
  const MPI_Aint sdisp[3] = {0, 8, 16};
  MPI_Type_create_struct(3, sbl, sdisp, types, &st);
  MPI_Type_get_envelope(st, &ni, &na, &nd, &comb);
  MPI_Type_get_contents(st, 16, 8, 4, iv, av, tv);
  CHECK(comb == MPI_COMBINER_STRUCT && ni == 4 && na == 3 && nd == 3 && iv[0] == 3 && iv[3] == 5 && av[2] == 16 &&
            tv[0] == MPI_INT && tv[1] == MPI_DOUBLE && tv[2] == MPI_CHAR,
        "struct envelope: %d %d %d %d", comb, ni, na, nd);

  const int sizes[2] = {10, 20}, subs[2] = {3, 4}, starts[2] = {1, 2};
  MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_FLOAT, &sub);
  MPI_Type_get_envelope(sub, &ni, &na, &nd, &comb);
  MPI_Type_get_contents(sub, 16, 8, 4, iv, av, tv);
  CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 8 && iv[0] == 2 && iv[1] == 10 && iv[4] == 4 && iv[6] == 2 &&
            iv[7] == MPI_ORDER_FORTRAN && tv[0] == MPI_FLOAT,
        "subarray envelope: %d %d", comb, ni);

  MPI_Type_create_resized(MPI_INT, -4, 16, &res);
  MPI_Type_get_envelope(res, &ni, &na, &nd, &comb);
  MPI_Type_get_contents(res, 16, 8, 4, iv, av, tv);
  CHECK(comb == MPI_COMBINER_RESIZED && ni == 0 && na == 2 && av[0] == -4 && av[1] == 16 && tv[0] == MPI_INT,
        "resized envelope: %d", comb);

  MPI_Type_dup(MPI_INT, &dup);
  MPI_Type_get_envelope(dup, &ni, &na, &nd, &comb);
  MPI_Type_get_contents(dup, 16, 8, 4, iv, av, tv);
  CHECK(comb == MPI_COMBINER_DUP && nd == 1 && tv[0] == MPI_INT, "dup envelope: %d", comb);

  MPI_Type_free(&vec);
  MPI_Type_free(&hidx);
  MPI_Type_free(&st);
  MPI_Type_free(&sub);
  MPI_Type_free(&res);
  MPI_Type_free(&dup);
}

/* MPI_Pack_external: the external32 bytes of basic types as MPI-3.1 13.5.2 gives them (big-endian,
 * MPI_LONG in 4 bytes, MPI_LONG_DOUBLE as an IEEE quad), sizes, a round trip of a struct array
 * through another rank, and the errors. */
static void external32(void) {
  unsigned char b[256];
  MPI_Aint pos = 0, sz = -1;
  const int ints[3] = {1, -2, 0x01020304};
  MPI_Pack_external("external32", ints, 3, MPI_INT, b, sizeof b, &pos);
  const unsigned char want_ints[12] = {0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 1, 2, 3, 4};
  CHECK(pos == 12 && memcmp(b, want_ints, 12) == 0, "external32 ints: %ld bytes %02x %02x %02x %02x", (long)pos, b[0], b[1],
        b[2], b[3]);
  const long l = -5;
  const short sh = 0x1234;
  const double d = 1.0;
  const long double ld = 1.5L;
  pos = 0;
  MPI_Pack_external("external32", &l, 1, MPI_LONG, b, sizeof b, &pos);
  MPI_Pack_external("external32", &sh, 1, MPI_SHORT, b, sizeof b, &pos);
  MPI_Pack_external("external32", &d, 1, MPI_DOUBLE, b, sizeof b, &pos);
  MPI_Pack_external("external32", &ld, 1, MPI_LONG_DOUBLE, b, sizeof b, &pos);
  const unsigned char want[4 + 2 + 8 + 16] = {0xff, 0xff, 0xff, 0xfb, 0x12, 0x34, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0,
                                              0x3f, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  CHECK(pos == 30 && memcmp(b, want, 30) == 0, "external32 long/short/double/long double: %ld bytes", (long)pos);
  long l2 = 0;
  short sh2 = 0;
  double d2 = 0;
  long double ld2 = 0;
  MPI_Aint at = 0;
  MPI_Unpack_external("external32", b, pos, &at, &l2, 1, MPI_LONG);
  MPI_Unpack_external("external32", b, pos, &at, &sh2, 1, MPI_SHORT);
  MPI_Unpack_external("external32", b, pos, &at, &d2, 1, MPI_DOUBLE);
  MPI_Unpack_external("external32", b, pos, &at, &ld2, 1, MPI_LONG_DOUBLE);
  CHECK(at == pos && l2 == -5 && sh2 == 0x1234 && d2 == 1.0 && ld2 == 1.5L, "external32 unpack: %ld %d %g", l2, sh2, d2);
  MPI_Pack_external_size("external32", 1, MPI_LONG_DOUBLE, &sz);
  CHECK(sz == 16, "external32 size of MPI_LONG_DOUBLE %ld", (long)sz);
  MPI_Pack_external_size("external32", 3, MPI_DOUBLE_INT, &sz);
  CHECK(sz == 36, "external32 size of 3 MPI_DOUBLE_INT %ld", (long)sz);

  /* a struct array and a vector, to the right neighbour as bytes, unpacked there */
  MPI_Datatype st = struct_s_type(), vec;
  MPI_Type_vector(2, 1, 3, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  MPI_Pack_external_size("external32", 3, st, &sz);
  CHECK(sz == 3 * 15, "external32 size of 3 structs %ld", (long)sz);
  struct S out[3], in[3];
  memset(out, 0, sizeof out);
  memset(in, 0, sizeof in);
  for (int i = 0; i < 3; ++i) {
    out[i].a = g_rank * 10 + i - 100;
    out[i].b = g_rank + i * 0.5;
    memcpy(out[i].c, "ab", 3);
  }
  const int vin[6] = {g_rank, -1, -1, -g_rank - 7, -1, -1};
  const struct {
    double v;
    int i;
  } pair = {2.5 + g_rank, -g_rank};
  pos = 0;
  MPI_Pack_external("external32", out, 3, st, b, sizeof b, &pos);
  MPI_Pack_external("external32", vin, 1, vec, b, sizeof b, &pos);
  MPI_Pack_external("external32", &pair, 1, MPI_DOUBLE_INT, b, sizeof b, &pos);
  CHECK(pos == 45 + 8 + 12, "external32 position %ld", (long)pos);
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  unsigned char rb[256];
  MPI_Sendrecv(b, (int)pos, MPI_BYTE, right, 21, rb, sizeof rb, MPI_BYTE, left, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  int vout[6] = {0, 0, 0, 0, 0, 0};
  struct {
    double v;
    int i;
  } pair2 = {0, 0};
  at = 0;
  MPI_Unpack_external("external32", rb, pos, &at, in, 3, st);
  MPI_Unpack_external("external32", rb, pos, &at, vout, 1, vec);
  MPI_Unpack_external("external32", rb, pos, &at, &pair2, 1, MPI_DOUBLE_INT);
  int ok = at == pos;
  for (int i = 0; i < 3; ++i) ok &= in[i].a == left * 10 + i - 100 && in[i].b == left + i * 0.5 && strcmp(in[i].c, "ab") == 0;
  CHECK(ok, "external32 struct array from rank %d", left);
  CHECK(vout[0] == left && vout[3] == -left - 7 && vout[1] == 0, "external32 vector %d %d %d", vout[0], vout[1], vout[3]);
  CHECK(pair2.v == 2.5 + left && pair2.i == -left, "external32 MPI_DOUBLE_INT %g %d", pair2.v, pair2.i);

  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int cls = -1;
  pos = 0;
  MPI_Error_class(MPI_Pack_external("native", ints, 3, MPI_INT, b, sizeof b, &pos), &cls);
  CHECK(cls == MPI_ERR_ARG, "datarep \"native\": class %d", cls);
  pos = 0;
  MPI_Error_class(MPI_Pack_external("external32", ints, 3, MPI_INT, b, 11, &pos), &cls);
  CHECK(cls == MPI_ERR_TRUNCATE && pos == 0, "external32 into 11 bytes: class %d, position %ld", cls, (long)pos);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Type_free(&st);
  MPI_Type_free(&vec);
}

/* MPI_Type_create_darray: what each of 4 (virtual) processes owns of a 4x6 array, block over the
 * rows and cyclic(2) over the columns, in C and Fortran order, and a cyclic vector over 3, against
 * loops over the distribution; its envelope, external32 size and errors. */
static void darrays(void) {
  const int gsizes[2] = {4, 6}, psizes[2] = {2, 2};
  const int distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC}, dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2};
  for (int f = 0; f < 2; ++f) {
    for (int r = 0; r < 4; ++r) {
      MPI_Datatype t;
      MPI_Type_create_darray(4, r, 2, gsizes, distribs, dargs, psizes, f ? MPI_ORDER_FORTRAN : MPI_ORDER_C, MPI_DOUBLE, &t);
      MPI_Type_commit(&t);
      const int pr = r / 2, pc = r % 2; /* the process grid is row-major */
      int rows[4], nr = 0, cols[6], nc = 0, want[24], n = 0;
      for (int i = 2 * pr; i < 2 * pr + 2; ++i) rows[nr++] = i;
      for (int j = 0; j < 6; ++j) {
        if ((j / 2) % 2 == pc) cols[nc++] = j;
      }
      if (!f) {
        for (int a = 0; a < nr; ++a) {
          for (int b = 0; b < nc; ++b) want[n++] = rows[a] * 6 + cols[b];
        }
      } else { /* column-major: element (i, j) at i + 4j, the first index fastest */
        for (int b = 0; b < nc; ++b) {
          for (int a = 0; a < nr; ++a) want[n++] = rows[a] + 4 * cols[b];
        }
      }
      int size = -1;
      MPI_Aint lb = -1, ext = -1;
      MPI_Type_size(t, &size);
      MPI_Type_get_extent(t, &lb, &ext);
      CHECK(size == n * 8 && lb == 0 && ext == 24 * 8, "darray %c rank %d: size %d lb %ld extent %ld", f ? 'F' : 'C', r, size,
            (long)lb, (long)ext);
      char name[32];
      snprintf(name, sizeof name, "darray %c rank %d", f ? 'F' : 'C', r);
      roundtrip(name, t, 1, want, n);
      MPI_Type_free(&t);
    }
  }
  /* 10 elements cyclic over 3 processes; the envelope as given */
  const int g1 = 10, d1 = MPI_DISTRIBUTE_CYCLIC, a1 = MPI_DISTRIBUTE_DFLT_DARG, p1 = 3;
  for (int r = 0; r < 3; ++r) {
    MPI_Datatype t;
    MPI_Type_create_darray(3, r, 1, &g1, &d1, &a1, &p1, MPI_ORDER_C, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    int want[10], n = 0;
    for (int i = r; i < 10; i += 3) want[n++] = i;
    roundtrip("darray cyclic 1-D", t, 1, want, n);
    int ni = -1, na = -1, nd = -1, comb = -1;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_DARRAY && ni == 4 * 1 + 4 && na == 0 && nd == 1, "darray envelope %d %d %d %d", comb, ni, na, nd);
    int ints[8];
    MPI_Aint aints[1];
    MPI_Datatype types[1];
    MPI_Type_get_contents(t, 8, 0, 1, ints, aints, types);
    CHECK(ints[0] == 3 && ints[1] == r && ints[2] == 1 && ints[3] == 10 && ints[4] == d1 && ints[5] == a1 && ints[6] == 3 &&
              ints[7] == MPI_ORDER_C && types[0] == MPI_DOUBLE,
          "darray contents");
    MPI_Aint xs = -1;
    MPI_Pack_external_size("external32", 2, t, &xs);
    CHECK(xs == 2 * 8 * n, "darray external32 size %ld", (long)xs);
    MPI_Type_free(&t);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Datatype bad = MPI_DATATYPE_NULL;
  int cls = -1;
  MPI_Error_class(MPI_Type_create_darray(5, 0, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_DOUBLE, &bad), &cls);
  CHECK(cls == MPI_ERR_ARG, "darray over a 2x2 grid with size 5: class %d", cls);
  const int small[2] = {1, 2}; /* blocks of 1 row cannot cover 4 rows on 2 processes */
  MPI_Error_class(MPI_Type_create_darray(4, 0, 2, gsizes, distribs, small, psizes, MPI_ORDER_C, MPI_DOUBLE, &bad), &cls);
  CHECK(cls == MPI_ERR_ARG, "darray with too small a block: class %d", cls);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  start(&argc, &argv);
  envelopes();
  MPI_Aint lb, ext;
  int size;

  MPI_Datatype vec;
  MPI_Type_vector(3, 2, 5, MPI_DOUBLE, &vec);
  MPI_Type_commit(&vec);
  MPI_Type_size(vec, &size);
  MPI_Type_get_extent(vec, &lb, &ext);
  CHECK(size == 48 && lb == 0 && ext == 12 * 8, "vector size %d extent %ld", size, (long)ext);
  {
    const int want[] = {0, 1, 5, 6, 10, 11, 12, 13, 17, 18, 22, 23};
    roundtrip("vector x2", vec, 2, want, 12);
  }

  MPI_Datatype hvec;
  MPI_Type_create_hvector(2, 3, 10 * sizeof(double), MPI_DOUBLE, &hvec);
  MPI_Type_commit(&hvec);
  {
    const int want[] = {0, 1, 2, 10, 11, 12};
    roundtrip("hvector", hvec, 1, want, 6);
  }

  MPI_Datatype idx;
  const int bl[] = {1, 3, 2}, disp[] = {4, 0, 9};
  MPI_Type_indexed(3, bl, disp, MPI_DOUBLE, &idx);
  MPI_Type_commit(&idx);
  MPI_Type_get_extent(idx, &lb, &ext);
  CHECK(lb == 0 && ext == 11 * 8, "indexed lb %ld extent %ld", (long)lb, (long)ext);
  {
    const int want[] = {4, 0, 1, 2, 9, 10};
    roundtrip("indexed", idx, 1, want, 6);
  }

  MPI_Datatype hidx;
  const MPI_Aint hdisp[] = {16 * 8, 2 * 8};
  const int hbl[] = {2, 1};
  MPI_Type_create_hindexed(2, hbl, hdisp, MPI_DOUBLE, &hidx);
  MPI_Type_commit(&hidx);
  {
    const int want[] = {16, 17, 2};
    roundtrip("hindexed", hidx, 1, want, 3);
  }

  MPI_Datatype blk;
  const int bdisp[] = {1, 7, 3};
  MPI_Type_create_indexed_block(3, 2, bdisp, MPI_DOUBLE, &blk);
  MPI_Type_commit(&blk);
  {
    const int want[] = {1, 2, 7, 8, 3, 4};
    roundtrip("indexed_block", blk, 1, want, 6);
  }

  MPI_Datatype sub;
  const int sizes[] = {6, 8}, subs[] = {2, 3}, starts[] = {1, 4};
  MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &sub);
  MPI_Type_commit(&sub);
  MPI_Type_get_extent(sub, &lb, &ext);
  CHECK(lb == 0 && ext == 48 * 8, "subarray extent %ld", (long)ext);
  {
    const int want[] = {12, 13, 14, 20, 21, 22};
    roundtrip("subarray C", sub, 1, want, 6);
  }
  MPI_Datatype subf;
  MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_DOUBLE, &subf);
  MPI_Type_commit(&subf);
  {
    /* Fortran order: first index fastest; array 6x8, rows 1..2, columns 4..6. */
    const int want[] = {25, 26, 31, 32, 37, 38};
    roundtrip("subarray Fortran", subf, 1, want, 6);
  }

  MPI_Datatype res;
  MPI_Type_create_resized(MPI_DOUBLE, 0, 3 * sizeof(double), &res);
  MPI_Type_commit(&res);
  MPI_Type_get_extent(res, &lb, &ext);
  CHECK(ext == 24, "resized extent %ld", (long)ext);
  {
    const int want[] = {0, 3, 6, 9};
    roundtrip("resized x4", res, 4, want, 4);
  }

  /* Struct {int; double; char[3]} with C padding, sent as a struct and checked field by field. */
  MPI_Datatype st = struct_s_type();
  MPI_Type_size(st, &size);
  MPI_Type_get_extent(st, &lb, &ext);
  CHECK(size == 4 + 8 + 3 && ext == (MPI_Aint)sizeof(struct S), "struct size %d extent %ld (sizeof %zu)", size,
        (long)ext, sizeof(struct S));
  {
    struct S out[3], in[3];
    memset(in, 0, sizeof in);
    for (int i = 0; i < 3; ++i) {
      out[i].a = g_rank * 10 + i;
      out[i].b = g_rank + i * 0.25;
      out[i].c[0] = 'x';
      out[i].c[1] = (char)('0' + i);
      out[i].c[2] = 'z';
    }
    const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
    MPI_Sendrecv(out, 3, st, right, 7, in, 3, st, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int ok = 1;
    for (int i = 0; i < 3; ++i) {
      ok &= in[i].a == left * 10 + i && in[i].b == left + i * 0.25 && in[i].c[1] == '0' + i && in[i].c[2] == 'z';
    }
    CHECK(ok, "struct array");
    /* Pack / Unpack round trip of the struct array plus an int. */
    int psize = 0, pos = 0, pos2 = 0;
    MPI_Pack_size(3, st, MPI_COMM_WORLD, &psize);
    CHECK(psize == 3 * 15, "pack_size %d", psize);
    char packed[256];
    const int tail = 4242;
    MPI_Pack(out, 3, st, packed, sizeof packed, &pos, MPI_COMM_WORLD);
    MPI_Pack(&tail, 1, MPI_INT, packed, sizeof packed, &pos, MPI_COMM_WORLD);
    CHECK(pos == 3 * 15 + 4, "pack position %d", pos);
    struct S un[3];
    int t2 = 0;
    memset(un, 0, sizeof un);
    MPI_Unpack(packed, pos, &pos2, un, 3, st, MPI_COMM_WORLD);
    MPI_Unpack(packed, pos, &pos2, &t2, 1, MPI_INT, MPI_COMM_WORLD);
    CHECK(pos2 == pos && t2 == tail && un[2].a == out[2].a && un[1].b == out[1].b && un[0].c[0] == 'x', "unpack");
    /* Packed data sent as MPI_PACKED and unpacked by the receiver. */
    char rpacked[256];
    MPI_Sendrecv(packed, pos, MPI_PACKED, right, 8, rpacked, sizeof rpacked, MPI_PACKED, left, 8, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    pos2 = 0;
    MPI_Unpack(rpacked, pos, &pos2, un, 3, st, MPI_COMM_WORLD);
    CHECK(un[2].a == left * 10 + 2, "MPI_PACKED transfer");
  }

  /* Nested: a vector of the struct's resized version, dup'ed. */
  MPI_Datatype dup;
  MPI_Type_dup(vec, &dup);
  MPI_Type_commit(&dup);
  {
    const int want[] = {0, 1, 5, 6, 10, 11};
    roundtrip("dup of vector", dup, 1, want, 6);
  }
  MPI_Aint tlb, text;
  MPI_Type_get_true_extent(idx, &tlb, &text);
  CHECK(tlb == 0 && text == 11 * 8, "true extent");

  MPI_Type_free(&vec);
  MPI_Type_free(&hvec);
  MPI_Type_free(&idx);
  MPI_Type_free(&hidx);
  MPI_Type_free(&blk);
  MPI_Type_free(&sub);
  MPI_Type_free(&subf);
  MPI_Type_free(&res);
  MPI_Type_free(&st);
  MPI_Type_free(&dup);
  /* Handles of freed types are given out again: a program that builds a type per step must not
   * grow the library's tables (handles are ints, as in MPICH, so the values are comparable). */
  {
    MPI_Datatype first = MPI_DATATYPE_NULL, highest = MPI_DATATYPE_NULL;
    for (int i = 0; i < 1000; ++i) {
      MPI_Datatype v;
      MPI_Type_vector(3, 1, 2 + i % 5, MPI_INT, &v);
      MPI_Type_commit(&v);
      if (i == 0) first = v;
      if (v > highest) highest = v;
      MPI_Type_free(&v);
      CHECK(v == MPI_DATATYPE_NULL, "Type_free sets the handle to MPI_DATATYPE_NULL");
    }
    CHECK(highest == first, "1000 types made and freed in turn took handles %d to %d", (int)first, (int)highest);
  }
  pack_unpack_exact();
  external32();
  darrays();
  return finish("datatypes");
}
