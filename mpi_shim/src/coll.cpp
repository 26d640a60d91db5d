// Collectives on point-to-point (each communicator's collective context), and reduction
// operations. Algorithms: dissemination barrier; binomial-tree broadcast and reduce; allreduce by
// recursive doubling (non-powers of two folded in first), ring reduce-scatter + ring allgather
// for large commutative reductions; ring allgather(v); pairwise alltoall(v); recursive-doubling
// scan/exscan; linear gather(v)/scatter(v) with every transfer posted at once. Buffers are
// typed: messages are packed/unpacked by the datatype like any point-to-point message.
#include <algorithm>
#include <complex>
#include <cstring>
#include <limits>
#include <string>

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

namespace {

enum Tag : int { kBarrier = 1, kBcast, kReduce, kAllreduce, kGather, kScatter, kAllgather, kAlltoall, kScan, kRing };

// Scratch copy of `count` copies of `t` from `src`.
Err copy_typed(const void* src, void* dst, std::int64_t count, const Type& t) { return local_copy(src, count, t, dst, count, t); }

// acc = acc (op) other, keeping rank order: apply_op computes inout = in (op) inout.
void combine_after(MPI_Op op, TypedBuf& acc, TypedBuf& other, std::int64_t count, MPI_Datatype th, const Type& t) {
  apply_op(op, acc.ptr(), other.ptr(), count, th, t);
  std::swap(acc, other);
}

Err reduce_tree(const void* sbuf, void* rbuf, std::int64_t count, MPI_Datatype th, MPI_Op op, int root,
                const CommPtr& c) {
  const TypePtr t = type_ptr(th);
  const int n = c->size;
  const bool commute = op_commutes(op);
  const int tree_root = commute ? root : 0;  // non-commutative: reduce in rank order to 0
  const int vr = (c->rank - tree_root + n) % n;
  TypedBuf acc(*t, count), tmp(*t, count);
  AUGUR_ERR_RETURN(copy_typed(sbuf, acc.ptr(), count, *t));
  for (int mask = 1; mask < n; mask <<= 1) {
    if ((vr & mask) == 0) {
      const int src = vr | mask;
      if (src < n) {
        AUGUR_ERR_RETURN(coll_recv(tmp.ptr(), count, t, (src + tree_root) % n, kReduce, c));
        combine_after(op, acc, tmp, count, th, *t);  // acc holds lower ranks than src's subtree
      }
    } else {
      AUGUR_ERR_RETURN(coll_send(acc.ptr(), count, t, ((vr & ~mask) + tree_root) % n, kReduce, c));
      break;
    }
  }
  if (tree_root != root) {
    if (c->rank == tree_root) AUGUR_ERR_RETURN(coll_send(acc.ptr(), count, t, root, kReduce, c));
    if (c->rank == root) return coll_recv(rbuf, count, t, tree_root, kReduce, c);
    return ok();
  }
  if (c->rank == root) return copy_typed(acc.ptr(), rbuf, count, *t);
  return ok();
}

Err bcast_tree(void* buf, std::int64_t count, const TypePtr& t, int root, const CommPtr& c) {
  const int n = c->size;
  const int vr = (c->rank - root + n) % n;
  int mask = 1;
  Err first;
  for (; mask < n; mask <<= 1) {
    if (vr & mask) {
      first = coll_recv(buf, count, t, (vr - mask + root) % n, kBcast, c);
      // Mismatched counts: report it, but still feed the subtree so that nobody hangs.
      if (!first.ok() && first.cls != MPI_ERR_TRUNCATE) return first;
      break;
    }
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (vr + mask < n) AUGUR_ERR_RETURN(coll_send(buf, count, t, (vr + mask + root) % n, kBcast, c));
  }
  return first;
}

// Elements [first(i), first(i+1)) form block i of a count split n ways.
std::int64_t block_first(std::int64_t count, int n, int i) {
  const std::int64_t q = count / n, r = count % n;
  return i * q + std::min<std::int64_t>(i, r);
}

// Ring allreduce: reduce-scatter then allgather, each n-1 steps of one block (commutative ops).
Err allreduce_ring(void* rbuf, std::int64_t count, MPI_Datatype th, MPI_Op op, const CommPtr& c) {
  const TypePtr t = type_ptr(th);
  const int n = c->size, me = c->rank;
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  auto* base = static_cast<std::byte*>(rbuf);
  TypedBuf tmp(*t, block_first(count, n, 1) + 1);
  for (int s = 0; s < n - 1; ++s) {
    const int sb = (me - s + n) % n, rb = (me - s - 1 + 2 * n) % n;
    const std::int64_t s0 = block_first(count, n, sb), s1 = block_first(count, n, sb + 1);
    const std::int64_t r0 = block_first(count, n, rb), r1 = block_first(count, n, rb + 1);
    AUGUR_ERR_RETURN(coll_sendrecv(base + s0 * t->extent, s1 - s0, t, right, tmp.ptr(), r1 - r0, t, left, kRing, c));
    apply_op(op, tmp.ptr(), base + r0 * t->extent, r1 - r0, th, *t);
  }
  for (int s = 0; s < n - 1; ++s) {
    const int sb = (me + 1 - s + n) % n, rb = (me - s + n) % n;
    const std::int64_t s0 = block_first(count, n, sb), s1 = block_first(count, n, sb + 1);
    const std::int64_t r0 = block_first(count, n, rb), r1 = block_first(count, n, rb + 1);
    AUGUR_ERR_RETURN(coll_sendrecv(base + s0 * t->extent, s1 - s0, t, right, base + r0 * t->extent, r1 - r0, t, left,
                                   kRing, c));
  }
  return ok();
}

constexpr std::int64_t kRingBytes = 64 * 1024;

}  // namespace

