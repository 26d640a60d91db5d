// Datatypes: the predefined types and the derived-type constructors, built as relations/
// Datatype trees; pack/unpack by relations/ executors over encoded relations cached per type and
// count.
#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <limits>
#include <mutex>
#include <numeric>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "augur/relations/cache.h"
#include "augur/relations/encoding.h"
#include "augur/relations/executor.h"
#include "shim.h"

namespace augur::mpi {

bool is_pair(Elem e) { return e >= Elem::kFloatInt; }

std::int64_t elem_size(Elem e) {
  switch (e) {
    case Elem::kChar: case Elem::kI8: case Elem::kU8: case Elem::kBool: case Elem::kByte: return 1;
    case Elem::kI16: case Elem::kU16: return 2;
    case Elem::kI32: case Elem::kU32: case Elem::kF32: case Elem::kWchar: return 4;
    case Elem::kI64: case Elem::kU64: case Elem::kF64: case Elem::kC32: return 8;
    case Elem::kLD: case Elem::kC64: return 16;
    case Elem::kCLD: return 32;
    default: return 0;  // mixed and pairs: not a fixed-size element run
  }
}

Err Type::prepare() {
  if (committed) return ok();
  auto r = dt.Flatten(1);
  if (!r.ok()) return err(MPI_ERR_TYPE, r.status().to_string());
  runs = std::move(r.value());
  contig = size == 0 || (runs.size() == 1 && runs[0].length == size && extent == size);
  if (!runs.empty()) {
    runs_lb = runs[0].offset;
    for (const auto& run : runs) runs_lb = std::min(runs_lb, run.offset);
    std::int64_t g = extent;
    for (const auto& run : runs) g = std::gcd(g, std::gcd(run.offset - runs_lb, run.length));
    grain = g == 0 ? 1 : g;
  }
  committed = true;
  return ok();
}

namespace {

namespace rel = relations;

// Bound on the encodings kept (LRU beyond it).
constexpr std::uint64_t kRelationCacheBytes = std::uint64_t{64} << 20;
// Elements one relation is built with (16 bytes each while the inspector runs): more copies go
// as chunks, each the same cached relation at a shifted base. 2^18: a chunk is packed in well
// under a millisecond, so chunking costs nothing measurable, while the first call's inspection
// and measured choice of encoding stay bounded (4 MiB of tuples).
constexpr std::int64_t kChunkElems = std::int64_t{1} << 18;
// Scratch bytes the measured choice of encoding may use (typed, packed and target copies).
constexpr std::uint64_t kMeasureScratchBytes = std::uint64_t{32} << 20;

// The pack and unpack relations of `count` copies of a type, encoded for speed and cached by
// (type object, direction, count); a type's entries are erased when the object goes.
class Relations {
 public:
  static Relations& get() {
    static auto* r = new Relations;  // never destroyed: types may outlive static destructors
    return *r;
  }

  Result<const rel::EncodedRelation*> find(const Type& t, std::int64_t count, bool pack) {
    Type::Memo& m = t.memo[pack ? 1 : 0];
    if (m.count != count || !m.rel) {
      AUGUR_ASSIGN_OR_RETURN(m.rel, lookup(t, count, pack));
      m.count = count;
    }
    return m.rel.get();
  }

  Result<rel::RelationCache::Entry> lookup(const Type& t, std::int64_t count, bool pack) {
    std::string key = std::to_string(t.key.id()) + (pack ? "p" : "u") + std::to_string(count);
    if (auto hit = cache_.Find(key)) return hit;
    AUGUR_ASSIGN_OR_RETURN(rel::TypedRelation tr, pack ? rel::PackRelation(t.dt, count) : rel::UnpackRelation(t.dt, count));
    if (tr.relation.payload_bytes() != static_cast<std::uint64_t>(count * t.size) ||
        (count > 0 && tr.base_bytes != layout_lb(t, count))) {
      return Status(Code::kInternal, "relation of a datatype disagrees with its flattened type map");
    }
    // Measured: the decode-step heuristic picks NESTED for irregular blocks where AABLK runs 1.7x
    // faster (docs/relations.md). Too large to measure on scratch copies: the heuristic.
    Result<rel::EncodedRelation> enc = rel::EncodeFastestMeasured(tr.relation, 3, kMeasureScratchBytes);
    if (!enc.ok() && enc.status().code() == Code::kResourceExhausted) {
      enc = rel::EncodeAuto(tr.relation, rel::Goal::kFastest);
    }
    AUGUR_ASSIGN_OR_RETURN(rel::EncodedRelation e, std::move(enc));
    if (e.size_bytes() > cache_.max_bytes()) return std::make_shared<const rel::EncodedRelation>(std::move(e));
    Result<rel::RelationCache::Entry> in = cache_.Insert(key, std::move(e));
    if (!in.ok()) return in;
    std::lock_guard<std::mutex> lock(mu_);
    keys_[t.key.id()].insert(std::move(key));
    return in;
  }

  void forget(std::uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = keys_.find(id);
    if (it == keys_.end()) return;
    for (const std::string& k : it->second) cache_.Erase(k);
    keys_.erase(it);
  }

  // Bytes from the buffer pointer to the lowest byte `count` copies touch.
  static std::int64_t layout_lb(const Type& t, std::int64_t count) {
    return t.runs_lb + std::min<std::int64_t>(0, (count - 1) * t.extent);
  }

  // Copies per relation: all of them unless that relation would pass kChunkElems elements.
  static std::int64_t chunk(const Type& t, std::int64_t count) {
    const std::int64_t per_copy = std::max<std::int64_t>(1, t.size / t.grain);
    return std::clamp<std::int64_t>(kChunkElems / per_copy, 1, count);
  }

