// Collectives on point-to-point (each communicator's collective context), blocking and
// nonblocking alike (one coroutine per algorithm, coll_task.h), and reduction operations.
// Algorithms: dissemination barrier; binomial-tree broadcast and reduce; allreduce by recursive
// doubling (non-powers of two folded in first), ring reduce-scatter + ring allgather for large
// commutative reductions; ring allgather(v); pairwise alltoall(v,w); recursive-doubling
// scan/exscan; linear gather(v)/scatter(v) with every transfer posted at once. Buffers are
// typed: messages are packed/unpacked by the datatype like any point-to-point message.
#include <algorithm>
#include <complex>
#include <cstring>
#include <limits>
#include <string>

#include "coll_task.h"
#include "shim.h"

namespace augur::mpi {

// --- reduction operations --------------------------------------------------------------------

namespace {

template <typename T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
void store(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

enum class Kind : std::uint8_t { kInt, kFloat, kComplex, kBool, kByte };

Kind kind_of(Elem e) {
  switch (e) {
    case Elem::kF32: case Elem::kF64: case Elem::kLD: return Kind::kFloat;
    case Elem::kC32: case Elem::kC64: case Elem::kCLD: return Kind::kComplex;
    case Elem::kBool: return Kind::kBool;
    case Elem::kByte: return Kind::kByte;
    default: return Kind::kInt;
  }
}

template <typename T>
void arith(MPI_Op op, const std::byte* in, std::byte* io, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i, in += sizeof(T), io += sizeof(T)) {
    const T a = load<T>(in);
    const T b = load<T>(io);
    T r = b;
    if constexpr (std::is_floating_point_v<T> || std::is_integral_v<T>) {
      switch (op) {
        case MPI_MAX: r = a > b ? a : b; break;
        case MPI_MIN: r = a < b ? a : b; break;
        case MPI_SUM: r = static_cast<T>(a + b); break;
        case MPI_PROD: r = static_cast<T>(a * b); break;
        case MPI_LAND: r = static_cast<T>((a != T{}) && (b != T{})); break;
        case MPI_LOR: r = static_cast<T>((a != T{}) || (b != T{})); break;
        case MPI_LXOR: r = static_cast<T>((a != T{}) != (b != T{})); break;
        default: break;
      }
      if constexpr (std::is_integral_v<T>) {
        switch (op) {
          case MPI_BAND: r = static_cast<T>(a & b); break;
          case MPI_BOR: r = static_cast<T>(a | b); break;
          case MPI_BXOR: r = static_cast<T>(a ^ b); break;
          default: break;
        }
      }
    } else {  // complex
      if (op == MPI_SUM) r = a + b;
      if (op == MPI_PROD) r = a * b;
    }
    if (op == MPI_REPLACE) r = a;
    store<T>(io, r);
  }
}

void arith_elem(MPI_Op op, Elem e, const std::byte* in, std::byte* io, std::size_t n) {
  switch (e) {
    case Elem::kChar: case Elem::kI8: arith<std::int8_t>(op, in, io, n); break;
    case Elem::kU8: case Elem::kBool: case Elem::kByte: arith<std::uint8_t>(op, in, io, n); break;
    case Elem::kI16: arith<std::int16_t>(op, in, io, n); break;
    case Elem::kU16: arith<std::uint16_t>(op, in, io, n); break;
    case Elem::kI32: case Elem::kWchar: arith<std::int32_t>(op, in, io, n); break;
    case Elem::kU32: arith<std::uint32_t>(op, in, io, n); break;
    case Elem::kI64: arith<std::int64_t>(op, in, io, n); break;
    case Elem::kU64: arith<std::uint64_t>(op, in, io, n); break;
    case Elem::kF32: arith<float>(op, in, io, n); break;
    case Elem::kF64: arith<double>(op, in, io, n); break;
    case Elem::kLD: arith<long double>(op, in, io, n); break;
    case Elem::kC32: arith<std::complex<float>>(op, in, io, n); break;
    case Elem::kC64: arith<std::complex<double>>(op, in, io, n); break;
    case Elem::kCLD: arith<std::complex<long double>>(op, in, io, n); break;
    default: break;
  }
}

// MINLOC/MAXLOC on (value, index) pairs: the better value, ties to the smaller index.
template <typename V, typename I>
void loc(MPI_Op op, const std::byte* in, std::byte* io, std::int64_t count, std::int64_t extent, std::int64_t ioff) {
  for (std::int64_t k = 0; k < count; ++k, in += extent, io += extent) {
    const V a = load<V>(in), b = load<V>(io);
    const I ai = load<I>(in + ioff), bi = load<I>(io + ioff);
    const bool take = op == MPI_MINLOC ? (a < b || (a == b && ai < bi)) : (a > b || (a == b && ai < bi));
    if (take) {
      store<V>(io, a);
      store<I>(io + ioff, ai);
    }
  }
}

bool predefined_op(MPI_Op op) { return op >= MPI_MAX && op <= MPI_NO_OP; }

const UserOp* user_op(MPI_Op op) {
  const auto& v = S().ops;
  if (op < kFirstUserOp || static_cast<std::size_t>(op - kFirstUserOp) >= v.size()) return nullptr;
  const UserOp& u = v[static_cast<std::size_t>(op - kFirstUserOp)];
  return u.fn != nullptr ? &u : nullptr;
}

}  // namespace

bool op_commutes(MPI_Op op) {
  if (const UserOp* u = user_op(op)) return u->commute;
  return true;
}

Err check_op(MPI_Op op, const Type& t) {
  if (user_op(op) != nullptr) return ok();
  if (!predefined_op(op)) return err(MPI_ERR_OP, "invalid operation handle " + std::to_string(op));
  if (op == MPI_REPLACE || op == MPI_NO_OP) return ok();
  const bool loc_op = op == MPI_MINLOC || op == MPI_MAXLOC;
  if (is_pair(t.elem)) {
    if (!loc_op) return err(MPI_ERR_OP, "pair datatypes take only MPI_MINLOC and MPI_MAXLOC");
    if (!t.predefined) return err(MPI_ERR_OP, "MPI_MINLOC/MPI_MAXLOC on derived datatypes is not supported");
    return ok();
  }
  if (loc_op) return err(MPI_ERR_OP, "MPI_MINLOC/MPI_MAXLOC need a pair datatype (e.g. MPI_DOUBLE_INT)");
  if (t.elem == Elem::kMixed) return err(MPI_ERR_OP, "predefined operations need one kind of basic element");
  const Kind k = kind_of(t.elem);
  const bool bitwise = op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR;
  const bool logical = op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR;
  const bool minmax = op == MPI_MAX || op == MPI_MIN;
  if (bitwise && (k == Kind::kFloat || k == Kind::kComplex)) return err(MPI_ERR_OP, "bitwise operation on a floating type");
  if ((logical || minmax) && k == Kind::kComplex) return err(MPI_ERR_OP, "operation not defined on complex types");
  if (k == Kind::kByte && !bitwise) return err(MPI_ERR_OP, "MPI_BYTE takes only bitwise operations");
  if (k == Kind::kBool && !logical) return err(MPI_ERR_OP, "boolean types take only logical operations");
  return ok();
}

void apply_op(MPI_Op op, const void* in, void* inout, std::int64_t count, MPI_Datatype th, const Type& t) {
  if (count <= 0 || op == MPI_NO_OP) return;
  if (const UserOp* u = user_op(op)) {
    int len = static_cast<int>(count);
    MPI_Datatype d = th;
    u->fn(const_cast<void*>(in), inout, &len, &d);
    return;
  }
  const auto* a = static_cast<const std::byte*>(in);
  auto* b = static_cast<std::byte*>(inout);
  if (is_pair(t.elem)) {
    const std::int64_t x = t.extent;
    switch (t.elem) {
      case Elem::kFloatInt: loc<float, int>(op, a, b, count, x, 4); break;
      case Elem::kDoubleInt: loc<double, int>(op, a, b, count, x, 8); break;
      case Elem::kLongInt: loc<long, int>(op, a, b, count, x, 8); break;
      case Elem::k2Int: loc<int, int>(op, a, b, count, x, 4); break;
      case Elem::kShortInt: loc<short, int>(op, a, b, count, x, 4); break;
      case Elem::kLDInt: loc<long double, int>(op, a, b, count, x, 16); break;
      case Elem::k2Float: loc<float, float>(op, a, b, count, x, 4); break;
      case Elem::k2Double: loc<double, double>(op, a, b, count, x, 8); break;
      default: break;
    }
    return;
  }
  const std::int64_t es = elem_size(t.elem);
  if (t.contig) {
    arith_elem(op, t.elem, a + t.runs[0].offset, b + t.runs[0].offset, static_cast<std::size_t>(count * t.size / es));
    return;
  }
  for (std::int64_t k = 0; k < count; ++k) {
    for (const auto& run : t.runs) {
      const std::int64_t off = k * t.extent + run.offset;
      arith_elem(op, t.elem, a + off, b + off, static_cast<std::size_t>(run.length / es));
    }
  }
}

// --- algorithms ------------------------------------------------------------------------------
// Each is a coroutine (coll_task.h), run to the end by a blocking call or kept by a
// nonblocking call's request. Parameters are taken by value: the frame outlives the caller.

namespace {

enum Tag : int { kBarrier = 1, kBcast, kReduce, kAllreduce, kGather, kScatter, kAllgather, kAlltoall, kScan, kRing };

// Scratch copy of `count` copies of `t` from `src`.
Err copy_typed(const void* src, void* dst, std::int64_t count, const Type& t) { return local_copy(src, count, t, dst, count, t); }

// acc = acc (op) other, keeping rank order: apply_op computes inout = in (op) inout.
void combine_after(MPI_Op op, TypedBuf& acc, TypedBuf& other, std::int64_t count, MPI_Datatype th, const Type& t) {
  apply_op(op, acc.ptr(), other.ptr(), count, th, t);
  std::swap(acc, other);
}

CollTask reduce_task(Coll x, const void* sbuf, void* rbuf, std::int64_t count, MPI_Datatype th, MPI_Op op, int root) {
  const Comm& c = *x.c;
  const TypePtr t = type_ptr(th);
  const int n = c.size;
  const int tree_root = op_commutes(op) ? root : 0;  // non-commutative: reduce in rank order to 0
  const int vr = (c.rank - tree_root + n) % n;
  TypedBuf acc(*t, count), tmp(*t, count);
  AUGUR_CO_TRY(copy_typed(sbuf, acc.ptr(), count, *t));
  for (int mask = 1; mask < n; mask <<= 1) {
    if ((vr & mask) == 0) {
      const int src = vr | mask;
      if (src < n) {
        Xfer xf(x);
        xf.recv(tmp.ptr(), count, t, (src + tree_root) % n, kReduce);
        AUGUR_CO_TRY(co_await xf);
        combine_after(op, acc, tmp, count, th, *t);  // acc holds lower ranks than src's subtree
      }
    } else {
      Xfer xf(x);
      xf.send(acc.ptr(), count, t, ((vr & ~mask) + tree_root) % n, kReduce);
      AUGUR_CO_TRY(co_await xf);
      break;
    }
  }
  if (tree_root != root) {
    Xfer xf(x);
    if (c.rank == tree_root) xf.send(acc.ptr(), count, t, root, kReduce);
    if (c.rank == root) xf.recv(rbuf, count, t, tree_root, kReduce);
    co_return co_await xf;
  }
  if (c.rank == root) co_return copy_typed(acc.ptr(), rbuf, count, *t);
  co_return ok();
}

CollTask bcast_task(Coll x, void* buf, std::int64_t count, TypePtr t, int root) {
  const Comm& c = *x.c;
  const int n = c.size;
  const int vr = (c.rank - root + n) % n;
  int mask = 1;
  Err first;
  for (; mask < n; mask <<= 1) {
    if (vr & mask) {
      Xfer xf(x);
      xf.recv(buf, count, t, (vr - mask + root) % n, kBcast);
      first = co_await xf;
      // Mismatched counts: report it, but still feed the subtree so that nobody hangs.
      if (!first.ok() && first.cls != MPI_ERR_TRUNCATE) co_return first;
      break;
    }
  }
  Xfer xf(x);
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (vr + mask < n) xf.send(buf, count, t, (vr + mask + root) % n, kBcast);
  }
  AUGUR_CO_TRY(co_await xf);
  co_return first;
}

// Elements [first(i), first(i+1)) form block i of a count split n ways.
std::int64_t block_first(std::int64_t count, int n, int i) {
  const std::int64_t q = count / n, r = count % n;
  return i * q + std::min<std::int64_t>(i, r);
}

// Ring allreduce: reduce-scatter then allgather, each n-1 steps of one block (commutative ops).
CollTask allreduce_ring(Coll x, void* rbuf, std::int64_t count, MPI_Datatype th, MPI_Op op) {
  const TypePtr t = type_ptr(th);
  const int n = x.c->size, me = x.c->rank;
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  auto* base = static_cast<std::byte*>(rbuf);
  TypedBuf tmp(*t, block_first(count, n, 1) + 1);
  for (int s = 0; s < n - 1; ++s) {
    const int sb = (me - s + n) % n, rb = (me - s - 1 + 2 * n) % n;
    const std::int64_t s0 = block_first(count, n, sb), s1 = block_first(count, n, sb + 1);
    const std::int64_t r0 = block_first(count, n, rb), r1 = block_first(count, n, rb + 1);
    Xfer xf(x);
    xf.recv(tmp.ptr(), r1 - r0, t, left, kRing).send(base + s0 * t->extent, s1 - s0, t, right, kRing);
    AUGUR_CO_TRY(co_await xf);
    apply_op(op, tmp.ptr(), base + r0 * t->extent, r1 - r0, th, *t);
  }
  for (int s = 0; s < n - 1; ++s) {
    const int sb = (me + 1 - s + n) % n, rb = (me - s + n) % n;
    const std::int64_t s0 = block_first(count, n, sb), s1 = block_first(count, n, sb + 1);
    const std::int64_t r0 = block_first(count, n, rb), r1 = block_first(count, n, rb + 1);
    Xfer xf(x);
    xf.recv(base + r0 * t->extent, r1 - r0, t, left, kRing).send(base + s0 * t->extent, s1 - s0, t, right, kRing);
    AUGUR_CO_TRY(co_await xf);
  }
  co_return ok();
}

constexpr std::int64_t kRingBytes = 64 * 1024;

CollTask allreduce_task(Coll x, const void* sbuf, void* rbuf, std::int64_t count, MPI_Datatype th, MPI_Op op) {
  const TypePtr t = type_ptr(th);
  const int n = x.c->size, me = x.c->rank;
  if (sbuf != rbuf) AUGUR_CO_TRY(copy_typed(sbuf, rbuf, count, *t));
  if (n == 1 || count == 0) co_return ok();
  if (op_commutes(op) && count >= n && count * t->size >= kRingBytes) {
    CollTask ring = allreduce_ring(x, rbuf, count, th, op);
    co_return co_await ring;
  }
  // Recursive doubling; with n not a power of two, the first 2*rem ranks pair up first.
  int p2 = 1;
  while (p2 * 2 <= n) p2 *= 2;
  const int rem = n - p2;
  TypedBuf acc(*t, count), tmp(*t, count);
  AUGUR_CO_TRY(copy_typed(rbuf, acc.ptr(), count, *t));
  int newrank = -1;
  if (me < 2 * rem) {
    Xfer xf(x);
    if (me % 2 == 0) {
      xf.send(acc.ptr(), count, t, me + 1, kAllreduce);
      AUGUR_CO_TRY(co_await xf);
    } else {
      xf.recv(tmp.ptr(), count, t, me - 1, kAllreduce);
      AUGUR_CO_TRY(co_await xf);
      apply_op(op, tmp.ptr(), acc.ptr(), count, th, *t);  // lower rank first
      newrank = me / 2;
    }
  } else {
    newrank = me - rem;
  }
  if (newrank >= 0) {
    for (int mask = 1; mask < p2; mask <<= 1) {
      const int np = newrank ^ mask;
      const int partner = np < rem ? np * 2 + 1 : np + rem;
      Xfer xf(x);
      xf.recv(tmp.ptr(), count, t, partner, kAllreduce).send(acc.ptr(), count, t, partner, kAllreduce);
      AUGUR_CO_TRY(co_await xf);
      if (partner < me) {
        apply_op(op, tmp.ptr(), acc.ptr(), count, th, *t);
      } else {
        combine_after(op, acc, tmp, count, th, *t);
      }
    }
  }
  if (me < 2 * rem) {
    Xfer xf(x);
    if (me % 2 == 1) {
      xf.send(acc.ptr(), count, t, me - 1, kAllreduce);
    } else {
      xf.recv(acc.ptr(), count, t, me + 1, kAllreduce);
    }
    AUGUR_CO_TRY(co_await xf);
  }
  co_return copy_typed(acc.ptr(), rbuf, count, *t);
}

CollTask barrier_task(Coll x) {
  const int n = x.c->size, me = x.c->rank;
  const TypePtr b = type_ptr(MPI_BYTE);
  for (int k = 1; k < n; k <<= 1) {  // dissemination
    Xfer xf(x);
    xf.recv(nullptr, 0, b, (me - k + n) % n, kBarrier).send(nullptr, 0, b, (me + k) % n, kBarrier);
    AUGUR_CO_TRY(co_await xf);
  }
  co_return ok();
}

// Ring allgather(v): block i of counts[i] copies of rt at displs[i] extents.
CollTask allgatherv_task(Coll x, const void* sbuf, std::int64_t scount, TypePtr st, void* rbuf, std::vector<int> counts,
                         std::vector<int> displs, TypePtr rt) {
  const int n = x.c->size, me = x.c->rank;
  auto* base = static_cast<std::byte*>(rbuf);
  auto at = [&](int i) { return base + static_cast<std::int64_t>(displs[static_cast<std::size_t>(i)]) * rt->extent; };
  auto cnt = [&](int i) { return counts[static_cast<std::size_t>(i)]; };
  if (sbuf != MPI_IN_PLACE) AUGUR_CO_TRY(local_copy(sbuf, scount, *st, at(me), cnt(me), *rt));
  for (int s = 0; s < n - 1; ++s) {
    const int sb = (me - s + n) % n, rb = (me - s - 1 + 2 * n) % n;
    Xfer xf(x);
    xf.recv(at(rb), cnt(rb), rt, (me + n - 1) % n, kAllgather).send(at(sb), cnt(sb), rt, (me + 1) % n, kAllgather);
    AUGUR_CO_TRY(co_await xf);
  }
  co_return ok();
}

// Linear gather(v): the root posts every receive at once.
CollTask gatherv_task(Coll x, const void* sbuf, std::int64_t scount, TypePtr st, void* rbuf, std::vector<int> counts,
                      std::vector<int> displs, TypePtr rt, int root) {
  const Comm& c = *x.c;
  if (c.rank != root) {
    Xfer xf(x);
    xf.send(sbuf, scount, st, root, kGather);
    co_return co_await xf;
  }
  auto* base = static_cast<std::byte*>(rbuf);
  auto at = [&](int i) { return base + static_cast<std::int64_t>(displs[static_cast<std::size_t>(i)]) * rt->extent; };
  Xfer xf(x);
  for (int i = 0; i < c.size; ++i) {
    if (i != root) xf.recv(at(i), counts[static_cast<std::size_t>(i)], rt, i, kGather);
  }
  Err local;
  if (sbuf != MPI_IN_PLACE) local = local_copy(sbuf, scount, *st, at(root), counts[static_cast<std::size_t>(root)], *rt);
  Err e = co_await xf;
  co_return local.ok() ? e : local;
}

// Linear scatter(v): the root posts every send at once.
CollTask scatterv_task(Coll x, const void* sbuf, std::vector<int> counts, std::vector<int> displs, TypePtr st, void* rbuf,
                       std::int64_t rcount, TypePtr rt, int root) {
  const Comm& c = *x.c;
  if (c.rank != root) {
    Xfer xf(x);
    xf.recv(rbuf, rcount, rt, root, kScatter);
    co_return co_await xf;
  }
  const auto* base = static_cast<const std::byte*>(sbuf);
  auto at = [&](int i) { return base + static_cast<std::int64_t>(displs[static_cast<std::size_t>(i)]) * st->extent; };
  Xfer xf(x);
  for (int i = 0; i < c.size; ++i) {
    if (i != root) xf.send(at(i), counts[static_cast<std::size_t>(i)], st, i, kScatter);
  }
  Err local;
  if (rbuf != MPI_IN_PLACE) local = local_copy(at(root), counts[static_cast<std::size_t>(root)], *st, rbuf, rcount, *rt);
  Err e = co_await xf;
  co_return local.ok() ? e : local;
}

// Pairwise exchange: step i sends to me+i and receives from me-i, so no rank is flooded.
// `keep` holds the snapshot the sends read from under MPI_IN_PLACE.
CollTask alltoallw_task(Coll x, std::vector<Block> sends, std::vector<Block> recvs, std::vector<std::byte> keep) {
  (void)keep;
  const int n = x.c->size, me = x.c->rank;
  const auto m = static_cast<std::size_t>(me);
  AUGUR_CO_TRY(local_copy(sends[m].p, sends[m].count, *sends[m].t, recvs[m].p, recvs[m].count, *recvs[m].t));
  for (int i = 1; i < n; ++i) {
    const auto to = static_cast<std::size_t>((me + i) % n), from = static_cast<std::size_t>((me - i + n) % n);
    Xfer xf(x);
    xf.recv(recvs[from].p, recvs[from].count, recvs[from].t, static_cast<int>(from), kAlltoall)
        .send(sends[to].p, sends[to].count, sends[to].t, static_cast<int>(to), kAlltoall);
    AUGUR_CO_TRY(co_await xf);
  }
  co_return ok();
}

// Neighbourhood exchange: every receive posted, then every send, one wait (MPI_PROC_NULL
// neighbours complete at once). Tags tell apart a cartesian pair that are neighbours twice.
constexpr int kNeighbor = 16, kNeighborTags = kTagsPerCall - kNeighbor;
CollTask neighbor_task(Coll x, std::vector<Block> sends, std::vector<Block> recvs, Neighbors nb) {
  Xfer xf(x);
  for (std::size_t i = 0; i < recvs.size(); ++i) {
    xf.recv(recvs[i].p, recvs[i].count, recvs[i].t, nb.in[i], kNeighbor + nb.in_tag[i] % kNeighborTags);
  }
  for (std::size_t j = 0; j < sends.size(); ++j) {
    xf.send(sends[j].p, sends[j].count, sends[j].t, nb.out[j], kNeighbor + nb.out_tag[j] % kNeighborTags);
  }
  co_return co_await xf;
}

// Reduce everything to rank 0, then scatter the blocks.
CollTask reduce_scatter_task(Coll x, const void* sbuf, void* rbuf, std::vector<int> counts, MPI_Datatype th, MPI_Op op) {
  const TypePtr t = type_ptr(th);
  std::int64_t total = 0;
  std::vector<int> displs(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) {
    displs[i] = static_cast<int>(total);
    total += counts[i];
  }
  TypedBuf all(*t, total);
  const void* src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
  CollTask reduce = reduce_task(x, src, all.ptr(), total, th, op, 0);
  AUGUR_CO_TRY(co_await reduce);
  const std::int64_t mine = counts[static_cast<std::size_t>(x.c->rank)];
  CollTask scatter = scatterv_task(x, all.ptr(), std::move(counts), std::move(displs), t, rbuf, mine, t, 0);
  co_return co_await scatter;
}

// Recursive-doubling scan (exclusive: rank 0's result is left alone).
CollTask scan_task(Coll x, const void* sbuf, void* rbuf, std::int64_t count, MPI_Datatype th, MPI_Op op, bool exclusive) {
  const TypePtr t = type_ptr(th);
  const int n = x.c->size, me = x.c->rank;
  TypedBuf partial(*t, count), tmp(*t, count), result(*t, count);
  AUGUR_CO_TRY(copy_typed(sbuf == MPI_IN_PLACE ? rbuf : sbuf, partial.ptr(), count, *t));
  bool have = !exclusive;
  if (have) AUGUR_CO_TRY(copy_typed(partial.ptr(), result.ptr(), count, *t));
  for (int mask = 1; mask < n; mask <<= 1) {
    const int dst = me ^ mask;
    if (dst >= n) continue;
    Xfer xf(x);
    xf.recv(tmp.ptr(), count, t, dst, kScan).send(partial.ptr(), count, t, dst, kScan);
    AUGUR_CO_TRY(co_await xf);
    if (dst < me) {  // tmp holds lower ranks
      if (have) {
        apply_op(op, tmp.ptr(), result.ptr(), count, th, *t);
      } else {
        AUGUR_CO_TRY(copy_typed(tmp.ptr(), result.ptr(), count, *t));
        have = true;
      }
      apply_op(op, tmp.ptr(), partial.ptr(), count, th, *t);
    } else {
      combine_after(op, partial, tmp, count, th, *t);
    }
  }
  if (have && !(exclusive && me == 0)) co_return copy_typed(result.ptr(), rbuf, count, *t);
  co_return ok();
}

// Equal counts and their displacements, for the v-algorithms (which take ints): refused with
// MPI_ERR_COUNT when the last displacement does not fit an int, rather than wrapped.
Err uniform(int n, int count, std::vector<int>* counts, std::vector<int>* displs) {
  if (n > 1 && count > std::numeric_limits<int>::max() / (n - 1)) {
    return err(MPI_ERR_COUNT, "count " + std::to_string(count) + " for each of " + std::to_string(n) +
                                  " ranks: the buffer's displacements pass 2^31 - 1 elements, more than augur's "
                                  "collectives address");
  }
  displs->resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) (*displs)[static_cast<std::size_t>(i)] = i * count;
  counts->assign(static_cast<std::size_t>(n), count);
  return ok();
}

}  // namespace