Err barrier_impl(const CommPtr& c) {
  const int n = c->size;
  const TypePtr b = type_ptr(MPI_BYTE);
  for (int k = 1; k < n; k <<= 1) {
    AUGUR_ERR_RETURN(coll_sendrecv(nullptr, 0, b, (c->rank + k) % n, nullptr, 0, b, (c->rank - k + n) % n, kBarrier, c));
  }
  return ok();
}

Err allreduce_impl(const void* sbuf, void* rbuf, std::int64_t count, MPI_Datatype th, MPI_Op op, const CommPtr& c) {
  const TypePtr t = type_ptr(th);
  const int n = c->size;
  if (sbuf != rbuf) AUGUR_ERR_RETURN(copy_typed(sbuf, rbuf, count, *t));
  if (n == 1 || count == 0) return ok();
  if (op_commutes(op) && count >= n && count * t->size >= kRingBytes) return allreduce_ring(rbuf, count, th, op, c);
  // Recursive doubling; with n not a power of two, the first 2*rem ranks pair up first.
  int p2 = 1;
  while (p2 * 2 <= n) p2 *= 2;
  const int rem = n - p2, me = c->rank;
  TypedBuf acc(*t, count), tmp(*t, count);
  AUGUR_ERR_RETURN(copy_typed(rbuf, acc.ptr(), count, *t));
  int newrank = -1;
  if (me < 2 * rem) {
    if (me % 2 == 0) {
      AUGUR_ERR_RETURN(coll_send(acc.ptr(), count, t, me + 1, kAllreduce, c));
    } else {
      AUGUR_ERR_RETURN(coll_recv(tmp.ptr(), count, t, me - 1, kAllreduce, c));
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
      AUGUR_ERR_RETURN(coll_sendrecv(acc.ptr(), count, t, partner, tmp.ptr(), count, t, partner, kAllreduce, c));
      if (partner < me) {
        apply_op(op, tmp.ptr(), acc.ptr(), count, th, *t);
      } else {
        combine_after(op, acc, tmp, count, th, *t);
      }
    }
  }
  if (me < 2 * rem) {
    if (me % 2 == 1) {
      AUGUR_ERR_RETURN(coll_send(acc.ptr(), count, t, me - 1, kAllreduce, c));
    } else {
      AUGUR_ERR_RETURN(coll_recv(acc.ptr(), count, t, me + 1, kAllreduce, c));
    }
  }
  return copy_typed(acc.ptr(), rbuf, count, *t);
}

Err allgather_impl(const void* sbuf, std::int64_t scount, const TypePtr& st, void* rbuf, std::int64_t rcount,
                   const TypePtr& rt, const CommPtr& c) {
  const int n = c->size, me = c->rank;
  auto* base = static_cast<std::byte*>(rbuf);
  const std::int64_t blk = rcount * rt->extent;
  if (sbuf != MPI_IN_PLACE) AUGUR_ERR_RETURN(local_copy(sbuf, scount, *st, base + me * blk, rcount, *rt));
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  for (int s = 0; s < n - 1; ++s) {
    const int sb = (me - s + n) % n, rb = (me - s - 1 + 2 * n) % n;
    AUGUR_ERR_RETURN(coll_sendrecv(base + sb * blk, rcount, rt, right, base + rb * blk, rcount, rt, left, kAllgather, c));
  }
  return ok();
}

}  // namespace augur::mpi