 private:
  rel::RelationCache cache_{kRelationCacheBytes};
  std::mutex mu_;
  std::unordered_map<std::uint64_t, std::unordered_set<std::string>> keys_;
};

std::atomic<std::uint64_t> next_relation_key{1};

Err type_error(const Status& s) { return err(MPI_ERR_TYPE, s.to_string()); }

}  // namespace

RelationKey::RelationKey() : id_(next_relation_key.fetch_add(1, std::memory_order_relaxed)) {}
RelationKey::RelationKey(const RelationKey&) : RelationKey() {}
RelationKey& RelationKey::operator=(const RelationKey& other) {
  if (this != &other) Relations::get().forget(id_);  // the object now describes another type
  return *this;
}
RelationKey::~RelationKey() { Relations::get().forget(id_); }

Err pack(const void* buf, std::int64_t count, const Type& t, std::byte* out) {
  if (t.size == 0 || count <= 0) return ok();
  const auto* base = static_cast<const std::byte*>(buf);
  if (t.contig) {  // one element of count*size bytes: the relation would be this memcpy
    std::memcpy(out, base + t.runs[0].offset, static_cast<std::size_t>(count * t.size));
    return ok();
  }
  const std::int64_t chunk = Relations::chunk(t, count);
  for (std::int64_t k = 0; k < count; k += chunk) {
    const std::int64_t n = std::min(chunk, count - k);
    auto e = Relations::get().find(t, n, true);
    if (!e.ok()) return type_error(e.status());
    const rel::EncodedRelation& r = **e;
    const std::byte* from = base + k * t.extent + Relations::layout_lb(t, n);
    const Status s = rel::Pack(r, {from, r.src_extent() * r.elem_size()}, {out, r.payload_bytes()});
    if (!s.ok()) return from_status(s);
    out += n * t.size;
  }
  return ok();
}

Err unpack(const std::byte* in, std::size_t nbytes, void* buf, std::int64_t count, const Type& t) {
  if (t.size == 0 || count <= 0 || nbytes == 0) return ok();
  auto* base = static_cast<std::byte*>(buf);
  if (t.contig) {
    const auto n = std::min(nbytes, static_cast<std::size_t>(count * t.size));
    std::memcpy(base + t.runs[0].offset, in, n);
    return ok();
  }
  const std::int64_t whole = std::min(count, static_cast<std::int64_t>(nbytes / static_cast<std::size_t>(t.size)));
  const std::int64_t chunk = whole > 0 ? Relations::chunk(t, whole) : 1;
  for (std::int64_t k = 0; k < whole; k += chunk) {
    const std::int64_t n = std::min(chunk, whole - k);
    auto e = Relations::get().find(t, n, false);
    if (!e.ok()) return type_error(e.status());
    const rel::EncodedRelation& r = **e;
    std::byte* to = base + k * t.extent + Relations::layout_lb(t, n);
    const Status s = rel::Unpack(r, {in, r.payload_bytes()}, {to, r.dst_extent() * r.elem_size()});
    if (!s.ok()) return from_status(s);
    in += n * t.size;
  }
  // A short message ends inside copy `whole`: the leading bytes of its type map.
  const std::size_t rest = whole < count ? nbytes - static_cast<std::size_t>(whole * t.size) : 0;
  if (rest == 0) return ok();
  auto e = Relations::get().find(t, 1, false);
  if (!e.ok()) return type_error(e.status());
  const rel::EncodedRelation& r = **e;
  std::byte* to = base + whole * t.extent + Relations::layout_lb(t, 1);
  return from_status(rel::UnpackPrefix(r, {in, rest}, {to, r.dst_extent() * r.elem_size()}));
}

TypedBuf::TypedBuf(const Type& t, std::int64_t count) {
  const std::int64_t span = count <= 0 ? 0 : (count - 1) * t.extent + t.true_extent;
  mem_.resize(static_cast<std::size_t>(span > 0 ? span : 1));
  ptr_ = mem_.data() - t.true_lb;
}

Err check_bytes(std::int64_t count, const Type& t) {
  std::int64_t n = 0;
  const bool overflows = __builtin_mul_overflow(count, t.size, &n);
  if (overflows || n > kMaxMessageBytes) {
    return err(MPI_ERR_COUNT, "count " + std::to_string(count) + " of a datatype of " + std::to_string(t.size) +
                                  " bytes is " + (overflows ? std::string("more than 2^63") : std::to_string(n)) +
                                  " bytes: one message carries at most 4294967295 (4 GiB - 1)");
  }
  return ok();
}

Err local_copy(const void* src, std::int64_t count, const Type& st, void* dst, std::int64_t rcount, const Type& rt) {
  const std::int64_t n = count * st.size;
  if (n > rcount * rt.size) return err(MPI_ERR_TRUNCATE, "local copy of " + std::to_string(n) + " bytes into " +
                                                             std::to_string(rcount * rt.size));
  std::vector<std::byte> tmp(static_cast<std::size_t>(n));
  AUGUR_ERR_RETURN(pack(src, count, st, tmp.data()));
  return unpack(tmp.data(), tmp.size(), dst, rcount, rt);
}

namespace {

TypePtr make_type(relations::Datatype dt, Elem elem, std::int64_t nelems) {
  auto t = std::make_shared<Type>(std::move(dt));
  t->elem = elem;
  t->nelems = nelems;
  t->size = t->dt.size();
  t->lb = t->dt.lb();
  t->extent = t->dt.extent();
  t->true_lb = t->dt.true_lb();
  t->true_extent = t->dt.true_extent();
  return t;
}

struct Predef {
  MPI_Datatype handle;
  const char* name;
  std::int64_t size;
  std::int64_t align;
  Elem elem;
};

constexpr Predef kPredef[] = {
    {MPI_CHAR, "MPI_CHAR", 1, 1, Elem::kChar},
    {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1, 1, Elem::kI8},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1, 1, Elem::kU8},
    {MPI_BYTE, "MPI_BYTE", 1, 1, Elem::kByte},
    {MPI_WCHAR, "MPI_WCHAR", 4, 4, Elem::kWchar},
    {MPI_SHORT, "MPI_SHORT", 2, 2, Elem::kI16},
    {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", 2, 2, Elem::kU16},
    {MPI_INT, "MPI_INT", 4, 4, Elem::kI32},
    {MPI_UNSIGNED, "MPI_UNSIGNED", 4, 4, Elem::kU32},
    {MPI_LONG, "MPI_LONG", 8, 8, Elem::kI64},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", 8, 8, Elem::kU64},
    {MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", 8, 8, Elem::kI64},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", 8, 8, Elem::kU64},
    {MPI_FLOAT, "MPI_FLOAT", 4, 4, Elem::kF32},
    {MPI_DOUBLE, "MPI_DOUBLE", 8, 8, Elem::kF64},
    {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", 16, 16, Elem::kLD},
    {MPI_INT8_T, "MPI_INT8_T", 1, 1, Elem::kI8},
    {MPI_INT16_T, "MPI_INT16_T", 2, 2, Elem::kI16},
    {MPI_INT32_T, "MPI_INT32_T", 4, 4, Elem::kI32},
    {MPI_INT64_T, "MPI_INT64_T", 8, 8, Elem::kI64},
    {MPI_UINT8_T, "MPI_UINT8_T", 1, 1, Elem::kU8},
    {MPI_UINT16_T, "MPI_UINT16_T", 2, 2, Elem::kU16},
    {MPI_UINT32_T, "MPI_UINT32_T", 4, 4, Elem::kU32},
    {MPI_UINT64_T, "MPI_UINT64_T", 8, 8, Elem::kU64},
    {MPI_C_BOOL, "MPI_C_BOOL", 1, 1, Elem::kBool},
    {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", 8, 4, Elem::kC32},
    {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 16, 8, Elem::kC64},
    {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", 32, 16, Elem::kCLD},
    {MPI_AINT, "MPI_AINT", 8, 8, Elem::kI64},
    {MPI_OFFSET, "MPI_OFFSET", 8, 8, Elem::kI64},
    {MPI_COUNT, "MPI_COUNT", 8, 8, Elem::kI64},
    {MPI_PACKED, "MPI_PACKED", 1, 1, Elem::kByte},
    {MPI_INTEGER, "MPI_INTEGER", 4, 4, Elem::kI32},
    {MPI_REAL, "MPI_REAL", 4, 4, Elem::kF32},
    {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8, 8, Elem::kF64},
    {MPI_COMPLEX, "MPI_COMPLEX", 8, 4, Elem::kC32},
    {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16, 8, Elem::kC64},
    {MPI_LOGICAL, "MPI_LOGICAL", 4, 4, Elem::kI32},
    {MPI_CHARACTER, "MPI_CHARACTER", 1, 1, Elem::kChar},
    {MPI_INTEGER1, "MPI_INTEGER1", 1, 1, Elem::kI8},
    {MPI_INTEGER2, "MPI_INTEGER2", 2, 2, Elem::kI16},
    {MPI_INTEGER4, "MPI_INTEGER4", 4, 4, Elem::kI32},
    {MPI_INTEGER8, "MPI_INTEGER8", 8, 8, Elem::kI64},
    {MPI_REAL4, "MPI_REAL4", 4, 4, Elem::kF32},
    {MPI_REAL8, "MPI_REAL8", 8, 8, Elem::kF64},
    {MPI_CXX_BOOL, "MPI_CXX_BOOL", 1, 1, Elem::kBool},
};

struct Pair {
  MPI_Datatype handle;
  const char* name;
  std::int64_t vsize;  // value
  std::int64_t isize;  // index (or second value)
  std::int64_t ioff;
  Elem elem;
};
constexpr Pair kPairs[] = {
    {MPI_FLOAT_INT, "MPI_FLOAT_INT", 4, 4, 4, Elem::kFloatInt},
    {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", 8, 4, 8, Elem::kDoubleInt},
    {MPI_LONG_INT, "MPI_LONG_INT", 8, 4, 8, Elem::kLongInt},
    {MPI_2INT, "MPI_2INT", 4, 4, 4, Elem::k2Int},
    {MPI_SHORT_INT, "MPI_SHORT_INT", 2, 4, 4, Elem::kShortInt},
    {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", 16, 4, 16, Elem::kLDInt},
    {MPI_2INTEGER, "MPI_2INTEGER", 4, 4, 4, Elem::k2Int},
    {MPI_2REAL, "MPI_2REAL", 4, 4, 4, Elem::k2Float},
    {MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", 8, 8, 8, Elem::k2Double},
};

void set_slot(MPI_Datatype h, TypePtr t) {
  auto& v = S().types;
  if (v.size() <= static_cast<std::size_t>(h)) v.resize(static_cast<std::size_t>(h) + 1);
  v[static_cast<std::size_t>(h)] = std::move(t);
}

}  // namespace

void init_predefined_types() {
  S().types.clear();
  for (const Predef& p : kPredef) {
    auto t = make_type(relations::Datatype::Base(p.size, p.align).value(), p.elem, 1);
    t->predefined = true;
    t->handle = p.handle;
    t->name = p.name;
    (void)t->prepare();
    set_slot(p.handle, std::move(t));
  }
  for (const Pair& p : kPairs) {
    const std::int64_t bl[] = {1, 1};
    const std::int64_t disp[] = {0, p.ioff};
    const relations::Datatype parts[] = {relations::Datatype::Base(p.vsize).value(),
                                         relations::Datatype::Base(p.isize).value()};
    auto t = make_type(relations::Datatype::Struct(bl, disp, parts).value(), p.elem, 2);
    t->predefined = true;
    t->handle = p.handle;
    t->name = p.name;
    (void)t->prepare();
    set_slot(p.handle, std::move(t));
  }
  // MPI_UB / MPI_LB (deprecated) stay null handles: check_type rejects them.
  if (S().types.size() <= static_cast<std::size_t>(MPI_LB)) S().types.resize(static_cast<std::size_t>(MPI_LB) + 1);
  // Derived types start after a gap, so a stale small number is not mistaken for one.
  if (S().types.size() < 64) S().types.resize(64);
}

}  // namespace augur::mpi

using namespace augur::mpi;
namespace rel = augur::relations;

namespace {

Elem combine(Elem a, Elem b) { return a == b ? a : Elem::kMixed; }

int finish_new(const char* fn, augur::Result<rel::Datatype> dt, Elem elem, std::int64_t nelems,
               MPI_Datatype* newtype, Type::Envelope env) {
  if (!dt.ok()) return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_ARG, dt.status().to_string()));
  TypePtr t = make_type(std::move(dt.value()), elem, nelems);
  t->env = std::move(env);
  *newtype = new_type(std::move(t));
  return MPI_SUCCESS;
}

// An envelope: the combiner, the integer arguments (arrays appended in order), the addresses.
template <typename... Arrays>
std::vector<int> ints_of(std::initializer_list<int> head, const Arrays&... arrays) {
  std::vector<int> v(head);
  (v.insert(v.end(), arrays.first, arrays.first + arrays.second), ...);
  return v;
}
std::pair<const int*, int> arr(const int* p, int n) { return {p, n}; }

}  // namespace

#define TYPE_PROLOGUE(fn, oldtype, newtype)                                               \
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_running());                                   \
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_type(oldtype, false));                        \
  if ((newtype) == nullptr) return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_ARG, "null newtype")); \
  const Type& old = *type_of(oldtype)