CollTask barrier_algo(Coll x) { return barrier_task(std::move(x)); }
CollTask allreduce_algo(Coll x, const void* sbuf, void* rbuf, std::int64_t count, MPI_Datatype th, MPI_Op op) {
  return allreduce_task(std::move(x), sbuf, rbuf, count, th, op);
}
CollTask bcast_algo(Coll x, void* buf, std::int64_t count, TypePtr t, int root) {
  return bcast_task(std::move(x), buf, count, std::move(t), root);
}
CollTask reduce_algo(Coll x, const void* sbuf, void* rbuf, std::int64_t count, MPI_Datatype th, MPI_Op op, int root) {
  return reduce_task(std::move(x), sbuf, rbuf, count, th, op, root);
}
CollTask scatterv_algo(Coll x, const void* sbuf, std::vector<int> counts, std::vector<int> displs, TypePtr st, void* rbuf,
                       std::int64_t rcount, TypePtr rt, int root) {
  return scatterv_task(std::move(x), sbuf, std::move(counts), std::move(displs), std::move(st), rbuf, rcount, std::move(rt),
                       root);
}

Err barrier_impl(const CommPtr& c) { return run_blocking(barrier_task(Coll{c})); }

Err allreduce_impl(const void* sbuf, void* rbuf, std::int64_t count, MPI_Datatype th, MPI_Op op, const CommPtr& c) {
  return run_blocking(allreduce_task(Coll{c}, sbuf, rbuf, count, th, op));
}

