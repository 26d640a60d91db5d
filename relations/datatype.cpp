#include "augur/relations/datatype.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <utility>

namespace augur::relations {

// Every constructor is "blocks of copies of a type at byte displacements" (kBlocks) or a
// base element or a resize; the MPI bounds are computed once, at construction.
struct Datatype::Node {
  enum class Kind : std::uint8_t { kBase, kBlocks, kResized };
  Kind kind = Kind::kBase;
  std::vector<std::int64_t> blocklens;  // kBlocks
  std::vector<std::int64_t> displs;     // kBlocks: bytes
  std::vector<Datatype> types;          // kBlocks: one per block, or one for all; kResized: child
  std::int64_t size = 0;
  std::int64_t lb = 0, ub = 0;    // with resize markers
  std::int64_t tlb = 0, tub = 0;  // data only
  std::int64_t align = 1;
  bool has_data = false;  // at least one byte in the type map
  bool contiguous = false;  // one copy flattens to exactly one run
  bool resized = false;     // explicit bounds somewhere inside (structs then skip padding)
};

namespace {

using Node = Datatype::Node;
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

Status Overflow(const char* what) {
  return Status(Code::kOutOfRange, std::string("datatype: ") + what + " overflows 64 bits");
}

bool Mul(std::int64_t a, std::int64_t b, std::int64_t& out) { return !__builtin_mul_overflow(a, b, &out); }
bool Add(std::int64_t a, std::int64_t b, std::int64_t& out) { return !__builtin_add_overflow(a, b, &out); }

Status NonNegative(std::int64_t v, const char* what) {
  if (v < 0) {
    return Status(Code::kInvalidArgument,
                  std::string("datatype: negative ") + what + " (" + std::to_string(v) + ")");
  }
  return Status::Ok();
}

}  // namespace

std::int64_t Datatype::size() const noexcept { return node_->size; }
std::int64_t Datatype::lb() const noexcept { return node_->lb; }
std::int64_t Datatype::ub() const noexcept { return node_->ub; }
std::int64_t Datatype::true_lb() const noexcept { return node_->tlb; }
std::int64_t Datatype::true_extent() const noexcept { return node_->tub - node_->tlb; }
std::int64_t Datatype::alignment() const noexcept { return node_->align; }

Result<Datatype> Datatype::Base(std::int64_t size, std::int64_t alignment) {
  if (size <= 0) return Status(Code::kInvalidArgument, "datatype: base size must be positive");
  AUGUR_RETURN_IF_ERROR(NonNegative(alignment, "alignment"));
  auto n = std::make_shared<Node>();
  n->size = size;
  n->ub = n->tub = size;
  if (alignment == 0) {
    alignment = (size == 1 || size == 2 || size == 4 || size == 8 || size == 16) ? size : 1;
  }
  n->align = alignment;
  n->has_data = true;
  n->contiguous = true;
  return Datatype(std::move(n));
}

namespace {

// Bounds of blocks: block i is blocklens[i] copies of type(i) at displs[i] + j * extent.
Result<std::shared_ptr<Node>> MakeBlocks(std::vector<std::int64_t> blocklens,
                                         std::vector<std::int64_t> displs,
                                         std::vector<Datatype> types, bool pad) {
  auto n = std::make_shared<Node>();
  n->kind = Node::Kind::kBlocks;
  bool first = true;
  std::int64_t next = 0;  // where the previous block's data ended, for contiguity
  n->contiguous = true;
  for (std::size_t i = 0; i < blocklens.size(); ++i) {
    const Datatype& t = types[types.size() == 1 ? 0 : i];
    const std::int64_t b = blocklens[i];
    AUGUR_RETURN_IF_ERROR(NonNegative(b, "block length"));
    n->align = std::max(n->align, t.alignment());
    n->resized = n->resized || t.node_for_bounds().resized;
    if (b == 0) continue;
    std::int64_t size = 0, span = 0, lo = 0, hi = 0, tlo = 0, thi = 0;
    if (!Mul(b, t.size(), size) || !Add(n->size, size, n->size)) return Overflow("size");
    if (!Mul(b - 1, t.extent(), span)) return Overflow("extent");
    const std::int64_t last = span;  // displacement of the last copy relative to the first
    if (!Add(displs[i], std::min<std::int64_t>(0, last), lo) ||
        !Add(displs[i], std::max<std::int64_t>(0, last), hi) || !Add(lo, t.lb(), lo) ||
        !Add(hi, t.ub(), hi) || !Add(displs[i] + std::min<std::int64_t>(0, last), t.true_lb(), tlo) ||
        !Add(displs[i] + std::max<std::int64_t>(0, last), t.true_lb() + t.true_extent(), thi)) {
      return Overflow("bounds");
    }
    n->lb = first ? lo : std::min(n->lb, lo);
    n->ub = first ? hi : std::max(n->ub, hi);
    if (t.node_for_bounds().has_data) {
      n->tlb = n->has_data ? std::min(n->tlb, tlo) : tlo;
      n->tub = n->has_data ? std::max(n->tub, thi) : thi;
      // Contiguous when each block is back-to-back copies of a contiguous type and blocks abut.
      const bool dense = t.node_for_bounds().contiguous && (b == 1 || t.extent() == t.size());
      const std::int64_t start = displs[i] + t.true_lb();
      if (!dense || (n->has_data && start != next)) n->contiguous = false;
      next = start + size;
      n->has_data = true;
    }
    first = false;
  }
  if (!n->has_data) n->contiguous = false;
  if (pad && !n->resized && n->align > 1) {
    // MPI's epsilon: round the extent up to a multiple of the largest alignment (structs).
    const std::int64_t ext = n->ub - n->lb;
    const std::int64_t rem = ext % n->align;
    if (rem != 0 && !Add(n->ub, n->align - rem, n->ub)) return Overflow("extent");
  }
  n->blocklens = std::move(blocklens);
  n->displs = std::move(displs);
  n->types = std::move(types);
  return n;
}

std::vector<std::int64_t> Repeat(std::int64_t v, std::size_t n) { return std::vector<std::int64_t>(n, v); }

}  // namespace

const Datatype::Node& Datatype::node_for_bounds() const noexcept { return *node_; }

Result<Datatype> Datatype::Hindexed(std::span<const std::int64_t> blocklens,
                                    std::span<const std::int64_t> displs_bytes, const Datatype& old) {
  if (blocklens.size() != displs_bytes.size()) {
    return Status(Code::kInvalidArgument, "datatype: block lengths and displacements differ in count");
  }
  AUGUR_ASSIGN_OR_RETURN(std::shared_ptr<Node> n,
                         MakeBlocks({blocklens.begin(), blocklens.end()},
                                    {displs_bytes.begin(), displs_bytes.end()}, {old}, false));
  return Datatype(std::move(n));
}

Result<Datatype> Datatype::Indexed(std::span<const std::int64_t> blocklens,
                                   std::span<const std::int64_t> displs, const Datatype& old) {
  std::vector<std::int64_t> bytes(displs.size());
  for (std::size_t i = 0; i < displs.size(); ++i) {
    if (!Mul(displs[i], old.extent(), bytes[i])) return Overflow("displacement");
  }
  return Hindexed(blocklens, bytes, old);
}

Result<Datatype> Datatype::IndexedBlock(std::int64_t blocklen, std::span<const std::int64_t> displs,
                                        const Datatype& old) {
  return Indexed(Repeat(blocklen, displs.size()), displs, old);
}

Result<Datatype> Datatype::Hvector(std::int64_t count, std::int64_t blocklen,
                                   std::int64_t stride_bytes, const Datatype& old) {
  AUGUR_RETURN_IF_ERROR(NonNegative(count, "count"));
  AUGUR_RETURN_IF_ERROR(NonNegative(blocklen, "block length"));
  std::vector<std::int64_t> displs(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    if (!Mul(i, stride_bytes, displs[static_cast<std::size_t>(i)])) return Overflow("stride");
  }
  return Hindexed(Repeat(blocklen, displs.size()), displs, old);
}

Result<Datatype> Datatype::Vector(std::int64_t count, std::int64_t blocklen, std::int64_t stride,
                                  const Datatype& old) {
  std::int64_t bytes = 0;
  if (!Mul(stride, old.extent(), bytes)) return Overflow("stride");
  return Hvector(count, blocklen, bytes, old);
}

Result<Datatype> Datatype::Contiguous(std::int64_t count, const Datatype& old) {
  AUGUR_RETURN_IF_ERROR(NonNegative(count, "count"));
  const std::int64_t one[] = {count};
  const std::int64_t zero[] = {0};
  return Hindexed(one, zero, old);
}

Result<Datatype> Datatype::Struct(std::span<const std::int64_t> blocklens,
                                  std::span<const std::int64_t> displs_bytes,
                                  std::span<const Datatype> types) {
  if (blocklens.size() != displs_bytes.size() || blocklens.size() != types.size()) {
    return Status(Code::kInvalidArgument, "datatype: struct arrays differ in count");
  }
  AUGUR_ASSIGN_OR_RETURN(std::shared_ptr<Node> n,
                         MakeBlocks({blocklens.begin(), blocklens.end()},
                                    {displs_bytes.begin(), displs_bytes.end()},
                                    {types.begin(), types.end()}, true));
  return Datatype(std::move(n));
}

Result<Datatype> Datatype::Resized(const Datatype& old, std::int64_t lb, std::int64_t extent) {
  auto n = std::make_shared<Node>(*old.node_);
  n->kind = Node::Kind::kResized;
  n->blocklens.clear();
  n->displs.clear();
  n->types = {old};
  n->lb = lb;
  if (!Add(lb, extent, n->ub)) return Overflow("lb + extent");
  n->resized = true;
  return Datatype(std::move(n));
}

Result<Datatype> Datatype::Subarray(std::span<const std::int64_t> sizes,
                                    std::span<const std::int64_t> subsizes,
                                    std::span<const std::int64_t> starts, ArrayOrder order,
                                    const Datatype& old) {
  const std::size_t nd = sizes.size();
  if (nd == 0 || subsizes.size() != nd || starts.size() != nd) {
    return Status(Code::kInvalidArgument, "datatype: subarray needs equal, non-empty arrays");
  }
  for (std::size_t k = 0; k < nd; ++k) {
    if (sizes[k] < 1 || subsizes[k] < 1 || starts[k] < 0 || subsizes[k] > sizes[k] ||
        starts[k] > sizes[k] - subsizes[k]) {
      return Status(Code::kInvalidArgument, "datatype: subarray dimension " + std::to_string(k) +
                                                " out of range");
    }
  }
  // Dimensions from fastest to slowest; as MPICH builds it: nested hvectors, shifted to the
  // start, resized to the whole array.
  std::vector<std::size_t> dims(nd);
  for (std::size_t k = 0; k < nd; ++k) dims[k] = order == ArrayOrder::kC ? nd - 1 - k : k;
  AUGUR_ASSIGN_OR_RETURN(Datatype t, Contiguous(subsizes[dims[0]], old));
  std::int64_t stride = old.extent();
  std::int64_t offset = 0;
  for (std::size_t k = 0; k < nd; ++k) {
    std::int64_t shift = 0;
    if (!Mul(starts[dims[k]], stride, shift) || !Add(offset, shift, offset)) return Overflow("offset");
    if (k > 0) {
      AUGUR_ASSIGN_OR_RETURN(t, Hvector(subsizes[dims[k]], 1, stride, t));
    }
    if (!Mul(stride, sizes[dims[k]], stride)) return Overflow("array size");
  }
  const std::int64_t one[] = {1};
  const std::int64_t at[] = {offset};
  AUGUR_ASSIGN_OR_RETURN(t, Hindexed(one, at, t));
  return Resized(t, 0, stride);
}

namespace {

class Flattener {
 public:
  explicit Flattener(std::size_t max_runs) : max_(max_runs) {}