namespace {
Err check_counts(int count, const int* blocklens, const void* displs) {
  if (count < 0) return err(MPI_ERR_COUNT, "negative count " + std::to_string(count));
  if (count > 0 && (displs == nullptr)) return err(MPI_ERR_ARG, "null displacement array");
  if (blocklens != nullptr) {
    for (int i = 0; i < count; ++i) {
      if (blocklens[i] < 0) return err(MPI_ERR_ARG, "negative block length " + std::to_string(blocklens[i]));
    }
  } else if (count > 0) {
    return err(MPI_ERR_ARG, "null block length array");
  }
  return ok();
}
std::vector<std::int64_t> widen(const int* v, int n) { return std::vector<std::int64_t>(v, v + n); }
std::vector<std::int64_t> widen(const MPI_Aint* v, int n) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(v[i]);
  return out;
}
std::int64_t sum(const std::vector<std::int64_t>& v) {
  std::int64_t s = 0;
  for (auto x : v) s += x;
  return s;
}
}  // namespace

AUGUR_MPI_FN(int, Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype* newtype),
             (count, oldtype, newtype)) {
  TYPE_PROLOGUE("MPI_Type_contiguous", oldtype, newtype);
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_contiguous", check_count(count));
  return finish_new("MPI_Type_contiguous", rel::Datatype::Contiguous(count, old.dt), old.elem, count * old.nelems,
                    newtype, {MPI_COMBINER_CONTIGUOUS, {count}, {}, {type_ptr(oldtype)}});
}