using namespace augur::mpi;

// --- entry points ----------------------------------------------------------------------------

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

Err check_root(int root, const Comm& c) {
  if (root < 0 || root >= c.size) return err(MPI_ERR_ROOT, "invalid root " + std::to_string(root) + " (communicator size " + std::to_string(c.size) + ")");
  return ok();
}

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
  kAllgatherv, kAlltoall, kAlltoallv, kReduceScatter, kScan, kExscan,
};
constexpr const char* kCollNames[] = {"",           "MPI_Barrier",   "MPI_Bcast",   "MPI_Reduce",
                                      "MPI_Allreduce", "MPI_Gather",  "MPI_Gatherv", "MPI_Scatter",
                                      "MPI_Scatterv", "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall",
                                      "MPI_Alltoallv", "MPI_Reduce_scatter", "MPI_Scan", "MPI_Exscan"};
struct CollSig {
  CollKind kind;
  std::int64_t root = -1;
  std::int64_t op = -1;     // predefined ops by value; every user op counts as one kind of op
  std::int64_t bytes = -1;  // bytes each rank contributes (type size x count)
};

std::int64_t op_sig(MPI_Op op) { return predefined_op(op) ? op : 1000; }
std::int64_t bytes_sig(int count, MPI_Datatype t) { return static_cast<std::int64_t>(count) * type_of(t)->size; }

// Holds while a collective runs, so one built on another (Alltoall on Alltoallv) checks once.
struct CollScope {
  CollScope() { ++S().coll_depth; }
  ~CollScope() { --S().coll_depth; }
  CollScope(const CollScope&) = delete;
  CollScope& operator=(const CollScope&) = delete;
};

Err check_signature(const CollSig& sig, const CommPtr& c) {
  if (!S().check_collectives || S().coll_depth > 0 || c->size == 1) return ok();
  std::int64_t mine[8] = {static_cast<std::int64_t>(sig.kind), sig.root, sig.op, sig.bytes, 0, 0, 0, 0};
  for (int i = 0; i < 4; ++i) mine[4 + i] = -mine[i];
  std::int64_t all[8];
  {
    CollScope nested;
    AUGUR_ERR_RETURN(allreduce_impl(mine, all, 8, MPI_INT64_T, MPI_MIN, c));
  }
  auto differs = [&](int i) { return all[i] != -all[4 + i]; };
  auto range = [&](int i) { return std::to_string(all[i]) + " to " + std::to_string(-all[4 + i]); };
  if (differs(0)) {
    auto name = [](std::int64_t k) { return k >= 1 && k <= 15 ? kCollNames[k] : "?"; };
    return err(MPI_ERR_OTHER, std::string("ranks of the communicator called different collectives (") + name(all[0]) +
                                  " ... " + name(-all[4]) + ")");
  }
  if (differs(1)) return err(MPI_ERR_ROOT, "ranks passed different roots (" + range(1) + ")");
  if (differs(2)) return err(MPI_ERR_OP, "ranks passed different reduction operations");
  if (differs(3)) return err(MPI_ERR_COUNT, "ranks pass different amounts of data (" + range(3) + " bytes): type signatures differ");
  return ok();
}

// Waits for a set of started requests, then completes them (first error wins).
Err wait_all(std::vector<Req>& rs) {
  for (auto& r : rs) AUGUR_ERR_RETURN(wait_until([&] { return req_done(r); }));
  Err first;
  for (auto& r : rs) {
    MPI_Status st{};
    Err e = req_finish(r, &st);
    if (e.ok() && r.kind == ReqKind::kRecv && !r.proc_null) {
      const std::int64_t got = (static_cast<std::int64_t>(static_cast<std::uint32_t>(st.augur_count_hi)) << 32) |
                               static_cast<std::uint32_t>(st.augur_count_lo);
      if (got != r.count * r.type->size) {
        e = err(MPI_ERR_TRUNCATE, "collective arguments do not match: expected " + std::to_string(r.count * r.type->size) +
                                      " bytes from rank " + std::to_string(st.MPI_SOURCE) + ", got " + std::to_string(got));
      }
    }
    if (!e.ok() && first.ok()) first = e;
  }
  return first;
}