  Status Emit(const Datatype& t, std::int64_t disp) {
    const Node& n = t.node_for_bounds();
    if (n.kind == Node::Kind::kBase) return Push(disp, n.size);
    if (n.kind == Node::Kind::kResized) return Emit(n.types[0], disp);
    for (std::size_t i = 0; i < n.blocklens.size(); ++i) {
      const Datatype& c = n.types[n.types.size() == 1 ? 0 : i];
      const Node& cn = c.node_for_bounds();
      const std::int64_t b = n.blocklens[i];
      if (b == 0 || !cn.has_data) continue;
      const std::int64_t at = disp + n.displs[i];
      if (cn.contiguous && (b == 1 || c.extent() == c.size())) {
        AUGUR_RETURN_IF_ERROR(Push(at + cn.tlb, b * cn.size));
        continue;
      }
      for (std::int64_t j = 0; j < b; ++j) AUGUR_RETURN_IF_ERROR(Emit(c, at + j * c.extent()));
    }
    return Status::Ok();
  }
  Status Push(std::int64_t off, std::int64_t len) {
    if (!runs_.empty() && runs_.back().offset + runs_.back().length == off) {
      runs_.back().length += len;
      return Status::Ok();
    }
    if (runs_.size() == max_) {
      return Status(Code::kResourceExhausted, "datatype: type map has more than " +
                                                  std::to_string(max_) + " runs");
    }
    runs_.push_back(ByteRun{off, len});
    return Status::Ok();
  }
  std::vector<ByteRun> Take() { return std::move(runs_); }