AUGUR_MPI_FN(int, Type_vector, (int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype),
             (count, blocklength, stride, oldtype, newtype)) {
  TYPE_PROLOGUE("MPI_Type_vector", oldtype, newtype);
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_vector", check_count(count));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_vector", check_count(blocklength));
  return finish_new("MPI_Type_vector", rel::Datatype::Vector(count, blocklength, stride, old.dt), old.elem,
                    static_cast<std::int64_t>(count) * blocklength * old.nelems, newtype,
                    {MPI_COMBINER_VECTOR, {count, blocklength, stride}, {}, {type_ptr(oldtype)}});
}

AUGUR_MPI_FN(int, Type_create_hvector,
             (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype* newtype),
             (count, blocklength, stride, oldtype, newtype)) {
  TYPE_PROLOGUE("MPI_Type_create_hvector", oldtype, newtype);
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_create_hvector", check_count(count));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_create_hvector", check_count(blocklength));
  return finish_new("MPI_Type_create_hvector",
                    rel::Datatype::Hvector(count, blocklength, static_cast<std::int64_t>(stride), old.dt), old.elem,
                    static_cast<std::int64_t>(count) * blocklength * old.nelems, newtype,
                    {MPI_COMBINER_HVECTOR, {count, blocklength}, {stride}, {type_ptr(oldtype)}});
}

AUGUR_MPI_FN(int, Type_indexed,
             (int count, const int blocklengths[], const int displacements[], MPI_Datatype oldtype,
              MPI_Datatype* newtype),
             (count, blocklengths, displacements, oldtype, newtype)) {
  TYPE_PROLOGUE("MPI_Type_indexed", oldtype, newtype);
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_indexed", check_counts(count, blocklengths, displacements));
  auto bl = widen(blocklengths, count);
  return finish_new("MPI_Type_indexed", rel::Datatype::Indexed(bl, widen(displacements, count), old.dt), old.elem,
                    sum(bl) * old.nelems, newtype,
                    {MPI_COMBINER_INDEXED, ints_of({count}, arr(blocklengths, count), arr(displacements, count)), {},
                     {type_ptr(oldtype)}});
}

AUGUR_MPI_FN(int, Type_create_hindexed,
             (int count, const int blocklengths[], const MPI_Aint displacements[], MPI_Datatype oldtype,
              MPI_Datatype* newtype),
             (count, blocklengths, displacements, oldtype, newtype)) {
  TYPE_PROLOGUE("MPI_Type_create_hindexed", oldtype, newtype);
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_create_hindexed", check_counts(count, blocklengths, displacements));
  auto bl = widen(blocklengths, count);
  return finish_new("MPI_Type_create_hindexed", rel::Datatype::Hindexed(bl, widen(displacements, count), old.dt),
                    old.elem, sum(bl) * old.nelems, newtype,
                    {MPI_COMBINER_HINDEXED, ints_of({count}, arr(blocklengths, count)),
                     std::vector<MPI_Aint>(displacements, displacements + count), {type_ptr(oldtype)}});
}

AUGUR_MPI_FN(int, Type_create_indexed_block,
             (int count, int blocklength, const int displacements[], MPI_Datatype oldtype, MPI_Datatype* newtype),
             (count, blocklength, displacements, oldtype, newtype)) {
  TYPE_PROLOGUE("MPI_Type_create_indexed_block", oldtype, newtype);
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_create_indexed_block", check_count(count));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_create_indexed_block", check_count(blocklength));
  if (count > 0 && displacements == nullptr) {
    return raise(MPI_COMM_WORLD, "MPI_Type_create_indexed_block", err(MPI_ERR_ARG, "null displacement array"));
  }
  return finish_new("MPI_Type_create_indexed_block",
                    rel::Datatype::IndexedBlock(blocklength, widen(displacements, count), old.dt), old.elem,
                    static_cast<std::int64_t>(count) * blocklength * old.nelems, newtype,
                    {MPI_COMBINER_INDEXED_BLOCK, ints_of({count, blocklength}, arr(displacements, count)), {},
                     {type_ptr(oldtype)}});
}