Err gatherv_impl(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int* rcounts, const int* displs,
                 MPI_Datatype rtype, int root, const CommPtr& c) {
  if (c->rank != root) return coll_send(sbuf, scount, type_ptr(stype), root, kGather, c);
  const TypePtr rt = type_ptr(rtype);
  auto* base = static_cast<std::byte*>(rbuf);
  std::vector<Req> rs(static_cast<std::size_t>(c->size - 1));
  std::size_t k = 0;
  for (int i = 0; i < c->size; ++i) {
    if (i == root) continue;
    AUGUR_ERR_RETURN(start_recv(rs[k++], base + static_cast<std::int64_t>(displs[i]) * rt->extent, rcounts[i], rt, i,
                                kGather, c, c->coll_ctx()));
  }
  if (sbuf != MPI_IN_PLACE) {
    AUGUR_ERR_RETURN(local_copy(sbuf, scount, *type_of(stype), base + static_cast<std::int64_t>(displs[root]) * rt->extent,
                                rcounts[root], *rt));
  }
  return wait_all(rs);
}

Err scatterv_impl(const void* sbuf, const int* scounts, const int* displs, MPI_Datatype stype, void* rbuf, int rcount,
                  MPI_Datatype rtype, int root, const CommPtr& c) {
  if (c->rank != root) return coll_recv(rbuf, rcount, type_ptr(rtype), root, kScatter, c);
  const TypePtr st = type_ptr(stype);
  const auto* base = static_cast<const std::byte*>(sbuf);
  std::vector<Req> rs(static_cast<std::size_t>(c->size - 1));
  std::size_t k = 0;
  for (int i = 0; i < c->size; ++i) {
    if (i == root) continue;
    AUGUR_ERR_RETURN(start_send(rs[k++], base + static_cast<std::int64_t>(displs[i]) * st->extent, scounts[i], st, i,
                                kScatter, c, c->coll_ctx()));
  }
  if (rbuf != MPI_IN_PLACE) {
    AUGUR_ERR_RETURN(local_copy(base + static_cast<std::int64_t>(displs[root]) * st->extent, scounts[root], *st, rbuf,
                                rcount, *type_of(rtype)));
  }
  return wait_all(rs);
}

// Equal counts and their displacements, for the v-variants (which take ints): refused with
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

Err reduce_scatter_impl(const void* sbuf, void* rbuf, const int* rcounts, MPI_Datatype th, MPI_Op op, const CommPtr& c) {
  const TypePtr t = type_ptr(th);
  std::int64_t total = 0;
  std::vector<int> displs(static_cast<std::size_t>(c->size));
  for (int i = 0; i < c->size; ++i) {
    displs[static_cast<std::size_t>(i)] = static_cast<int>(total);
    total += rcounts[i];
  }
  // Reduce everything to rank 0, then scatter the blocks.
  TypedBuf all(*t, total);
  const void* src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
  AUGUR_ERR_RETURN(reduce_tree(src, all.ptr(), total, th, op, 0, c));
  return scatterv_impl(all.ptr(), rcounts, displs.data(), th, rbuf, rcounts[c->rank], th, 0, c);
}

Err scan_impl(const void* sbuf, void* rbuf, std::int64_t count, MPI_Datatype th, MPI_Op op, const CommPtr& c,
              bool exclusive) {
  const TypePtr t = type_ptr(th);
  const int n = c->size, me = c->rank;
  TypedBuf partial(*t, count), tmp(*t, count), result(*t, count);
  AUGUR_ERR_RETURN(copy_typed(sbuf == MPI_IN_PLACE ? rbuf : sbuf, partial.ptr(), count, *t));
  bool have = !exclusive;
  if (have) AUGUR_ERR_RETURN(copy_typed(partial.ptr(), result.ptr(), count, *t));
  for (int mask = 1; mask < n; mask <<= 1) {
    const int dst = me ^ mask;
    if (dst >= n) continue;
    AUGUR_ERR_RETURN(coll_sendrecv(partial.ptr(), count, t, dst, tmp.ptr(), count, t, dst, kScan, c));
    if (dst < me) {  // tmp holds lower ranks
      if (have) {
        apply_op(op, tmp.ptr(), result.ptr(), count, th, *t);
      } else {
        AUGUR_ERR_RETURN(copy_typed(tmp.ptr(), result.ptr(), count, *t));
        have = true;
      }
      apply_op(op, tmp.ptr(), partial.ptr(), count, th, *t);
    } else {
      combine_after(op, partial, tmp, count, th, *t);
    }
  }
  if (have && !(exclusive && me == 0)) return copy_typed(result.ptr(), rbuf, count, *t);
  return ok();
}

}  // namespace