Err allgather_impl(const void* sbuf, std::int64_t scount, const TypePtr& st, void* rbuf, std::int64_t rcount,
                   const TypePtr& rt, const CommPtr& c) {
  std::vector<int> counts, displs;
  AUGUR_ERR_RETURN(uniform(c->size, static_cast<int>(rcount), &counts, &displs));
  return run_blocking(allgatherv_task(Coll{c}, sbuf, scount, st, rbuf, std::move(counts), std::move(displs), rt));
}

}  // namespace augur::mpi

using namespace augur::mpi;

// --- entry points ----------------------------------------------------------------------------
// Each collective's checks and set-up are written once (xxx_common) for the blocking call
// (request null: run to the end) and the nonblocking one (the request keeps the algorithm).

namespace {

Err check_coll(MPI_Comm comm) {
  AUGUR_ERR_RETURN(check_running());
  return check_comm(comm);
}

Err check_data(const void* buf, int count, MPI_Datatype dt) {
  AUGUR_ERR_RETURN(check_count(count));
  AUGUR_ERR_RETURN(check_type(dt));
  AUGUR_ERR_RETURN(check_bytes(count, *type_of(dt)));
  if (buf == MPI_IN_PLACE) return ok();
  return check_buf(buf, count, *type_of(dt));
}

// On an intercommunicator: MPI_ROOT at the root, MPI_PROC_NULL at the rest of its group, the
// root's remote rank in the other group.
Err check_root(int root, const Comm& c) {
  if (c.inter() && (root == MPI_ROOT || root == MPI_PROC_NULL)) return ok();
  if (root < 0 || root >= c.peer_size()) {
    return err(MPI_ERR_ROOT, "invalid root " + std::to_string(root) + " (" + (c.inter() ? "remote group" : "communicator") +
                                 " size " + std::to_string(c.peer_size()) + ")");
  }
  return ok();
}

// Is this rank the root of a rooted collective; does it send (reduce, gather) or receive
// (broadcast, scatter) the rooted data (on an intercommunicator only the other group does)?
bool is_root(const Comm& c, int root) { return c.inter() ? root == MPI_ROOT : c.rank == root; }
bool in_leaf_group(const Comm& c, int root) { return !c.inter() || root >= 0; }

// MPI_IN_PLACE has no meaning on an intercommunicator (MPI-3.1 5.2.2).
Err check_not_in_place(const Comm& c, const void* buf) {
  if (c.inter() && buf == MPI_IN_PLACE) return err(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed on an intercommunicator");
  return ok();
}

Err check_intra(const Comm& c, const char* what) {
  if (c.inter()) return err(MPI_ERR_COMM, std::string(what) + " is not defined on an intercommunicator");
  return ok();
}

// A gather's send block or a scatter's receive block: does this rank's own block move (not at an
// intracommunicator root's MPI_IN_PLACE, not in an intercommunicator root's group)? Checked if so.
Err leaf_block(const Comm& c, int root, const void* buf, int count, MPI_Datatype type, bool* moves) {
  const bool in_place = !c.inter() && is_root(c, root) && buf == MPI_IN_PLACE;
  *moves = in_leaf_group(c, root) && !in_place;
  if (!*moves) return ok();
  AUGUR_ERR_RETURN(check_not_in_place(c, buf));
  return check_data(buf, count, type);
}

Err inter_allgatherv_launch(const CommPtr& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            const int* counts, const int* displs, MPI_Datatype recvtype, MPI_Request* request);

// After check_type(dt).
Err check_counts_displs(const int* counts, const int* displs, int n, MPI_Datatype dt) {
  if (counts == nullptr || displs == nullptr) return err(MPI_ERR_ARG, "null counts or displacements");
  for (int i = 0; i < n; ++i) {
    if (counts[i] < 0) return err(MPI_ERR_COUNT, "negative count " + std::to_string(counts[i]) + " for rank " + std::to_string(i));
    AUGUR_ERR_RETURN(check_bytes(counts[i], *type_of(dt)));
  }
  return ok();
}

// AUGUR_CHECK_COLLECTIVES=1: before a collective, the ranks compare what they were called with
// by one allreduce (min and -max of each field), so a mismatch is an error on every rank instead
// of a hang or wrong data. -1: not compared (v-variants have per-rank counts).
enum class CollKind : std::int64_t {
  kBarrier = 1, kBcast, kReduce, kAllreduce, kGather, kGatherv, kScatter, kScatterv, kAllgather,
  kAllgatherv, kAlltoall, kAlltoallv, kReduceScatter, kScan, kExscan, kAlltoallw,
  kNeighborAllgather, kNeighborAllgatherv, kNeighborAlltoall, kNeighborAlltoallv, kNeighborAlltoallw,
};
constexpr const char* kCollNames[] = {"",           "MPI_Barrier",   "MPI_Bcast",   "MPI_Reduce",
                                      "MPI_Allreduce", "MPI_Gather",  "MPI_Gatherv", "MPI_Scatter",
                                      "MPI_Scatterv", "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall",
                                      "MPI_Alltoallv", "MPI_Reduce_scatter", "MPI_Scan", "MPI_Exscan",
                                      "MPI_Alltoallw", "MPI_Neighbor_allgather", "MPI_Neighbor_allgatherv",
                                      "MPI_Neighbor_alltoall", "MPI_Neighbor_alltoallv", "MPI_Neighbor_alltoallw"};
struct CollSig {
  CollKind kind;
  std::int64_t root = -1;
  std::int64_t op = -1;     // predefined ops by value; every user op counts as one kind of op
  std::int64_t bytes = -1;  // bytes each rank contributes (type size x count)
};

std::int64_t op_sig(MPI_Op op) { return predefined_op(op) ? op : 1000; }
std::int64_t bytes_sig(int count, MPI_Datatype t) { return static_cast<std::int64_t>(count) * type_of(t)->size; }

CollTask check_signature(Coll x, CollSig sig) {
  std::int64_t mine[8] = {static_cast<std::int64_t>(sig.kind), sig.root, sig.op, sig.bytes, 0, 0, 0, 0};
  for (int i = 0; i < 4; ++i) mine[4 + i] = -mine[i];
  std::int64_t all[8];
  CollTask reduce = allreduce_task(x, mine, all, 8, MPI_INT64_T, MPI_MIN);
  AUGUR_CO_TRY(co_await reduce);
  auto differs = [&](int i) { return all[i] != -all[4 + i]; };
  auto range = [&](int i) { return std::to_string(all[i]) + " to " + std::to_string(-all[4 + i]); };
  if (differs(0)) {
    auto name = [](std::int64_t k) { return k >= 1 && k <= 21 ? kCollNames[k] : "?"; };
    co_return err(MPI_ERR_OTHER, std::string("ranks of the communicator called different collectives (") + name(all[0]) +
                                     " ... " + name(-all[4]) + ")");
  }
  if (differs(1)) co_return err(MPI_ERR_ROOT, "ranks passed different roots (" + range(1) + ")");
  if (differs(2)) co_return err(MPI_ERR_OP, "ranks passed different reduction operations");
  if (differs(3)) {
    co_return err(MPI_ERR_COUNT, "ranks pass different amounts of data (" + range(3) + " bytes): type signatures differ");
  }
  co_return ok();
}

CollTask checked(Coll x, CollSig sig, CollTask body) {
  CollTask check = check_signature(x, sig);
  AUGUR_CO_TRY(co_await check);
  co_return co_await body;
}

// Runs the algorithm make(x) builds: to the end when `request` is null (a blocking call), else
// as a nonblocking request. With AUGUR_CHECK_COLLECTIVES the ranks first compare their arguments.
template <typename Make>
Err launch(const CommPtr& c, const CollSig& sig, MPI_Request* request, Make&& make) {
  const Coll x{c, request == nullptr ? 0 : next_tag_base(*c)};
  CollTask body = make(x);
  if (S().check_collectives && c->size > 1 && !c->inter()) {  // one allreduce over both groups: not built
    CollTask t = checked(x, sig, std::move(body));
    return request == nullptr ? run_blocking(std::move(t)) : start_collective(x, std::move(t), request);
  }
  return request == nullptr ? run_blocking(std::move(body)) : start_collective(x, std::move(body), request);
}

// The entry points' tails: the blocking call returns the error through the communicator's
// handler; the nonblocking one also refuses a null request pointer.
int blocking(MPI_Comm comm, const char* fn, const Err& e) { return e.ok() ? MPI_SUCCESS : raise(comm, fn, e); }
template <typename Start>
int nonblocking(MPI_Comm comm, const char* fn, MPI_Request* request, Start&& start) {
  if (request == nullptr) return raise(comm, fn, err(MPI_ERR_ARG, "null request pointer"));
  *request = MPI_REQUEST_NULL;
  return blocking(comm, fn, start());
}

std::vector<int> copy_ints(const int* p, int n) { return p == nullptr ? std::vector<int>{} : std::vector<int>(p, p + n); }

Err barrier_common(MPI_Comm comm, MPI_Request* request) {
  AUGUR_ERR_RETURN(check_coll(comm));
  return launch(comm_ptr(comm), {CollKind::kBarrier}, request,
                [](const Coll& x) { return x.c->inter() ? inter_barrier(x) : barrier_task(x); });
}

Err bcast_common(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request* request) {
  AUGUR_ERR_RETURN(check_coll(comm));
  CommPtr c = comm_ptr(comm);
  AUGUR_ERR_RETURN(check_root(root, *c));
  if (root != MPI_PROC_NULL) AUGUR_ERR_RETURN(check_data(buffer, count, datatype));
  return launch(c, {CollKind::kBcast, root, -1, bytes_sig(count, datatype)}, request, [&](const Coll& x) {
    return c->inter() ? inter_bcast(x, buffer, count, type_ptr(datatype), root)
                      : bcast_task(x, buffer, count, type_ptr(datatype), root);
  });
}

Err reduce_common(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                  MPI_Request* request) {
  AUGUR_ERR_RETURN(check_coll(comm));
  CommPtr c = comm_ptr(comm);
  AUGUR_ERR_RETURN(check_root(root, *c));
  if (root == MPI_PROC_NULL) AUGUR_ERR_RETURN(check_type(datatype));
  if (in_leaf_group(*c, root)) {
    AUGUR_ERR_RETURN(check_not_in_place(*c, sendbuf));
    AUGUR_ERR_RETURN(check_data(sendbuf, count, datatype));
  }
  if (is_root(*c, root)) AUGUR_ERR_RETURN(check_data(recvbuf, count, datatype));
  AUGUR_ERR_RETURN(check_op(op, *type_of(datatype)));
  const void* src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  return launch(c, {CollKind::kReduce, root, op_sig(op), bytes_sig(count, datatype)}, request, [&](const Coll& x) {
    return c->inter() ? inter_reduce(x, src, recvbuf, count, datatype, op, root)
                      : reduce_task(x, src, recvbuf, count, datatype, op, root);
  });
}

Err allreduce_common(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                     MPI_Request* request) {
  AUGUR_ERR_RETURN(check_coll(comm));
  CommPtr c = comm_ptr(comm);
  AUGUR_ERR_RETURN(check_not_in_place(*c, sendbuf));
  AUGUR_ERR_RETURN(check_data(sendbuf, count, datatype));
  AUGUR_ERR_RETURN(check_data(recvbuf, count, datatype));
  AUGUR_ERR_RETURN(check_op(op, *type_of(datatype)));
  const void* src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  return launch(c, {CollKind::kAllreduce, -1, op_sig(op), bytes_sig(count, datatype)}, request, [&](const Coll& x) {
    return c->inter() ? inter_allreduce(x, src, recvbuf, count, datatype, op)
                      : allreduce_task(x, src, recvbuf, count, datatype, op);
  });
}

Err gatherv_common(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  AUGUR_ERR_RETURN(check_coll(comm));
  CommPtr c = comm_ptr(comm);
  AUGUR_ERR_RETURN(check_root(root, *c));
  const bool root_here = is_root(*c, root);
  bool sends = false;
  AUGUR_ERR_RETURN(leaf_block(*c, root, sendbuf, sendcount, sendtype, &sends));
  const int n = c->peer_size();
  if (root_here) {
    AUGUR_ERR_RETURN(check_type(recvtype));
    AUGUR_ERR_RETURN(check_counts_displs(recvcounts, displs, n, recvtype));
  }
  return launch(c, {CollKind::kGatherv, root}, request, [&](const Coll& x) {
    auto task = c->inter() ? inter_gatherv : gatherv_task;
    return task(x, sendbuf, sendcount, sends ? type_ptr(sendtype) : nullptr, recvbuf,
                root_here ? copy_ints(recvcounts, n) : std::vector<int>{}, root_here ? copy_ints(displs, n) : std::vector<int>{},
                root_here ? type_ptr(recvtype) : nullptr, root);
  });
}

Err gather_common(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  AUGUR_ERR_RETURN(check_coll(comm));
  CommPtr c = comm_ptr(comm);
  AUGUR_ERR_RETURN(check_root(root, *c));
  const bool root_here = is_root(*c, root);
  bool sends = false;
  AUGUR_ERR_RETURN(leaf_block(*c, root, sendbuf, sendcount, sendtype, &sends));
  if (root_here) AUGUR_ERR_RETURN(check_data(recvbuf, recvcount, recvtype));
  std::vector<int> counts, displs;
  if (root_here) AUGUR_ERR_RETURN(uniform(c->peer_size(), recvcount, &counts, &displs));
  const CollSig sig{CollKind::kGather, root, -1, root_here ? bytes_sig(recvcount, recvtype) : bytes_sig(sendcount, sendtype)};
  return launch(c, sig, request, [&](const Coll& x) {
    auto task = c->inter() ? inter_gatherv : gatherv_task;
    return task(x, sendbuf, sendcount, sends ? type_ptr(sendtype) : nullptr, recvbuf, std::move(counts), std::move(displs),
                root_here ? type_ptr(recvtype) : nullptr, root);
  });
}

Err scatterv_common(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  AUGUR_ERR_RETURN(check_coll(comm));
  CommPtr c = comm_ptr(comm);
  AUGUR_ERR_RETURN(check_root(root, *c));
  const bool root_here = is_root(*c, root);
  bool receives = false;
  AUGUR_ERR_RETURN(leaf_block(*c, root, recvbuf, recvcount, recvtype, &receives));
  const int n = c->peer_size();
  if (root_here) {
    AUGUR_ERR_RETURN(check_type(sendtype));
    AUGUR_ERR_RETURN(check_counts_displs(sendcounts, displs, n, sendtype));
  }
  return launch(c, {CollKind::kScatterv, root}, request, [&](const Coll& x) {
    auto task = c->inter() ? inter_scatterv : scatterv_task;
    return task(x, sendbuf, root_here ? copy_ints(sendcounts, n) : std::vector<int>{},
                root_here ? copy_ints(displs, n) : std::vector<int>{}, root_here ? type_ptr(sendtype) : nullptr, recvbuf,
                recvcount, receives ? type_ptr(recvtype) : nullptr, root);
  });
}

Err scatter_common(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  AUGUR_ERR_RETURN(check_coll(comm));
  CommPtr c = comm_ptr(comm);
  AUGUR_ERR_RETURN(check_root(root, *c));
  const bool root_here = is_root(*c, root);
  bool receives = false;
  AUGUR_ERR_RETURN(leaf_block(*c, root, recvbuf, recvcount, recvtype, &receives));
  if (root_here) AUGUR_ERR_RETURN(check_data(sendbuf, sendcount, sendtype));
  std::vector<int> counts, displs;
  if (root_here) AUGUR_ERR_RETURN(uniform(c->peer_size(), sendcount, &counts, &displs));
  const CollSig sig{CollKind::kScatter, root, -1, root_here ? bytes_sig(sendcount, sendtype) : bytes_sig(recvcount, recvtype)};
  return launch(c, sig, request, [&](const Coll& x) {
    auto task = c->inter() ? inter_scatterv : scatterv_task;
    return task(x, sendbuf, std::move(counts), std::move(displs), root_here ? type_ptr(sendtype) : nullptr, recvbuf, recvcount,
                receives ? type_ptr(recvtype) : nullptr, root);
  });
}

Err allgather_common(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  AUGUR_ERR_RETURN(check_coll(comm));
  CommPtr c = comm_ptr(comm);
  AUGUR_ERR_RETURN(check_not_in_place(*c, sendbuf));
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (!in_place) AUGUR_ERR_RETURN(check_data(sendbuf, sendcount, sendtype));
  AUGUR_ERR_RETURN(check_data(recvbuf, recvcount, recvtype));
  std::vector<int> counts, displs;
  AUGUR_ERR_RETURN(uniform(c->peer_size(), recvcount, &counts, &displs));
  if (c->inter()) return inter_allgatherv_launch(c, sendbuf, sendcount, sendtype, recvbuf, counts.data(), displs.data(), recvtype, request);
  return launch(c, {CollKind::kAllgather, -1, -1, bytes_sig(recvcount, recvtype)}, request, [&](const Coll& x) {
    return allgatherv_task(x, sendbuf, sendcount, in_place ? nullptr : type_ptr(sendtype), recvbuf, std::move(counts),
                           std::move(displs), type_ptr(recvtype));
  });
}

Err allgatherv_common(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                      const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  AUGUR_ERR_RETURN(check_coll(comm));
  CommPtr c = comm_ptr(comm);
  AUGUR_ERR_RETURN(check_not_in_place(*c, sendbuf));
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (!in_place) AUGUR_ERR_RETURN(check_data(sendbuf, sendcount, sendtype));
  AUGUR_ERR_RETURN(check_type(recvtype));
  AUGUR_ERR_RETURN(check_counts_displs(recvcounts, displs, c->peer_size(), recvtype));
  if (c->inter()) return inter_allgatherv_launch(c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, request);
  return launch(c, {CollKind::kAllgatherv}, request, [&](const Coll& x) {
    return allgatherv_task(x, sendbuf, sendcount, in_place ? nullptr : type_ptr(sendtype), recvbuf,
                           copy_ints(recvcounts, c->size), copy_ints(displs, c->size), type_ptr(recvtype));
  });
}

// Checks one side of an all-to-all-w (byte displacements, a type per peer) and builds its blocks.
template <typename Disp>
Err w_blocks(void* buf, const int* counts, const Disp* displs, const MPI_Datatype* types, int n, std::vector<Block>* out) {
  if (counts == nullptr || displs == nullptr || types == nullptr) return err(MPI_ERR_ARG, "null counts, displacements or types");
  out->clear();
  for (int i = 0; i < n; ++i) {
    AUGUR_ERR_RETURN(check_type(types[i]));
    if (counts[i] < 0) return err(MPI_ERR_COUNT, "negative count " + std::to_string(counts[i]) + " for rank " + std::to_string(i));
    AUGUR_ERR_RETURN(check_bytes(counts[i], *type_of(types[i])));
    out->push_back({static_cast<std::byte*>(buf) + displs[i], counts[i], type_ptr(types[i])});
  }
  return ok();
}

// The same for one datatype and displacements in its extents (all-to-all, all-to-all-v).
Err v_blocks(const void* buf, const int* counts, const int* displs, MPI_Datatype type, int n, std::vector<Block>* out) {
  AUGUR_ERR_RETURN(check_type(type));
  AUGUR_ERR_RETURN(check_counts_displs(counts, displs, n, type));
  const TypePtr t = type_ptr(type);
  out->clear();
  for (int i = 0; i < n; ++i) {
    out->push_back({static_cast<std::byte*>(const_cast<void*>(buf)) + static_cast<std::int64_t>(displs[i]) * t->extent,
                    counts[i], t});
  }
  return ok();
}

// MPI_IN_PLACE: what is sent is the receive buffer as it is on entry, so it is copied once, up
// front (the receives overwrite it); the sends read the copy.
std::vector<std::byte> snapshot(const std::vector<Block>& recvs, std::vector<Block>* sends) {
  const std::byte* lo = nullptr;
  const std::byte* hi = nullptr;
  for (const Block& b : recvs) {
    if (b.count == 0 || b.t->size == 0) continue;
    const std::byte* s = b.p + b.t->true_lb;
    const std::byte* e = b.p + (b.count - 1) * b.t->extent + b.t->true_lb + b.t->true_extent;
    if (lo == nullptr || s < lo) lo = s;
    if (hi == nullptr || e > hi) hi = e;
  }
  std::vector<std::byte> copy(lo == nullptr ? 0 : static_cast<std::size_t>(hi - lo));
  if (!copy.empty()) std::memcpy(copy.data(), lo, copy.size());
  *sends = recvs;
  for (Block& b : *sends) {
    if (lo != nullptr) b.p = copy.data() + (b.p - lo);
  }
  return copy;
}

Err alltoall_launch(const CommPtr& c, const CollSig& sig, std::vector<Block> sends, std::vector<Block> recvs, bool in_place,
                    MPI_Request* request) {
  if (c->inter()) {
    AUGUR_ERR_RETURN(check_not_in_place(*c, in_place ? MPI_IN_PLACE : nullptr));
    return launch(c, sig, request, [&](const Coll& x) { return inter_alltoallw(x, std::move(sends), std::move(recvs)); });
  }
  std::vector<std::byte> keep;
  if (in_place) keep = snapshot(recvs, &sends);
  return launch(c, sig, request, [&](const Coll& x) {
    return alltoallw_task(x, std::move(sends), std::move(recvs), std::move(keep));
  });
}

// Allgather(v) on an intercommunicator: the send block to every remote rank, block i from remote
// rank i (counts and displacements already checked, one per remote rank).
Err inter_allgatherv_launch(const CommPtr& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            const int* counts, const int* displs, MPI_Datatype recvtype, MPI_Request* request) {
  std::vector<Block> sends, recvs;
  AUGUR_ERR_RETURN(v_blocks(recvbuf, counts, displs, recvtype, c->peer_size(), &recvs));
  sends.assign(static_cast<std::size_t>(c->peer_size()),
               Block{static_cast<std::byte*>(const_cast<void*>(sendbuf)), sendcount, type_ptr(sendtype)});
  return launch(c, {CollKind::kAllgatherv}, request,
                [&](const Coll& x) { return inter_alltoallw(x, std::move(sends), std::move(recvs)); });
}

Err alltoall_common(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  AUGUR_ERR_RETURN(check_coll(comm));
  CommPtr c = comm_ptr(comm);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (!in_place) AUGUR_ERR_RETURN(check_data(sendbuf, sendcount, sendtype));
  AUGUR_ERR_RETURN(check_data(recvbuf, recvcount, recvtype));
  std::vector<int> sc, sd, rc, rd;
  std::vector<Block> sends, recvs;
  const int n = c->peer_size();
  AUGUR_ERR_RETURN(uniform(n, recvcount, &rc, &rd));
  AUGUR_ERR_RETURN(v_blocks(recvbuf, rc.data(), rd.data(), recvtype, n, &recvs));
  if (!in_place) {
    AUGUR_ERR_RETURN(uniform(n, sendcount, &sc, &sd));
    AUGUR_ERR_RETURN(v_blocks(sendbuf, sc.data(), sd.data(), sendtype, n, &sends));
  }
  return alltoall_launch(c, {CollKind::kAlltoall, -1, -1, bytes_sig(recvcount, recvtype)}, std::move(sends),
                         std::move(recvs), in_place, request);
}

Err alltoallv_common(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                     const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request* request) {
  AUGUR_ERR_RETURN(check_coll(comm));
  CommPtr c = comm_ptr(comm);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  std::vector<Block> sends, recvs;
  AUGUR_ERR_RETURN(v_blocks(recvbuf, recvcounts, rdispls, recvtype, c->peer_size(), &recvs));
  if (!in_place) AUGUR_ERR_RETURN(v_blocks(sendbuf, sendcounts, sdispls, sendtype, c->peer_size(), &sends));
  return alltoall_launch(c, {CollKind::kAlltoallv}, std::move(sends), std::move(recvs), in_place, request);
}

Err alltoallw_common(const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                     void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                     MPI_Comm comm, MPI_Request* request) {
  AUGUR_ERR_RETURN(check_coll(comm));
  CommPtr c = comm_ptr(comm);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  std::vector<Block> sends, recvs;
  AUGUR_ERR_RETURN(w_blocks(recvbuf, recvcounts, rdispls, recvtypes, c->peer_size(), &recvs));
  if (!in_place) {
    AUGUR_ERR_RETURN(w_blocks(const_cast<void*>(sendbuf), sendcounts, sdispls, sendtypes, c->peer_size(), &sends));
  }
  return alltoall_launch(c, {CollKind::kAlltoallw}, std::move(sends), std::move(recvs), in_place, request);
}

// Neighbourhood collectives: the blocks of each side against the topology's neighbour lists.
Err neighbor_launch(MPI_Comm comm, const CollSig& sig, MPI_Request* request, std::vector<Block> sends,
                    std::vector<Block> recvs, Neighbors nb) {
  return launch(comm_ptr(comm), sig, request, [&](const Coll& x) {
    return neighbor_task(x, std::move(sends), std::move(recvs), std::move(nb));
  });
}

Err neighbors_for(MPI_Comm comm, Neighbors* nb) {
  AUGUR_ERR_RETURN(check_coll(comm));
  return neighbors_of(*comm_of(comm), nb);
}

// Equal blocks of count copies of type, one per neighbour, back to back.
Err equal_blocks(const void* buf, int count, MPI_Datatype type, std::size_t n, std::vector<Block>* out) {
  AUGUR_ERR_RETURN(check_data(buf, count, type));
  if (buf == MPI_IN_PLACE) return err(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed in neighbourhood collectives");
  const TypePtr t = type_ptr(type);
  out->clear();
  for (std::size_t i = 0; i < n; ++i) {
    out->push_back({static_cast<std::byte*>(const_cast<void*>(buf)) + static_cast<std::int64_t>(i) * count * t->extent, count, t});
  }
  return ok();
}

Err neighbor_allgather_common(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  Neighbors nb;
  AUGUR_ERR_RETURN(neighbors_for(comm, &nb));
  std::vector<Block> sends, recvs;
  AUGUR_ERR_RETURN(equal_blocks(sendbuf, sendcount, sendtype, 1, &sends));
  sends.resize(nb.out.size(), sends.front());  // the same block to every neighbour
  AUGUR_ERR_RETURN(equal_blocks(recvbuf, recvcount, recvtype, nb.in.size(), &recvs));
  return neighbor_launch(comm, {CollKind::kNeighborAllgather, -1, -1, bytes_sig(sendcount, sendtype)}, request,
                         std::move(sends), std::move(recvs), std::move(nb));
}

Err neighbor_allgatherv_common(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request* request) {
  Neighbors nb;
  AUGUR_ERR_RETURN(neighbors_for(comm, &nb));
  std::vector<Block> sends, recvs;
  AUGUR_ERR_RETURN(equal_blocks(sendbuf, sendcount, sendtype, 1, &sends));
  sends.resize(nb.out.size(), sends.front());
  AUGUR_ERR_RETURN(v_blocks(recvbuf, recvcounts, displs, recvtype, static_cast<int>(nb.in.size()), &recvs));
  return neighbor_launch(comm, {CollKind::kNeighborAllgatherv}, request, std::move(sends), std::move(recvs), std::move(nb));
}

Err neighbor_alltoall_common(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  Neighbors nb;
  AUGUR_ERR_RETURN(neighbors_for(comm, &nb));
  std::vector<Block> sends, recvs;
  AUGUR_ERR_RETURN(equal_blocks(sendbuf, sendcount, sendtype, nb.out.size(), &sends));
  AUGUR_ERR_RETURN(equal_blocks(recvbuf, recvcount, recvtype, nb.in.size(), &recvs));
  return neighbor_launch(comm, {CollKind::kNeighborAlltoall, -1, -1, bytes_sig(sendcount, sendtype)}, request,
                         std::move(sends), std::move(recvs), std::move(nb));
}

Err neighbor_alltoallv_common(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                              void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Request* request) {
  Neighbors nb;
  AUGUR_ERR_RETURN(neighbors_for(comm, &nb));
  std::vector<Block> sends, recvs;
  AUGUR_ERR_RETURN(v_blocks(sendbuf, sendcounts, sdispls, sendtype, static_cast<int>(nb.out.size()), &sends));
  AUGUR_ERR_RETURN(v_blocks(recvbuf, recvcounts, rdispls, recvtype, static_cast<int>(nb.in.size()), &recvs));
  return neighbor_launch(comm, {CollKind::kNeighborAlltoallv}, request, std::move(sends), std::move(recvs), std::move(nb));
}

Err neighbor_alltoallw_common(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                              const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                              MPI_Request* request) {
  Neighbors nb;
  AUGUR_ERR_RETURN(neighbors_for(comm, &nb));
  std::vector<Block> sends, recvs;
  AUGUR_ERR_RETURN(w_blocks(const_cast<void*>(sendbuf), sendcounts, sdispls, sendtypes, static_cast<int>(nb.out.size()), &sends));
  AUGUR_ERR_RETURN(w_blocks(recvbuf, recvcounts, rdispls, recvtypes, static_cast<int>(nb.in.size()), &recvs));
  return neighbor_launch(comm, {CollKind::kNeighborAlltoallw}, request, std::move(sends), std::move(recvs), std::move(nb));
}

// `sig`: what AUGUR_CHECK_COLLECTIVES compares (Reduce_scatter_block also compares the bytes).
Err reduce_scatter_run(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm, MPI_Request* request, const CollSig& sig) {
  AUGUR_ERR_RETURN(check_coll(comm));
  CommPtr c = comm_ptr(comm);
  AUGUR_ERR_RETURN(check_type(datatype));
  if (recvcounts == nullptr) return err(MPI_ERR_ARG, "null recvcounts");
  std::int64_t total = 0;
  for (int i = 0; i < c->size; ++i) {
    AUGUR_ERR_RETURN(check_count(recvcounts[i]));
    total += recvcounts[i];
  }
  // Reduced as one block of the total, addressed by int displacements (reduce_scatter_task).
  if (total > std::numeric_limits<int>::max()) {
    return err(MPI_ERR_COUNT, "the receive counts add up to " + std::to_string(total) +
                                  " elements, more than augur's collectives address (2^31 - 1)");
  }
  AUGUR_ERR_RETURN(check_bytes(total, *type_of(datatype)));
  AUGUR_ERR_RETURN(check_op(op, *type_of(datatype)));
  AUGUR_ERR_RETURN(check_not_in_place(*c, sendbuf));
  return launch(c, sig, request, [&](const Coll& x) {
    auto task = c->inter() ? inter_reduce_scatter : reduce_scatter_task;
    return task(x, sendbuf, recvbuf, copy_ints(recvcounts, c->size), datatype, op);
  });
}

Err reduce_scatter_block_common(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm, MPI_Request* request) {
  AUGUR_ERR_RETURN(check_coll(comm));
  AUGUR_ERR_RETURN(check_count(recvcount));
  AUGUR_ERR_RETURN(check_type(datatype));
  const std::vector<int> counts(static_cast<std::size_t>(comm_of(comm)->size), recvcount);
  return reduce_scatter_run(sendbuf, recvbuf, counts.data(), datatype, op, comm, request,
                            {CollKind::kReduceScatter, -1, op_sig(op), bytes_sig(recvcount, datatype)});
}

Err reduce_scatter_common(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm, MPI_Request* request) {
  return reduce_scatter_run(sendbuf, recvbuf, recvcounts, datatype, op, comm, request,
                            {CollKind::kReduceScatter, -1, op_sig(op)});
}

template <bool exclusive>  // MPI_Exscan
Err scan_common(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                MPI_Request* request) {
  AUGUR_ERR_RETURN(check_coll(comm));
  AUGUR_ERR_RETURN(check_intra(*comm_of(comm), exclusive ? "MPI_Exscan" : "MPI_Scan"));
  AUGUR_ERR_RETURN(check_data(sendbuf, count, datatype));
  AUGUR_ERR_RETURN(check_data(recvbuf, count, datatype));
  AUGUR_ERR_RETURN(check_op(op, *type_of(datatype)));
  const CollSig sig{exclusive ? CollKind::kExscan : CollKind::kScan, -1, op_sig(op), bytes_sig(count, datatype)};
  return launch(comm_ptr(comm), sig, request,
                [&](const Coll& x) { return scan_task(x, sendbuf, recvbuf, count, datatype, op, exclusive); });
}

}  // namespace

// Defines MPI_<Name> and its nonblocking twin MPI_<IName>: both run `common` with the call's
// arguments and a request (null for the blocking call, which runs the collective to the end).
#define AUGUR_UNPAREN(...) __VA_ARGS__
#define AUGUR_WITH_REQUEST(...) (__VA_ARGS__, MPI_Request* request)
#define AUGUR_WITH_REQUEST_ARG(...) (__VA_ARGS__, request)
#define AUGUR_MPI_COLLECTIVE(Name, IName, params, args, common)                                       \
  AUGUR_MPI_FN(int, Name, params, args) {                                                            \
    return blocking(comm, "MPI_" #Name, common(AUGUR_UNPAREN args, nullptr));                        \
  }                                                                                                  \
  AUGUR_MPI_FN(int, IName, AUGUR_WITH_REQUEST params, AUGUR_WITH_REQUEST_ARG args) {                 \
    return nonblocking(comm, "MPI_" #IName, request, [&] { return common(AUGUR_UNPAREN args, request); }); \
  }

AUGUR_MPI_COLLECTIVE(Barrier, Ibarrier,
                     (MPI_Comm comm),
                     (comm),
                     barrier_common)
AUGUR_MPI_COLLECTIVE(Bcast, Ibcast,
                     (void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm),
                     (buffer, count, datatype, root, comm),
                     bcast_common)
AUGUR_MPI_COLLECTIVE(Reduce, Ireduce,
                     (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm),
                     (sendbuf, recvbuf, count, datatype, op, root, comm),
                     reduce_common)
AUGUR_MPI_COLLECTIVE(Allreduce, Iallreduce,
                     (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
                     (sendbuf, recvbuf, count, datatype, op, comm),
                     allreduce_common)
AUGUR_MPI_COLLECTIVE(Gatherv, Igatherv,
                     (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm),
                     (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm),
                     gatherv_common)
AUGUR_MPI_COLLECTIVE(Gather, Igather,
                     (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
                     (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
                     gather_common)
AUGUR_MPI_COLLECTIVE(Scatterv, Iscatterv,
                     (const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
                     (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm),
                     scatterv_common)
AUGUR_MPI_COLLECTIVE(Scatter, Iscatter,
                     (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
                     (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
                     scatter_common)
AUGUR_MPI_COLLECTIVE(Allgather, Iallgather,
                     (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm),
                     (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
                     allgather_common)
AUGUR_MPI_COLLECTIVE(Allgatherv, Iallgatherv,
                     (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm),
                     (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm),
                     allgatherv_common)
AUGUR_MPI_COLLECTIVE(Alltoall, Ialltoall,
                     (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm),
                     (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
                     alltoall_common)
AUGUR_MPI_COLLECTIVE(Alltoallv, Ialltoallv,
                     (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm),
                     (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm),
                     alltoallv_common)
AUGUR_MPI_COLLECTIVE(Alltoallw, Ialltoallw,
                     (const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm),
                     (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm),
                     alltoallw_common)
AUGUR_MPI_COLLECTIVE(Reduce_scatter, Ireduce_scatter,
                     (const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
                     (sendbuf, recvbuf, recvcounts, datatype, op, comm),
                     reduce_scatter_common)
AUGUR_MPI_COLLECTIVE(Reduce_scatter_block, Ireduce_scatter_block,
                     (const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
                     (sendbuf, recvbuf, recvcount, datatype, op, comm),
                     reduce_scatter_block_common)
AUGUR_MPI_COLLECTIVE(Scan, Iscan,
                     (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
                     (sendbuf, recvbuf, count, datatype, op, comm),
                     scan_common<false>)
AUGUR_MPI_COLLECTIVE(Exscan, Iexscan,
                     (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
                     (sendbuf, recvbuf, count, datatype, op, comm),
                     scan_common<true>)
AUGUR_MPI_COLLECTIVE(Neighbor_allgather, Ineighbor_allgather,
                     (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm),
                     (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
                     neighbor_allgather_common)
AUGUR_MPI_COLLECTIVE(Neighbor_allgatherv, Ineighbor_allgatherv,
                     (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm),
                     (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm),
                     neighbor_allgatherv_common)
AUGUR_MPI_COLLECTIVE(Neighbor_alltoall, Ineighbor_alltoall,
                     (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm),
                     (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
                     neighbor_alltoall_common)
AUGUR_MPI_COLLECTIVE(Neighbor_alltoallv, Ineighbor_alltoallv,
                     (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm),
                     (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm),
                     neighbor_alltoallv_common)
AUGUR_MPI_COLLECTIVE(Neighbor_alltoallw, Ineighbor_alltoallw,
                     (const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm),
                     (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm),
                     neighbor_alltoallw_common)

AUGUR_MPI_FN(int, Op_create, (MPI_User_function * user_fn, int commute, MPI_Op* op), (user_fn, commute, op)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Op_create", check_running());
  if (user_fn == nullptr || op == nullptr) return raise(MPI_COMM_WORLD, "MPI_Op_create", err(MPI_ERR_ARG, "null argument"));
  S().ops.push_back(UserOp{user_fn, commute != 0, false});
  *op = kFirstUserOp + static_cast<int>(S().ops.size() - 1);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Op_free, (MPI_Op * op), (op)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Op_free", check_running());
  if (op == nullptr || user_op(*op) == nullptr) {
    return raise(MPI_COMM_WORLD, "MPI_Op_free", err(MPI_ERR_OP, "not a user-defined operation"));
  }
  S().ops[static_cast<std::size_t>(*op - kFirstUserOp)].fn = nullptr;
  *op = MPI_OP_NULL;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Op_commutative, (MPI_Op op, int* commute), (op, commute)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Op_commutative", check_running());
  if (commute == nullptr) return raise(MPI_COMM_WORLD, "MPI_Op_commutative", err(MPI_ERR_ARG, "null argument"));
  if (!predefined_op(op) && user_op(op) == nullptr) {
    return raise(MPI_COMM_WORLD, "MPI_Op_commutative", err(MPI_ERR_OP, "invalid operation"));
  }
  *commute = op_commutes(op) ? 1 : 0;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Reduce_local,
             (const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype, MPI_Op op),
             (inbuf, inoutbuf, count, datatype, op)) {
  const char* fn = "MPI_Reduce_local";
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_running());
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_data(inbuf, count, datatype));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_data(inoutbuf, count, datatype));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_op(op, *type_of(datatype)));
  apply_op(op, inbuf, inoutbuf, count, datatype, *type_of(datatype));
  return MPI_SUCCESS;
}