AUGUR_MPI_FN(int, Type_create_hindexed_block,
             (int count, int blocklength, const MPI_Aint displacements[], MPI_Datatype oldtype, MPI_Datatype* newtype),
             (count, blocklength, displacements, oldtype, newtype)) {
  TYPE_PROLOGUE("MPI_Type_create_hindexed_block", oldtype, newtype);
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_create_hindexed_block", check_count(count));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_create_hindexed_block", check_count(blocklength));
  if (count > 0 && displacements == nullptr) {
    return raise(MPI_COMM_WORLD, "MPI_Type_create_hindexed_block", err(MPI_ERR_ARG, "null displacement array"));
  }
  std::vector<std::int64_t> bl(static_cast<std::size_t>(count), blocklength);
  return finish_new("MPI_Type_create_hindexed_block", rel::Datatype::Hindexed(bl, widen(displacements, count), old.dt),
                    old.elem, sum(bl) * old.nelems, newtype,
                    {MPI_COMBINER_HINDEXED_BLOCK, {count, blocklength},
                     std::vector<MPI_Aint>(displacements, displacements + count), {type_ptr(oldtype)}});
}

AUGUR_MPI_FN(int, Type_create_subarray,
             (int ndims, const int sizes[], const int subsizes[], const int starts[], int order, MPI_Datatype oldtype,
              MPI_Datatype* newtype),
             (ndims, sizes, subsizes, starts, order, oldtype, newtype)) {
  TYPE_PROLOGUE("MPI_Type_create_subarray", oldtype, newtype);
  if (ndims <= 0 || sizes == nullptr || subsizes == nullptr || starts == nullptr) {
    return raise(MPI_COMM_WORLD, "MPI_Type_create_subarray", err(MPI_ERR_ARG, "bad ndims or null array"));
  }
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) {
    return raise(MPI_COMM_WORLD, "MPI_Type_create_subarray", err(MPI_ERR_ARG, "order must be MPI_ORDER_C or MPI_ORDER_FORTRAN"));
  }
  std::int64_t n = 1;
  for (int i = 0; i < ndims; ++i) {
    if (sizes[i] <= 0 || subsizes[i] < 0 || starts[i] < 0 || starts[i] + subsizes[i] > sizes[i]) {
      return raise(MPI_COMM_WORLD, "MPI_Type_create_subarray",
                   err(MPI_ERR_ARG, "dimension " + std::to_string(i) + ": subarray outside the array"));
    }
    n *= subsizes[i];
  }
  return finish_new("MPI_Type_create_subarray",
                    rel::Datatype::Subarray(widen(sizes, ndims), widen(subsizes, ndims), widen(starts, ndims),
                                            order == MPI_ORDER_C ? rel::ArrayOrder::kC : rel::ArrayOrder::kFortran,
                                            old.dt),
                    old.elem, n * old.nelems, newtype,
                    {MPI_COMBINER_SUBARRAY,
                     ints_of({ndims}, arr(sizes, ndims), arr(subsizes, ndims), arr(starts, ndims), arr(&order, 1)), {},
                     {type_ptr(oldtype)}});
}

namespace {
// The indices of one dimension of a darray that process coordinate `c` of `p` owns, ascending
// (MPI-3.1 4.1.4).
Err darray_dim(int n, int distrib, int darg, int p, int c, std::vector<std::int64_t>* out) {
  out->clear();
  switch (distrib) {
    case MPI_DISTRIBUTE_NONE:
      if (p != 1) return err(MPI_ERR_ARG, "MPI_DISTRIBUTE_NONE over " + std::to_string(p) + " processes (must be 1)");
      for (int i = 0; i < n; ++i) out->push_back(i);
      return ok();
    case MPI_DISTRIBUTE_BLOCK: {
      const std::int64_t blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? (static_cast<std::int64_t>(n) + p - 1) / p : darg;
      if (blk <= 0 || blk * p < n) {
        return err(MPI_ERR_ARG, "block size " + std::to_string(blk) + " x " + std::to_string(p) + " processes does not cover " +
                                    std::to_string(n) + " elements");
      }
      for (std::int64_t i = c * blk; i < std::min<std::int64_t>((c + 1) * blk, n); ++i) out->push_back(i);
      return ok();
    }
    case MPI_DISTRIBUTE_CYCLIC: {
      const std::int64_t blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
      if (blk <= 0) return err(MPI_ERR_ARG, "cyclic block size " + std::to_string(blk));
      for (std::int64_t i = 0; i < n; ++i) {
        if ((i / blk) % p == c) out->push_back(i);
      }
      return ok();
    }
    default: return err(MPI_ERR_ARG, "distribution " + std::to_string(distrib));
  }
}

// The darray's type: per dimension from the fastest, an hindexed of the inner type at each owned
// index (runs of the element type in the fastest one), then the whole array as its extent.
Err darray_type(int size, int rank, int ndims, const int* gsizes, const int* distribs, const int* dargs, const int* psizes,
                int order, const Type& old, rel::Datatype* out, std::int64_t* count) {
  if (ndims <= 0 || gsizes == nullptr || distribs == nullptr || dargs == nullptr || psizes == nullptr) {
    return err(MPI_ERR_ARG, "bad ndims or null array");
  }
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) return err(MPI_ERR_ARG, "order must be MPI_ORDER_C or MPI_ORDER_FORTRAN");
  std::int64_t procs = 1, elems = 1;
  for (int d = 0; d < ndims; ++d) {
    if (gsizes[d] <= 0 || psizes[d] <= 0) return err(MPI_ERR_ARG, "dimension " + std::to_string(d) + ": non-positive size");
    procs *= psizes[d];
    elems *= gsizes[d];
  }
  if (procs != size) return err(MPI_ERR_ARG, "the process grid has " + std::to_string(procs) + " processes, size is " + std::to_string(size));
  if (rank < 0 || rank >= size) return err(MPI_ERR_RANK, "rank " + std::to_string(rank) + " of " + std::to_string(size));
  // The process grid is row-major whatever the array order (as a cartesian topology's).
  std::vector<int> coord(static_cast<std::size_t>(ndims));
  for (int d = ndims - 1, r = rank; d >= 0; --d) {
    coord[static_cast<std::size_t>(d)] = r % psizes[d];
    r /= psizes[d];
  }
  // Dimensions from the fastest: the last in C order, the first in Fortran order.
  std::vector<int> dims(static_cast<std::size_t>(ndims));
  for (int k = 0; k < ndims; ++k) dims[static_cast<std::size_t>(k)] = order == MPI_ORDER_C ? ndims - 1 - k : k;
  rel::Datatype inner = old.dt;
  std::int64_t stride = old.extent, local = 1;
  std::vector<std::int64_t> idx;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const int d = dims[k];
    AUGUR_ERR_RETURN(darray_dim(gsizes[d], distribs[d], dargs[d], psizes[d], coord[static_cast<std::size_t>(d)], &idx));
    local *= static_cast<std::int64_t>(idx.size());
    std::vector<std::int64_t> bl, disp;
    for (std::int64_t i : idx) {
      if (k == 0 && !disp.empty() && disp.back() / stride + bl.back() == i) {
        ++bl.back();  // consecutive elements of the fastest dimension: one block
      } else {
        bl.push_back(1);
        disp.push_back(i * stride);
      }
    }
    auto next = rel::Datatype::Hindexed(bl, disp, inner);
    if (!next.ok()) return err(MPI_ERR_ARG, next.status().to_string());
    inner = std::move(next.value());
    stride *= gsizes[d];
  }
  auto whole = rel::Datatype::Resized(inner, 0, elems * old.extent);
  if (!whole.ok()) return err(MPI_ERR_ARG, whole.status().to_string());
  *out = std::move(whole.value());
  *count = local;
  return ok();
}
}  // namespace