AUGUR_MPI_FN(int, Barrier, (MPI_Comm comm), (comm)) {
  AUGUR_MPI_CHECK(comm, "MPI_Barrier", check_coll(comm));
  AUGUR_MPI_CHECK(comm, "MPI_Barrier", check_signature({CollKind::kBarrier}, comm_ptr(comm)));
  AUGUR_MPI_CHECK(comm, "MPI_Barrier", barrier_impl(comm_ptr(comm)));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Bcast, (void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm),
             (buffer, count, datatype, root, comm)) {
  const char* fn = "MPI_Bcast";
  AUGUR_MPI_CHECK(comm, fn, check_coll(comm));
  AUGUR_MPI_CHECK(comm, fn, check_data(buffer, count, datatype));
  CommPtr c = comm_ptr(comm);
  AUGUR_MPI_CHECK(comm, fn, check_root(root, *c));
  AUGUR_MPI_CHECK(comm, fn, check_signature({CollKind::kBcast, root, -1, bytes_sig(count, datatype)}, c));
  AUGUR_MPI_CHECK(comm, fn, bcast_tree(buffer, count, type_ptr(datatype), root, c));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Reduce,
             (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm),
             (sendbuf, recvbuf, count, datatype, op, root, comm)) {
  const char* fn = "MPI_Reduce";
  AUGUR_MPI_CHECK(comm, fn, check_coll(comm));
  CommPtr c = comm_ptr(comm);
  AUGUR_MPI_CHECK(comm, fn, check_root(root, *c));
  AUGUR_MPI_CHECK(comm, fn, check_data(sendbuf, count, datatype));
  if (c->rank == root) AUGUR_MPI_CHECK(comm, fn, check_data(recvbuf, count, datatype));
  AUGUR_MPI_CHECK(comm, fn, check_op(op, *type_of(datatype)));
  AUGUR_MPI_CHECK(comm, fn, check_signature({CollKind::kReduce, root, op_sig(op), bytes_sig(count, datatype)}, c));
  const void* src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  AUGUR_MPI_CHECK(comm, fn, reduce_tree(src, recvbuf, count, datatype, op, root, c));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Allreduce,
             (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
             (sendbuf, recvbuf, count, datatype, op, comm)) {
  const char* fn = "MPI_Allreduce";
  AUGUR_MPI_CHECK(comm, fn, check_coll(comm));
  AUGUR_MPI_CHECK(comm, fn, check_data(sendbuf, count, datatype));
  AUGUR_MPI_CHECK(comm, fn, check_data(recvbuf, count, datatype));
  AUGUR_MPI_CHECK(comm, fn, check_op(op, *type_of(datatype)));
  AUGUR_MPI_CHECK(comm, fn, check_signature({CollKind::kAllreduce, -1, op_sig(op), bytes_sig(count, datatype)}, comm_ptr(comm)));
  const void* src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  AUGUR_MPI_CHECK(comm, fn, allreduce_impl(src, recvbuf, count, datatype, op, comm_ptr(comm)));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Gatherv,
             (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
              const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm),
             (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm)) {
  const char* fn = "MPI_Gatherv";
  AUGUR_MPI_CHECK(comm, fn, check_coll(comm));
  CommPtr c = comm_ptr(comm);
  AUGUR_MPI_CHECK(comm, fn, check_root(root, *c));
  if (!(c->rank == root && sendbuf == MPI_IN_PLACE)) AUGUR_MPI_CHECK(comm, fn, check_data(sendbuf, sendcount, sendtype));
  if (c->rank == root) {
    AUGUR_MPI_CHECK(comm, fn, check_type(recvtype));
    AUGUR_MPI_CHECK(comm, fn, check_counts_displs(recvcounts, displs, c->size, recvtype));
  }
  AUGUR_MPI_CHECK(comm, fn, check_signature({CollKind::kGatherv, root}, c));
  AUGUR_MPI_CHECK(comm, fn, gatherv_impl(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, c));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Gather,
             (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              MPI_Datatype recvtype, int root, MPI_Comm comm),
             (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm)) {
  const char* fn = "MPI_Gather";
  AUGUR_MPI_CHECK(comm, fn, check_coll(comm));
  CommPtr c = comm_ptr(comm);
  AUGUR_MPI_CHECK(comm, fn, check_root(root, *c));
  if (!(c->rank == root && sendbuf == MPI_IN_PLACE)) AUGUR_MPI_CHECK(comm, fn, check_data(sendbuf, sendcount, sendtype));
  if (c->rank == root) AUGUR_MPI_CHECK(comm, fn, check_data(recvbuf, recvcount, recvtype));
  AUGUR_MPI_CHECK(comm, fn, check_signature({CollKind::kGather, root, -1,
                                              c->rank == root ? bytes_sig(recvcount, recvtype) : bytes_sig(sendcount, sendtype)}, c));
  CollScope scope;
  std::vector<int> counts, displs;
  AUGUR_MPI_CHECK(comm, fn, uniform(c->size, recvcount, &counts, &displs));
  AUGUR_MPI_CHECK(comm, fn, gatherv_impl(sendbuf, sendcount, sendtype, recvbuf, counts.data(), displs.data(), recvtype, root, c));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Scatterv,
             (const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
             (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm)) {
  const char* fn = "MPI_Scatterv";
  AUGUR_MPI_CHECK(comm, fn, check_coll(comm));
  CommPtr c = comm_ptr(comm);
  AUGUR_MPI_CHECK(comm, fn, check_root(root, *c));
  if (!(c->rank == root && recvbuf == MPI_IN_PLACE)) AUGUR_MPI_CHECK(comm, fn, check_data(recvbuf, recvcount, recvtype));
  if (c->rank == root) {
    AUGUR_MPI_CHECK(comm, fn, check_type(sendtype));
    AUGUR_MPI_CHECK(comm, fn, check_counts_displs(sendcounts, displs, c->size, sendtype));
  }
  AUGUR_MPI_CHECK(comm, fn, check_signature({CollKind::kScatterv, root}, c));
  AUGUR_MPI_CHECK(comm, fn, scatterv_impl(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, c));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Scatter,
             (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              MPI_Datatype recvtype, int root, MPI_Comm comm),
             (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm)) {
  const char* fn = "MPI_Scatter";
  AUGUR_MPI_CHECK(comm, fn, check_coll(comm));
  CommPtr c = comm_ptr(comm);
  AUGUR_MPI_CHECK(comm, fn, check_root(root, *c));
  if (!(c->rank == root && recvbuf == MPI_IN_PLACE)) AUGUR_MPI_CHECK(comm, fn, check_data(recvbuf, recvcount, recvtype));
  if (c->rank == root) AUGUR_MPI_CHECK(comm, fn, check_data(sendbuf, sendcount, sendtype));
  AUGUR_MPI_CHECK(comm, fn, check_signature({CollKind::kScatter, root, -1,
                                              c->rank == root ? bytes_sig(sendcount, sendtype) : bytes_sig(recvcount, recvtype)}, c));
  CollScope scope;
  std::vector<int> counts, displs;
  AUGUR_MPI_CHECK(comm, fn, uniform(c->size, sendcount, &counts, &displs));
  AUGUR_MPI_CHECK(comm, fn, scatterv_impl(sendbuf, counts.data(), displs.data(), sendtype, recvbuf, recvcount, recvtype, root, c));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Allgather,
             (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              MPI_Datatype recvtype, MPI_Comm comm),
             (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm)) {
  const char* fn = "MPI_Allgather";
  AUGUR_MPI_CHECK(comm, fn, check_coll(comm));
  if (sendbuf != MPI_IN_PLACE) AUGUR_MPI_CHECK(comm, fn, check_data(sendbuf, sendcount, sendtype));
  AUGUR_MPI_CHECK(comm, fn, check_data(recvbuf, recvcount, recvtype));
  AUGUR_MPI_CHECK(comm, fn, check_signature({CollKind::kAllgather, -1, -1, bytes_sig(recvcount, recvtype)}, comm_ptr(comm)));
  AUGUR_MPI_CHECK(comm, fn, allgather_impl(sendbuf, sendcount, type_ptr(sendbuf == MPI_IN_PLACE ? recvtype : sendtype),
                                           recvbuf, recvcount, type_ptr(recvtype), comm_ptr(comm)));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Allgatherv,
             (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
              const int displs[], MPI_Datatype recvtype, MPI_Comm comm),
             (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm)) {
  const char* fn = "MPI_Allgatherv";
  AUGUR_MPI_CHECK(comm, fn, check_coll(comm));
  CommPtr c = comm_ptr(comm);
  if (sendbuf != MPI_IN_PLACE) AUGUR_MPI_CHECK(comm, fn, check_data(sendbuf, sendcount, sendtype));
  AUGUR_MPI_CHECK(comm, fn, check_type(recvtype));
  AUGUR_MPI_CHECK(comm, fn, check_counts_displs(recvcounts, displs, c->size, recvtype));
  AUGUR_MPI_CHECK(comm, fn, check_signature({CollKind::kAllgatherv}, c));
  const TypePtr rt = type_ptr(recvtype);
  auto* base = static_cast<std::byte*>(recvbuf);
  const int n = c->size, me = c->rank;
  auto at = [&](int i) { return base + static_cast<std::int64_t>(displs[i]) * rt->extent; };
  if (sendbuf != MPI_IN_PLACE) {
    AUGUR_MPI_CHECK(comm, fn, local_copy(sendbuf, sendcount, *type_of(sendtype), at(me), recvcounts[me], *rt));
  }
  for (int s = 0; s < n - 1; ++s) {
    const int sb = (me - s + n) % n, rb = (me - s - 1 + 2 * n) % n;
    AUGUR_MPI_CHECK(comm, fn, coll_sendrecv(at(sb), recvcounts[sb], rt, (me + 1) % n, at(rb), recvcounts[rb], rt,
                                            (me + n - 1) % n, kAllgather, c));
  }
  return MPI_SUCCESS;
}

namespace {
Err alltoallv_impl(const void* sbuf, const int* scounts, const int* sdispls, MPI_Datatype stype, void* rbuf,
                   const int* rcounts, const int* rdispls, MPI_Datatype rtype, const CommPtr& c) {
  const TypePtr st = type_ptr(stype), rt = type_ptr(rtype);
  const int n = c->size, me = c->rank;
  const auto* sb = static_cast<const std::byte*>(sbuf);
  auto* rb = static_cast<std::byte*>(rbuf);
  auto sat = [&](int i) { return sb + static_cast<std::int64_t>(sdispls[i]) * st->extent; };
  auto rat = [&](int i) { return rb + static_cast<std::int64_t>(rdispls[i]) * rt->extent; };
  AUGUR_ERR_RETURN(local_copy(sat(me), scounts[me], *st, rat(me), rcounts[me], *rt));
  // Pairwise exchange: step i sends to me+i and receives from me-i, so no rank is flooded.
  for (int i = 1; i < n; ++i) {
    const int to = (me + i) % n, from = (me - i + n) % n;
    AUGUR_ERR_RETURN(coll_sendrecv(sat(to), scounts[to], st, to, rat(from), rcounts[from], rt, from, kAlltoall, c));
  }
  return ok();
}
}  // namespace

AUGUR_MPI_FN(int, Alltoallv,
             (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
              const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm),
             (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm)) {
  const char* fn = "MPI_Alltoallv";
  AUGUR_MPI_CHECK(comm, fn, check_coll(comm));
  CommPtr c = comm_ptr(comm);
  AUGUR_MPI_CHECK(comm, fn, check_type(recvtype));
  AUGUR_MPI_CHECK(comm, fn, check_counts_displs(recvcounts, rdispls, c->size, recvtype));
  AUGUR_MPI_CHECK(comm, fn, check_signature({CollKind::kAlltoallv}, c));
  if (sendbuf == MPI_IN_PLACE) {
    // Send from a copy of the receive buffer.
    const Type& rt = *type_of(recvtype);
    std::int64_t hi = 0;
    for (int i = 0; i < c->size; ++i) hi = std::max<std::int64_t>(hi, rdispls[i] + recvcounts[i]);
    TypedBuf copy(rt, hi);
    AUGUR_MPI_CHECK(comm, fn, local_copy(recvbuf, hi, rt, copy.ptr(), hi, rt));
    AUGUR_MPI_CHECK(comm, fn, alltoallv_impl(copy.ptr(), recvcounts, rdispls, recvtype, recvbuf, recvcounts, rdispls, recvtype, c));
    return MPI_SUCCESS;
  }
  AUGUR_MPI_CHECK(comm, fn, check_type(sendtype));
  AUGUR_MPI_CHECK(comm, fn, check_counts_displs(sendcounts, sdispls, c->size, sendtype));
  AUGUR_MPI_CHECK(comm, fn, alltoallv_impl(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, c));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Alltoall,
             (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              MPI_Datatype recvtype, MPI_Comm comm),
             (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm)) {
  const char* fn = "MPI_Alltoall";
  AUGUR_MPI_CHECK(comm, fn, check_coll(comm));
  CommPtr c = comm_ptr(comm);
  if (sendbuf != MPI_IN_PLACE) AUGUR_MPI_CHECK(comm, fn, check_data(sendbuf, sendcount, sendtype));
  AUGUR_MPI_CHECK(comm, fn, check_data(recvbuf, recvcount, recvtype));
  AUGUR_MPI_CHECK(comm, fn, check_signature({CollKind::kAlltoall, -1, -1, bytes_sig(recvcount, recvtype)}, c));
  CollScope scope;
  std::vector<int> sc, sd, rc, rd;
  AUGUR_MPI_CHECK(comm, fn, uniform(c->size, sendcount, &sc, &sd));
  AUGUR_MPI_CHECK(comm, fn, uniform(c->size, recvcount, &rc, &rd));
  return PMPI_Alltoallv(sendbuf, sc.data(), sd.data(), sendtype, recvbuf, rc.data(), rd.data(), recvtype, comm);
}

AUGUR_MPI_FN(int, Reduce_scatter,
             (const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
             (sendbuf, recvbuf, recvcounts, datatype, op, comm)) {
  const char* fn = "MPI_Reduce_scatter";
  AUGUR_MPI_CHECK(comm, fn, check_coll(comm));
  CommPtr c = comm_ptr(comm);
  AUGUR_MPI_CHECK(comm, fn, check_type(datatype));
  if (recvcounts == nullptr) return raise(comm, fn, err(MPI_ERR_ARG, "null recvcounts"));
  std::int64_t total = 0;
  for (int i = 0; i < c->size; ++i) {
    AUGUR_MPI_CHECK(comm, fn, check_count(recvcounts[i]));
    total += recvcounts[i];
  }
  // Reduced as one block of the total, addressed by int displacements (reduce_scatter_impl).
  if (total > std::numeric_limits<int>::max()) {
    return raise(comm, fn, err(MPI_ERR_COUNT, "the receive counts add up to " + std::to_string(total) +
                                                  " elements, more than augur's collectives address (2^31 - 1)"));
  }
  AUGUR_MPI_CHECK(comm, fn, check_bytes(total, *type_of(datatype)));
  AUGUR_MPI_CHECK(comm, fn, check_op(op, *type_of(datatype)));
  AUGUR_MPI_CHECK(comm, fn, check_signature({CollKind::kReduceScatter, -1, op_sig(op)}, c));
  AUGUR_MPI_CHECK(comm, fn, reduce_scatter_impl(sendbuf, recvbuf, recvcounts, datatype, op, c));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Reduce_scatter_block,
             (const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
             (sendbuf, recvbuf, recvcount, datatype, op, comm)) {
  const char* fn = "MPI_Reduce_scatter_block";
  AUGUR_MPI_CHECK(comm, fn, check_coll(comm));
  AUGUR_MPI_CHECK(comm, fn, check_count(recvcount));
  AUGUR_MPI_CHECK(comm, fn, check_type(datatype));
  AUGUR_MPI_CHECK(comm, fn, check_signature({CollKind::kReduceScatter, -1, op_sig(op), bytes_sig(recvcount, datatype)}, comm_ptr(comm)));
  CollScope scope;
  const std::vector<int> counts(static_cast<std::size_t>(comm_of(comm)->size), recvcount);
  return PMPI_Reduce_scatter(sendbuf, recvbuf, counts.data(), datatype, op, comm);
}

AUGUR_MPI_FN(int, Scan,
             (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
             (sendbuf, recvbuf, count, datatype, op, comm)) {
  const char* fn = "MPI_Scan";
  AUGUR_MPI_CHECK(comm, fn, check_coll(comm));
  AUGUR_MPI_CHECK(comm, fn, check_data(sendbuf, count, datatype));
  AUGUR_MPI_CHECK(comm, fn, check_data(recvbuf, count, datatype));
  AUGUR_MPI_CHECK(comm, fn, check_op(op, *type_of(datatype)));
  AUGUR_MPI_CHECK(comm, fn, check_signature({CollKind::kScan, -1, op_sig(op), bytes_sig(count, datatype)}, comm_ptr(comm)));
  AUGUR_MPI_CHECK(comm, fn, scan_impl(sendbuf, recvbuf, count, datatype, op, comm_ptr(comm), false));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Exscan,
             (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
             (sendbuf, recvbuf, count, datatype, op, comm)) {
  const char* fn = "MPI_Exscan";
  AUGUR_MPI_CHECK(comm, fn, check_coll(comm));
  AUGUR_MPI_CHECK(comm, fn, check_data(sendbuf, count, datatype));
  AUGUR_MPI_CHECK(comm, fn, check_data(recvbuf, count, datatype));
  AUGUR_MPI_CHECK(comm, fn, check_op(op, *type_of(datatype)));
  AUGUR_MPI_CHECK(comm, fn, check_signature({CollKind::kExscan, -1, op_sig(op), bytes_sig(count, datatype)}, comm_ptr(comm)));
  AUGUR_MPI_CHECK(comm, fn, scan_impl(sendbuf, recvbuf, count, datatype, op, comm_ptr(comm), true));
  return MPI_SUCCESS;
}

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