 private:
  std::size_t max_;
  std::vector<ByteRun> runs_;
};

constexpr std::uint64_t kMaxTuples = std::uint64_t{1} << 27;

Result<TypedRelation> TypedRelationOf(const Datatype& type, std::int64_t count, bool pack) {
  AUGUR_ASSIGN_OR_RETURN(std::vector<ByteRun> runs, type.Flatten(count));
  TypedRelation out;
  if (runs.empty()) {
    AUGUR_ASSIGN_OR_RETURN(out.relation, Relation::Make({}, 0, 0, 1));
    return out;
  }
  std::int64_t lo = runs[0].offset, hi = runs[0].offset + runs[0].length;
  for (const ByteRun& r : runs) {
    lo = std::min(lo, r.offset);
    hi = std::max(hi, r.offset + r.length);
  }
  // Elements as large as every run allows: doubles stay doubles.
  std::int64_t g = 0;
  for (const ByteRun& r : runs) g = std::gcd(g, std::gcd(r.offset - lo, r.length));
  std::uint64_t total = 0;
  for (const ByteRun& r : runs) total += static_cast<std::uint64_t>(r.length / g);
  if (total > kMaxTuples) {
    return Status(Code::kResourceExhausted, "datatype: relation of " + std::to_string(total) +
                                                " elements is too large; use a coarser type");
  }
  std::vector<Tuple> t;
  t.reserve(total);
  std::uint64_t pos = 0;
  for (const ByteRun& r : runs) {
    const auto first = static_cast<std::uint64_t>((r.offset - lo) / g);
    for (std::uint64_t k = 0; k < static_cast<std::uint64_t>(r.length / g); ++k, ++pos) {
      t.push_back(pack ? Tuple{first + k, pos} : Tuple{pos, first + k});
    }
  }
  const auto typed = static_cast<std::uint64_t>((hi - lo) / g);
  const auto es = static_cast<std::size_t>(g);
  if (pack) {
    AUGUR_ASSIGN_OR_RETURN(out.relation, Relation::Make(std::move(t), typed, pos, es, Order::kDestinationFirst));
  } else {
    Result<Relation> r = Relation::Make(std::move(t), pos, typed, es, Order::kSourceFirst);
    if (!r.ok()) return r.status().context("unpack into a type map that overlaps itself");
    out.relation = std::move(r).value();
  }
  out.base_bytes = lo;
  return out;
}

}  // namespace

Result<std::vector<ByteRun>> Datatype::Flatten(std::int64_t count, std::size_t max_runs) const {
  AUGUR_RETURN_IF_ERROR(NonNegative(count, "count"));
  std::int64_t span = 0;
  if (count > 0 && (!Mul(count - 1, extent(), span) || !Add(span, ub(), span))) {
    return Overflow("count * extent");
  }
  Flattener f(max_runs);
  for (std::int64_t k = 0; k < count && node_->has_data; ++k) {
    AUGUR_RETURN_IF_ERROR(f.Emit(*this, k * extent()));
  }
  return f.Take();
}

Result<TypedRelation> PackRelation(const Datatype& type, std::int64_t count) {
  return TypedRelationOf(type, count, true);
}
Result<TypedRelation> UnpackRelation(const Datatype& type, std::int64_t count) {
  return TypedRelationOf(type, count, false);
}

}  // namespace augur::relations