AUGUR_MPI_FN(int, Type_create_darray,
             (int size, int rank, int ndims, const int gsizes[], const int distribs[], const int dargs[], const int psizes[],
              int order, MPI_Datatype oldtype, MPI_Datatype* newtype),
             (size, rank, ndims, gsizes, distribs, dargs, psizes, order, oldtype, newtype)) {
  const char* fn = "MPI_Type_create_darray";
  TYPE_PROLOGUE(fn, oldtype, newtype);
  rel::Datatype dt = old.dt;
  std::int64_t n = 0;
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, darray_type(size, rank, ndims, gsizes, distribs, dargs, psizes, order, old, &dt, &n));
  return finish_new(fn, std::move(dt), old.elem, n * old.nelems, newtype,
                    {MPI_COMBINER_DARRAY,
                     ints_of({size, rank, ndims}, arr(gsizes, ndims), arr(distribs, ndims), arr(dargs, ndims),
                             arr(psizes, ndims), arr(&order, 1)),
                     {},
                     {type_ptr(oldtype)}});
}

AUGUR_MPI_FN(int, Type_create_struct,
             (int count, const int blocklengths[], const MPI_Aint displacements[], const MPI_Datatype types[],
              MPI_Datatype* newtype),
             (count, blocklengths, displacements, types, newtype)) {
  const char* fn = "MPI_Type_create_struct";
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_running());
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_counts(count, blocklengths, displacements));
  if (newtype == nullptr || (count > 0 && types == nullptr)) {
    return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_ARG, "null argument"));
  }
  std::vector<rel::Datatype> parts;
  Elem elem = Elem::kMixed;
  std::int64_t nelems = 0;
  for (int i = 0; i < count; ++i) {
    AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_type(types[i], false));
    const Type& t = *type_of(types[i]);
    parts.push_back(t.dt);
    elem = i == 0 ? t.elem : combine(elem, t.elem);
    nelems += static_cast<std::int64_t>(blocklengths[i]) * t.nelems;
  }
  Type::Envelope env{MPI_COMBINER_STRUCT, ints_of({count}, arr(blocklengths, count)),
                     std::vector<MPI_Aint>(displacements, displacements + count), {}};
  for (int i = 0; i < count; ++i) env.types.push_back(type_ptr(types[i]));
  return finish_new(fn, rel::Datatype::Struct(widen(blocklengths, count), widen(displacements, count), parts), elem,
                    nelems, newtype, std::move(env));
}

AUGUR_MPI_FN(int, Type_create_resized, (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* newtype),
             (oldtype, lb, extent, newtype)) {
  TYPE_PROLOGUE("MPI_Type_create_resized", oldtype, newtype);
  return finish_new("MPI_Type_create_resized",
                    rel::Datatype::Resized(old.dt, static_cast<std::int64_t>(lb), static_cast<std::int64_t>(extent)),
                    old.elem, old.nelems, newtype, {MPI_COMBINER_RESIZED, {}, {lb, extent}, {type_ptr(oldtype)}});
}

AUGUR_MPI_FN(int, Type_dup, (MPI_Datatype oldtype, MPI_Datatype* newtype), (oldtype, newtype)) {
  TYPE_PROLOGUE("MPI_Type_dup", oldtype, newtype);
  auto t = std::make_shared<Type>(old);
  t->predefined = false;
  t->env = {MPI_COMBINER_DUP, {}, {}, {type_ptr(oldtype)}};
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_dup", copy_attrs(Keyval::Kind::kType, oldtype, old.attrs, &t->attrs));
  *newtype = new_type(std::move(t));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Type_get_envelope,
             (MPI_Datatype datatype, int* num_integers, int* num_addresses, int* num_datatypes, int* combiner),
             (datatype, num_integers, num_addresses, num_datatypes, combiner)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_get_envelope", check_running());
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_get_envelope", check_type(datatype, false));
  if (num_integers == nullptr || num_addresses == nullptr || num_datatypes == nullptr || combiner == nullptr) {
    return raise(MPI_COMM_WORLD, "MPI_Type_get_envelope", err(MPI_ERR_ARG, "null argument"));
  }
  const Type& t = *type_of(datatype);
  const bool named = t.predefined;  // a dup of a predefined type is a DUP, not NAMED
  *combiner = named ? MPI_COMBINER_NAMED : t.env.combiner;
  *num_integers = named ? 0 : static_cast<int>(t.env.ints.size());
  *num_addresses = named ? 0 : static_cast<int>(t.env.aints.size());
  *num_datatypes = named ? 0 : static_cast<int>(t.env.types.size());
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Type_get_contents,
             (MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes, int array_of_integers[],
              MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]),
             (datatype, max_integers, max_addresses, max_datatypes, array_of_integers, array_of_addresses,
              array_of_datatypes)) {
  const char* fn = "MPI_Type_get_contents";
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_running());
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_type(datatype, false));
  const Type& t = *type_of(datatype);
  if (t.predefined) return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_TYPE, "a predefined datatype has no contents"));
  const Type::Envelope& e = t.env;
  if (max_integers < static_cast<int>(e.ints.size()) || max_addresses < static_cast<int>(e.aints.size()) ||
      max_datatypes < static_cast<int>(e.types.size())) {
    return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_ARG, "the arrays are shorter than MPI_Type_get_envelope says"));
  }
  if ((!e.ints.empty() && array_of_integers == nullptr) || (!e.aints.empty() && array_of_addresses == nullptr) ||
      (!e.types.empty() && array_of_datatypes == nullptr)) {
    return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_ARG, "null array"));
  }
  std::copy(e.ints.begin(), e.ints.end(), array_of_integers);
  std::copy(e.aints.begin(), e.aints.end(), array_of_addresses);
  // Predefined types come back as themselves; derived ones as new handles to the same type,
  // which the caller frees (MPI-3.1 4.1.13).
  for (std::size_t i = 0; i < e.types.size(); ++i) {
    const TypePtr& sub = e.types[i];
    MPI_Datatype h = MPI_DATATYPE_NULL;
    if (sub->predefined) {
      for (std::size_t k = 1; k < S().types.size() && h == MPI_DATATYPE_NULL; ++k) {
        if (S().types[k] == sub) h = static_cast<MPI_Datatype>(k);
      }
    }
    array_of_datatypes[i] = h != MPI_DATATYPE_NULL ? h : new_type(sub);
  }
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Type_commit, (MPI_Datatype * datatype), (datatype)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_commit", check_running());
  if (datatype == nullptr) return raise(MPI_COMM_WORLD, "MPI_Type_commit", err(MPI_ERR_ARG, "null argument"));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_commit", check_type(*datatype, false));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_commit", type_of(*datatype)->prepare());
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Type_free, (MPI_Datatype * datatype), (datatype)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_free", check_running());
  if (datatype == nullptr) return raise(MPI_COMM_WORLD, "MPI_Type_free", err(MPI_ERR_ARG, "null argument"));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_free", check_type(*datatype, false));
  if (type_of(*datatype)->predefined) {
    return raise(MPI_COMM_WORLD, "MPI_Type_free", err(MPI_ERR_TYPE, "cannot free a predefined datatype"));
  }
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_free", delete_attrs(Keyval::Kind::kType, *datatype, &type_of(*datatype)->attrs));
  // Pending requests hold their own reference to the type.
  free_type_handle(*datatype);
  *datatype = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Type_size_x, (MPI_Datatype datatype, MPI_Count* size), (datatype, size)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_size", check_running());
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_size", check_type(datatype, false));
  if (size == nullptr) return raise(MPI_COMM_WORLD, "MPI_Type_size", err(MPI_ERR_ARG, "null argument"));
  *size = type_of(datatype)->size;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Type_size, (MPI_Datatype datatype, int* size), (datatype, size)) {
  MPI_Count n = 0;
  const int rc = PMPI_Type_size_x(datatype, &n);
  if (rc != MPI_SUCCESS) return rc;
  if (size == nullptr) return raise(MPI_COMM_WORLD, "MPI_Type_size", err(MPI_ERR_ARG, "null argument"));
  *size = n > std::numeric_limits<int>::max() ? MPI_UNDEFINED : static_cast<int>(n);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Type_get_extent, (MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent), (datatype, lb, extent)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_get_extent", check_running());
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_get_extent", check_type(datatype, false));
  if (lb == nullptr || extent == nullptr) {
    return raise(MPI_COMM_WORLD, "MPI_Type_get_extent", err(MPI_ERR_ARG, "null argument"));
  }
  *lb = static_cast<MPI_Aint>(type_of(datatype)->lb);
  *extent = static_cast<MPI_Aint>(type_of(datatype)->extent);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Type_extent, (MPI_Datatype datatype, MPI_Aint* extent), (datatype, extent)) {
  MPI_Aint lb = 0;
  return PMPI_Type_get_extent(datatype, &lb, extent);
}

// MPI-1 names, removed in MPI-3.0 and still called by older programs and test suites.
AUGUR_MPI_FN(int, Type_lb, (MPI_Datatype datatype, MPI_Aint* displacement), (datatype, displacement)) {
  MPI_Aint extent = 0;
  return PMPI_Type_get_extent(datatype, displacement, &extent);
}

AUGUR_MPI_FN(int, Type_ub, (MPI_Datatype datatype, MPI_Aint* displacement), (datatype, displacement)) {
  MPI_Aint lb = 0, extent = 0;
  const int rc = PMPI_Type_get_extent(datatype, &lb, &extent);
  if (rc == MPI_SUCCESS && displacement != nullptr) *displacement = lb + extent;
  return rc;
}

AUGUR_MPI_FN(int, Type_hvector, (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype* newtype),
             (count, blocklength, stride, oldtype, newtype)) {
  return PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}

AUGUR_MPI_FN(int, Type_hindexed,
             (int count, int blocklengths[], MPI_Aint displacements[], MPI_Datatype oldtype, MPI_Datatype* newtype),
             (count, blocklengths, displacements, oldtype, newtype)) {
  return PMPI_Type_create_hindexed(count, blocklengths, displacements, oldtype, newtype);
}

AUGUR_MPI_FN(int, Type_struct,
             (int count, int blocklengths[], MPI_Aint displacements[], MPI_Datatype types[], MPI_Datatype* newtype),
             (count, blocklengths, displacements, types, newtype)) {
  return PMPI_Type_create_struct(count, blocklengths, displacements, types, newtype);
}

AUGUR_MPI_FN(int, Type_set_name, (MPI_Datatype datatype, const char* name), (datatype, name)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_set_name", check_running());
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_set_name", check_type(datatype, false));
  if (name == nullptr) return raise(MPI_COMM_WORLD, "MPI_Type_set_name", err(MPI_ERR_ARG, "null name"));
  type_of(datatype)->name.assign(name, strnlen(name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Type_get_name, (MPI_Datatype datatype, char* name, int* resultlen), (datatype, name, resultlen)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_get_name", check_running());
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_get_name", check_type(datatype, false));
  if (name == nullptr || resultlen == nullptr) return raise(MPI_COMM_WORLD, "MPI_Type_get_name", err(MPI_ERR_ARG, "null argument"));
  const std::string& n = type_of(datatype)->name;
  std::memcpy(name, n.c_str(), n.size() + 1);
  *resultlen = static_cast<int>(n.size());
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Type_get_true_extent, (MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent),
             (datatype, true_lb, true_extent)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_get_true_extent", check_running());
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_get_true_extent", check_type(datatype, false));
  if (true_lb == nullptr || true_extent == nullptr) {
    return raise(MPI_COMM_WORLD, "MPI_Type_get_true_extent", err(MPI_ERR_ARG, "null argument"));
  }
  *true_lb = static_cast<MPI_Aint>(type_of(datatype)->true_lb);
  *true_extent = static_cast<MPI_Aint>(type_of(datatype)->true_extent);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Pack,
             (const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize, int* position,
              MPI_Comm comm),
             (inbuf, incount, datatype, outbuf, outsize, position, comm)) {
  const char* fn = "MPI_Pack";
  AUGUR_MPI_CHECK(comm, fn, check_running());
  AUGUR_MPI_CHECK(comm, fn, check_comm(comm));
  AUGUR_MPI_CHECK(comm, fn, check_type(datatype));
  AUGUR_MPI_CHECK(comm, fn, check_count(incount));
  const Type& t = *type_of(datatype);
  AUGUR_MPI_CHECK(comm, fn, check_bytes(incount, t));
  AUGUR_MPI_CHECK(comm, fn, check_buf(inbuf, incount, t));
  if (position == nullptr || *position < 0 || (outbuf == nullptr && outsize > 0)) {
    return raise(comm, fn, err(MPI_ERR_ARG, "bad position or output buffer"));
  }
  const std::int64_t n = incount * t.size;
  if (*position + n > outsize) {
    return raise(comm, fn, err(MPI_ERR_TRUNCATE, "packing " + std::to_string(n) + " bytes at " +
                                                     std::to_string(*position) + " overflows " + std::to_string(outsize)));
  }
  AUGUR_MPI_CHECK(comm, fn, pack(inbuf, incount, t, static_cast<std::byte*>(outbuf) + *position));
  *position += static_cast<int>(n);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Unpack,
             (const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype datatype,
              MPI_Comm comm),
             (inbuf, insize, position, outbuf, outcount, datatype, comm)) {
  const char* fn = "MPI_Unpack";
  AUGUR_MPI_CHECK(comm, fn, check_running());
  AUGUR_MPI_CHECK(comm, fn, check_comm(comm));
  AUGUR_MPI_CHECK(comm, fn, check_type(datatype));
  AUGUR_MPI_CHECK(comm, fn, check_count(outcount));
  const Type& t = *type_of(datatype);
  AUGUR_MPI_CHECK(comm, fn, check_bytes(outcount, t));
  AUGUR_MPI_CHECK(comm, fn, check_buf(outbuf, outcount, t));
  if (position == nullptr || *position < 0 || (inbuf == nullptr && insize > 0)) {
    return raise(comm, fn, err(MPI_ERR_ARG, "bad position or input buffer"));
  }
  const std::int64_t n = outcount * t.size;
  if (*position + n > insize) {
    return raise(comm, fn, err(MPI_ERR_TRUNCATE, "unpacking " + std::to_string(n) + " bytes at " +
                                                     std::to_string(*position) + " reads past " + std::to_string(insize)));
  }
  AUGUR_MPI_CHECK(comm, fn, unpack(static_cast<const std::byte*>(inbuf) + *position, static_cast<std::size_t>(n), outbuf, outcount, t));
  *position += static_cast<int>(n);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Pack_size, (int incount, MPI_Datatype datatype, MPI_Comm comm, int* size),
             (incount, datatype, comm, size)) {
  AUGUR_MPI_CHECK(comm, "MPI_Pack_size", check_running());
  AUGUR_MPI_CHECK(comm, "MPI_Pack_size", check_comm(comm));
  AUGUR_MPI_CHECK(comm, "MPI_Pack_size", check_type(datatype, false));
  AUGUR_MPI_CHECK(comm, "MPI_Pack_size", check_count(incount));
  if (size == nullptr) return raise(comm, "MPI_Pack_size", err(MPI_ERR_ARG, "null argument"));
  const std::int64_t tsize = type_of(datatype)->size;
  // An int cannot say it: refuse, never wrap (size first, so that the product cannot overflow).
  if (incount > 0 && (tsize > INT_MAX || static_cast<std::int64_t>(incount) * tsize > INT_MAX)) {
    return raise(comm, "MPI_Pack_size", err(MPI_ERR_COUNT, std::to_string(incount) + " copies of a datatype of " +
                                                               std::to_string(tsize) +
                                                               " bytes need more than 2^31 - 1 bytes packed"));
  }
  *size = static_cast<int>(static_cast<std::int64_t>(incount) * tsize);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Get_address, (const void* location, MPI_Aint* address), (location, address)) {
  if (address == nullptr) return raise(MPI_COMM_WORLD, "MPI_Get_address", err(MPI_ERR_ARG, "null argument"));
  *address = reinterpret_cast<MPI_Aint>(location);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Address, (void* location, MPI_Aint* address), (location, address)) {
  return PMPI_Get_address(location, address);
}
